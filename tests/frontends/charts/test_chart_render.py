"""Issue 26 item 4: the spec rendered by vl-convert (the `charts` extra) — the SVG is valid XML
holding the title, both axis titles and one line mark per series; the PNG decodes, has the
spec's size at twice the scale and is not blank; `.html` opens offline (scripts inlined)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dosi import Engine
from dosi.frontends.charts.spec import chart_spec
from dosi.frontends.charts.write import write_chart

render = pytest.importorskip("dosi.frontends.charts.render", exc_type=ImportError)
SVG = "{http://www.w3.org/2000/svg}"
Q = {
    "metrics": ["revenue", "order_count"],
    "group_by": ["orders.channel", "metric_time:quarter"],
    "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
}


@pytest.fixture(scope="module")
def result(engine: Engine, shop_db: Path) -> Any:
    return engine.execute(Q, db_path=shop_db)


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_svg_has_titles_axes_and_a_line_per_series(result: Any) -> None:
    spec = chart_spec(result, descriptions={"revenue": "Gross revenue."})
    svg = render.to_svg(spec)
    texts = _texts(svg)
    assert "revenue, order_count by quarter per channel" in texts
    assert "revenue: Gross revenue." in texts  # the subtitle
    assert {"revenue", "order_count", "metric_time (quarter)", "channel"} <= set(texts)
    assert {"2024 Q1", "2024 Q4"} <= set(texts)  # the grain's tick labels
    root = ET.fromstring(svg)
    lines = [g for g in root.iter(f"{SVG}g") if "mark-line" in (g.get("class") or "")]
    assert len(lines) == 2 * 4  # two rows (metrics) of four channels


def test_png_is_the_spec_at_twice_the_size_and_not_blank(result: Any, tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    png = tmp_path / "chart.png"
    write_chart(result, png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = image.open(io.BytesIO(data)).convert("RGB")
    width, height = img.size
    assert width > 2 * 640 and height > 2 * 2 * 170  # two rows of the small multiples
    colours = img.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50  # lines, text and antialiasing, not a blank page
    white = max(colours)[1]
    assert white == (255, 255, 255)  # the background, as the page shows it


def test_html_and_json_chart_files(result: Any, tmp_path: Path) -> None:
    html = write_chart(result, tmp_path / "c.html").read_text()
    assert "<script" in html and "vegaEmbed" in html and "https://cdn" not in html
    spec = write_chart(result, tmp_path / "c.json").read_text()
    assert '"vconcat"' in spec
    with pytest.raises(ValueError, match=r"must end in \.svg, \.png, \.html, \.json"):
        write_chart(result, tmp_path / "c.jpg")
