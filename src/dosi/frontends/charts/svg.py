"""A chart of a query result as a standalone SVG document, drawn by hand (no dependency)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from dosi.frontends.charts.data import chart_data, short_number

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#1f77b4",
    "#8c564b",
)


def chart_svg(result: Mapping[str, Any], width: int = 900, height: int = 420) -> str:
    """A standalone SVG document of the result (line for time series, bars otherwise)."""
    data = chart_data(result)
    left, right, top, bottom = 70, 20, 30, 90
    legend_h = 18 * len(data.series) + 14
    h = height + legend_h
    pw, ph = width - left - right, height - top - bottom
    values = [v for s in data.series for _, v in s.points if v is not None]
    lo = min([0.0, *values])
    hi = max([0.0, *values])
    if hi == lo:
        hi = lo + 1

    def y(v: float) -> float:
        return top + ph - (v - lo) / (hi - lo) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" '
        f'viewBox="0 0 {width} {h}" font-family="sans-serif" font-size="11" '
        f'class="dosi-chart dosi-chart-{data.kind}">',
        f'<rect width="{width}" height="{h}" fill="white"/>',
    ]
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        yy = y(v)
        out.append(
            f'<line x1="{left}" y1="{yy:.1f}" x2="{width - right}" y2="{yy:.1f}" stroke="#ddd"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{escape(short_number(v))}</text>'
        )
    n = max(1, len(data.categories))
    step = max(1, n // 12)
    if data.kind == "line":

        def xpos(i: int) -> float:
            return left + (pw * i / (n - 1) if n > 1 else pw / 2)

        for k, s in enumerate(data.series):
            color = PALETTE[k % len(PALETTE)]
            path: list[str] = []
            pen = "M"
            for i, (_, v) in enumerate(s.points):
                if v is None:
                    pen = "M"
                    continue
                path.append(f"{pen}{xpos(i):.1f},{y(v):.1f}")
                pen = "L"
            out.append(
                f'<path d="{" ".join(path)}" fill="none" stroke="{color}" stroke-width="2">'
                f"<title>{escape(s.name)}</title></path>"
            )
            for i, (c, v) in enumerate(s.points):
                if v is not None:
                    out.append(
                        f'<circle cx="{xpos(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{color}">'
                        f"<title>{escape(c)}: {v:g}</title></circle>"
                    )
        for i, c in enumerate(data.categories):
            if i % step == 0:
                out.append(_xlabel(xpos(i), top + ph + 14, c))
    else:
        group = pw / n
        bw = group * 0.8 / max(1, len(data.series))
        zero = y(0.0)
        for k, s in enumerate(data.series):
            color = PALETTE[k % len(PALETTE)]
            for i, (c, v) in enumerate(s.points):
                if v is None:
                    continue
                x0 = left + group * i + group * 0.1 + bw * k
                y0, y1 = sorted((y(v), zero))
                out.append(
                    f'<rect class="bar" x="{x0:.1f}" y="{y0:.1f}" width="{bw:.1f}" '
                    f'height="{max(y1 - y0, 0.5):.1f}" fill="{color}">'
                    f"<title>{escape(c)} {escape(s.name)}: {v:g}</title></rect>"
                )
        for i, c in enumerate(data.categories):
            if i % step == 0:
                out.append(_xlabel(left + group * (i + 0.5), top + ph + 14, c))
    out.append(
        f'<line x1="{left}" y1="{top + ph}" x2="{width - right}" y2="{top + ph}" stroke="#333"/>'
    )
    for k, s in enumerate(data.series):
        yy = height + 14 + 18 * k
        color = PALETTE[k % len(PALETTE)]
        out.append(f'<rect x="{left}" y="{yy - 9}" width="12" height="10" fill="{color}"/>')
        out.append(f'<text x="{left + 18}" y="{yy}">{escape(s.name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _xlabel(x: float, y: float, text: str) -> str:
    text = text.removesuffix(" 00:00:00")
    short = text if len(text) <= 16 else text[:15] + "…"
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end" '
        f'transform="rotate(-40 {x:.1f} {y:.1f})">{escape(short)}</text>'
    )
