"""Issue 26 items 4 and 5 over REST, on a real `dosi serve`: `/v1/chart` (the one Vega-Lite
spec, or SVG/PNG rendered by vl-convert), `/v1/query?chart=true&pretty=true` (the spec, number
formats and pretty SQL for the explorer), Parquet results, and the page's vendored scripts."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
from servekit import Server

from dosi import Engine

Q = {
    "metrics": ["revenue", "order_count"],
    "group_by": ["orders.channel", "metric_time:quarter"],
    "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
}


def _post(server: Server, path: str, body: Any, **kw: Any) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=60, **kw)


def test_chart_spec_is_the_one_the_cli_writes(
    server: Server, engine: Engine, shop_db: Path
) -> None:
    r = _post(server, "/v1/chart", Q)
    assert r.status_code == 200, r.text
    spec = r.json()
    meta = spec["usermeta"]["dosi"]
    assert (meta["kind"], meta["layout"], meta["series_field"]) == ("line", "rows", "channel")
    assert [c["encoding"]["y"]["field"] for c in spec["vconcat"]] == ["revenue", "order_count"]
    assert spec["title"]["subtitle"] == [
        f"{m}: {engine.metric(m)['description']}" for m in ("revenue", "order_count")
    ]
    rows = engine.execute(Q, db_path=shop_db)["rows"]
    assert len(spec["data"]["values"]) == len(rows) == 16


def test_chart_rendered_as_svg_and_png(server: Server) -> None:
    pytest.importorskip("vl_convert")
    svg = _post(server, "/v1/chart?format=svg", Q)
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    texts = [t.text for t in ET.fromstring(svg.text).iter("{http://www.w3.org/2000/svg}text")]
    assert "revenue, order_count by quarter per channel" in texts
    png = _post(server, "/v1/chart?format=png", Q)
    assert png.headers["content-type"] == "image/png"
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_chart_errors_are_structured(server: Server) -> None:
    bad = _post(server, "/v1/chart?format=gif", Q)
    assert bad.status_code == 400 and bad.json()["code"] == "unsupported_format"
    assert bad.json()["candidates"] == ["vega-lite", "svg", "png"]
    empty = _post(server, "/v1/chart", {"group_by": ["orders.channel"]})
    assert empty.status_code == 400 and empty.json()["code"] == "nothing_to_chart"
    unknown = _post(server, "/v1/chart", {"metrics": ["revenu"]})
    assert unknown.json()["code"] == "unknown_metric"
    assert unknown.json()["suggested_retry"] == {"metrics": ["revenue"]}


def test_query_with_chart_formats_and_pretty_sql(
    server: Server, engine: Engine, shop_db: Path
) -> None:
    q = {**Q, "metrics": ["revenue", "order_count", "close_rate"]}
    body = _post(server, "/v1/query?chart=true&pretty=true", q).json()
    assert body["formats"] == {"revenue": ",.2f", "order_count": ",d", "close_rate": ",.6~r"}
    assert body["chart"]["usermeta"]["dosi"]["metrics"] == q["metrics"]
    # the SQL that ran: planned for the server's database (issue 27 item 3's cost rule)
    assert body["sql"] == engine.compile(q, "duckdb", pretty=True, db_path=shop_db)["sql"]
    assert "\n" in body["sql"]
    plain = _post(server, "/v1/query", q).json()
    assert "chart" not in plain
    assert plain["sql"] == engine.compile(q, "duckdb", db_path=shop_db)["sql"]
    values = _post(server, "/v1/query?chart=true", {"group_by": ["orders.channel"]}).json()
    assert values["chart"] is None  # dimension values: nothing to draw, rows still there
    assert values["row_count"] == 4


def test_parquet_result(server: Server, engine: Engine, shop_db: Path) -> None:
    r = _post(server, "/v1/query", Q, headers={"Accept": "application/vnd.apache.parquet"})
    assert r.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(r.content))
    expected = engine.execute(Q, db_path=shop_db)
    assert table.column_names == expected["columns"]
    assert table.to_pylist() == expected.arrow.to_pylist()  # exact decimals, typed dates
    by_param = _post(server, "/v1/query?format=parquet", Q)
    assert by_param.content[:4] == b"PAR1"
    caps = httpx.get(server.url + "/v1/capabilities").json()
    assert "application/vnd.apache.parquet" in caps["result_formats"]
    assert "POST /v1/chart" in caps["endpoints"]


def test_page_scripts_and_vendored_libraries(server: Server) -> None:
    page = httpx.get(server.url + "/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "unsafe-eval" not in page.headers["content-security-policy"]
    for src in ("vendor/vega.min.js", "vendor/vega-lite.min.js", "vendor/vega-embed.min.js"):
        assert f'<script src="{src}">' in page.text
        js = httpx.get(f"{server.url}/{src}")
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    for name in ("vega", "vega-lite", "vega-embed"):
        lic = httpx.get(f"{server.url}/vendor/LICENSE-{name}.txt")
        assert "University of Washington Interactive Data Lab" in lic.text
    for script in ("explorer.js", "format.js", "picker.js"):
        assert httpx.get(f"{server.url}/{script}").status_code == 200
    assert httpx.get(server.url + "/nope.js").status_code == 404
    assert httpx.get(server.url + "/vendor/..%2Fexplorer.js").status_code == 404
    assert "http" not in "".join(
        line for line in page.text.splitlines() if "<script" in line
    )  # no CDN
