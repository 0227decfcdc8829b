"""Writing a chart file: `.svg` is drawn here, `.png` by `png` (matplotlib, the `charts` extra)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dosi.frontends.charts.svg import chart_svg
from dosi.frontends.extras import load_extra

PNG_WRITER = "dosi.frontends.charts.png"


def write_chart(result: Mapping[str, Any], path: str | Path) -> Path:
    """`.svg` is drawn here; `.png` needs matplotlib (`pip install 'dosi[charts]'`)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".svg":
        p.write_text(chart_svg(result), encoding="utf-8")
        return p
    if suffix != ".png":
        raise ValueError(f"chart file `{p}` must end in .svg or .png")
    try:
        png = load_extra(PNG_WRITER)
    except ImportError:
        raise ImportError(
            "a PNG chart needs matplotlib: pip install 'dosi[charts]' (or write .svg)"
        ) from None
    written: Path = png.write_png(result, p)
    return written
