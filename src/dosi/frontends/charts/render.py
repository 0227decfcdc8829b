"""Rendering a chart spec to SVG or PNG with `vl-convert` (the `charts` extra): the same
Vega-Lite and Vega as the explorer page's vendored scripts, run in vl-convert's embedded
JavaScript engine, so the file and the page draw one picture.

vl_convert is imported here, at the top: this module is loaded only when a chart is rendered
(`dosi.frontends.extras.load_extra`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import vl_convert

from dosi.frontends.charts.spec import VEGA_LITE_VERSION

PNG_SCALE = 2.0  # a PNG at twice the spec's pixel size reads well on a high-density screen
NO_URLS: list[str] = []  # specs carry their data inline: a renderer never fetches a URL


def to_svg(spec: Mapping[str, Any]) -> str:
    """The spec as a standalone SVG document."""
    svg: str = vl_convert.vegalite_to_svg(
        json.dumps(spec), vl_version=VEGA_LITE_VERSION, allowed_base_urls=NO_URLS
    )
    return svg


def to_png(spec: Mapping[str, Any], scale: float = PNG_SCALE) -> bytes:
    """The spec as PNG bytes (white background)."""
    png: bytes = vl_convert.vegalite_to_png(
        json.dumps({**spec, "background": "white"}),
        vl_version=VEGA_LITE_VERSION,
        scale=scale,
        allowed_base_urls=NO_URLS,
    )
    return png


def to_html(spec: Mapping[str, Any]) -> str:
    """A standalone HTML page with the scripts inlined (opens offline)."""
    html: str = vl_convert.vegalite_to_html(
        json.dumps(spec), vl_version=VEGA_LITE_VERSION, bundle=True
    )
    return html
