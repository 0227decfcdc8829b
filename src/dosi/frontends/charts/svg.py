"""Charts of a query result: an SVG drawn by hand (no dependency), PNG through matplotlib (the
optional `charts` extra), and terminal sparklines.

A result whose first group-by column is a time bucket is a time series: one line per metric
(per value of a second group-by column, when there is one). Anything else is a bar chart.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

SPARK = "▁▂▃▄▅▆▇█"
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
_GRAIN_SUFFIXES = ("__day", "__week", "__month", "__quarter", "__year")


@dataclass(frozen=True)
class Series:
    name: str
    points: list[tuple[str, float | None]]


@dataclass(frozen=True)
class ChartData:
    kind: str  # "line" | "bar"
    x: str
    categories: list[str]
    series: list[Series]


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return None if isinstance(v, float) and not math.isfinite(v) else float(v)
    return None


def _is_time_value(v: Any) -> bool:
    if isinstance(v, (dt.date, dt.datetime)):
        return True
    if isinstance(v, str):
        try:
            dt.datetime.fromisoformat(v)
            return True
        except ValueError:
            return False
    return False


def _is_time_column(name: str, rows: Sequence[Mapping[str, Any]]) -> bool:
    if name in ("metric_time", "window_start") or name.endswith(_GRAIN_SUFFIXES):
        return True
    values = [r.get(name) for r in rows if r.get(name) is not None]
    return bool(values) and all(_is_time_value(v) for v in values)


def chart_data(result: Mapping[str, Any]) -> ChartData:
    """Pick the chart for a result: metrics are the `outputs` columns, the rest are keys."""
    columns: list[str] = list(result["columns"])
    rows: list[Mapping[str, Any]] = list(result["rows"])
    metrics = [o["column"] for o in result.get("outputs") or [] if o["column"] in columns]
    if not metrics:  # detail rows: numeric columns are the values
        metrics = [c for c in columns if any(_num(r.get(c)) is not None for r in rows)]
    keys = [c for c in columns if c not in metrics]
    x = keys[0] if keys else ""
    is_time = bool(keys) and _is_time_column(x, rows)

    def label(r: Mapping[str, Any], cols: Sequence[str]) -> str:
        return " / ".join("∅" if r.get(c) is None else str(r.get(c)) for c in cols) or "total"

    if is_time:
        split = keys[1:]
        cats = sorted({str(r.get(x)) for r in rows if r.get(x) is not None})
        series: dict[str, dict[str, float | None]] = {}
        for r in rows:
            if r.get(x) is None:
                continue
            for m in metrics:
                name = m if not split else f"{m} ({label(r, split)})"
                series.setdefault(name, {})[str(r.get(x))] = _num(r.get(m))
        return ChartData(
            "line",
            x,
            cats,
            [Series(n, [(c, pts.get(c)) for c in cats]) for n, pts in series.items()],
        )
    cats = [label(r, keys) for r in rows]
    return ChartData(
        "bar",
        " / ".join(keys),
        cats,
        [Series(m, [(cats[i], _num(r.get(m))) for i, r in enumerate(rows)]) for m in metrics],
    )


def _fmt(v: float) -> str:
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


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
            f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{escape(_fmt(v))}</text>'
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
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "a PNG chart needs matplotlib: pip install 'dosi[charts]' (or write .svg)"
        ) from None
    data = chart_data(result)
    fig, ax = plt.subplots(figsize=(10, 5))
    if data.kind == "line":
        for s in data.series:
            ax.plot(
                list(range(len(s.points))),
                [math.nan if v is None else v for _, v in s.points],
                marker="o",
                markersize=3,
                label=s.name,
            )
    else:
        n = max(1, len(data.series))
        for k, s in enumerate(data.series):
            ax.bar(
                [i + k / (n + 1) for i in range(len(s.points))],
                [0 if v is None else v for _, v in s.points],
                width=0.8 / n,
                label=s.name,
            )
    ticks = list(range(len(data.categories)))
    step = max(1, len(ticks) // 12)
    ax.set_xticks(ticks[::step])
    ax.set_xticklabels(data.categories[::step], rotation=40, ha="right")
    ax.set_xlabel(data.x)
    ax.legend()
    fig.tight_layout()
    fig.savefig(p)
    plt.close(fig)
    return p


def sparkline(values: Sequence[float | None]) -> str:
    nums = [v for v in values if v is not None]
    if not nums:
        return ""
    lo, hi = min(nums), max(nums)
    span = hi - lo
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif span == 0:
            out.append(SPARK[len(SPARK) // 2])
        else:
            out.append(SPARK[min(len(SPARK) - 1, int((v - lo) / span * (len(SPARK) - 1) + 0.5))])
    return "".join(out)


def sparklines(result: Mapping[str, Any]) -> list[str]:
    """One line per series of a time-series result: name, sparkline, first .. last, min/max."""
    data = chart_data(result)
    if data.kind != "line":
        return []
    lines = []
    width = max((len(s.name) for s in data.series), default=0)
    for s in data.series:
        vals = [v for _, v in s.points]
        nums = [v for v in vals if v is not None]
        if not nums:
            continue
        lines.append(
            f"{s.name.ljust(width)}  {sparkline(vals)}  "
            f"{data.categories[0]} .. {data.categories[-1]}  "
            f"min {_fmt(min(nums))} max {_fmt(max(nums))} last {_fmt(nums[-1])}"
        )
    return lines
