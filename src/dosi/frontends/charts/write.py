"""Writing a chart file by its suffix: `.svg`, `.png` and `.html` rendered by vl-convert (the
`charts` extra) from the result's one spec (`spec.chart_spec`), `.json` the Vega-Lite spec
itself (no extra: open it in any Vega-Lite tool)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dosi.frontends.charts.spec import chart_spec
from dosi.frontends.extras import load_extra

RENDERER = "dosi.frontends.charts.render"
SUFFIXES = (".svg", ".png", ".html", ".json")


def write_chart(
    result: Mapping[str, Any], path: str | Path, descriptions: Mapping[str, str] | None = None
) -> Path:
    """Draw `result` into `path`; ValueError for another suffix or a result with nothing to
    draw, ImportError (with the pip command) when vl-convert is missing."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"chart file `{p}` must end in {', '.join(SUFFIXES)}")
    spec = chart_spec(result, descriptions=descriptions)
    if suffix == ".json":
        p.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
        return p
    try:
        render = load_extra(RENDERER)
    except ImportError:
        raise ImportError(
            f"a {suffix} chart needs vl-convert: pip install 'dosi[charts]' "
            "(or write the Vega-Lite spec with a .json chart file)"
        ) from None
    if suffix == ".png":
        p.write_bytes(render.to_png(spec))
    elif suffix == ".svg":
        p.write_text(render.to_svg(spec), encoding="utf-8")
    else:
        p.write_text(render.to_html(spec), encoding="utf-8")
    return p
