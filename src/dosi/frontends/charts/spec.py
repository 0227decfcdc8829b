"""The one chart of a query result: a Vega-Lite spec (plain dicts), drawn by every surface:
`vl-convert` renders it to SVG/PNG for `dosi query --chart` and REST `/v1/chart`, and the
explorer page embeds it with the vendored vega-embed (`web/vendor`).

The rules (docs/charts.md):
- a time key on the x axis draws lines (one per value of the other keys, e.g. per channel);
  otherwise the first key is a category on the x axis and draws bars (grouped by the other keys);
- one metric is one chart; metrics of one scale share an axis (a colour per metric); two lines
  of different scales get two y axes (a layer, left and right); more, bars of different scales, or several metrics drawn per
  series, are small multiples: one row per metric, each with its own y axis, the x axis shared;
- a title, axis titles (the grain of the time axis), number formats from each metric's type,
  and tooltips on every point and bar.

`usermeta.dosi` names the choice (kind, layout, series) for tests and the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dosi.frontends.charts.columns import (
    NULL_LABEL,
    TIME_FORMATS,
    TIME_UNITS,
    Columns,
    columns_of,
    grain_of,
    label,
    magnitude,
    number,
    time_iso,
)

VEGA_LITE_VERSION = "6.4"  # web/vendor/vega-lite.min.js and vl-convert's renderer
SCALE_RATIO = 10.0  # metrics whose largest values differ by more than this do not share an axis
WIDTH, HEIGHT, ROW_HEIGHT = 640, 300, 170
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1")


def _field(name: str) -> str:
    """A column name as a Vega-Lite field reference (dots and brackets are path syntax)."""
    return name.replace("\\", "\\\\").replace(".", "\\.").replace("[", "\\[").replace("]", "\\]")


def _axis_title(column: str) -> str:
    grain = grain_of(column)
    return f"{column.removesuffix('__' + grain)} ({grain})" if grain else column


def _axis_format(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    return "~s" if magnitude(rows, metric) >= 1e4 else ",~r"


def _same_scale(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> bool:
    sizes = [m for m in (magnitude(rows, c) for c in metrics) if m > 0]
    return not sizes or max(sizes) / min(sizes) <= SCALE_RATIO


def _values(
    result: Mapping[str, Any], cols: Columns, x: str | None, series: str | None, split: list[str]
) -> list[dict[str, Any]]:
    out = []
    for r in result["rows"]:
        v: dict[str, Any] = {m: number(r.get(m)) for m in cols.metrics}
        if x is not None:
            v[x] = time_iso(r.get(x)) if x == cols.time else label(r, [x])
        if series is not None:
            v[series] = label(r, split)
        out.append(v)
    return out


def _title(cols: Columns, x: str | None, split: list[str]) -> str:
    text = ", ".join(cols.metrics)
    if x is not None:
        text += f" by {grain_of(x) or x}"
    if split:
        text += " per " + " / ".join(split)
    return text


class _Builder:
    """Encodings of one result: the x channel, the series colour, tooltips, one metric's y."""

    def __init__(self, result: Mapping[str, Any], cols: Columns) -> None:
        self.rows: list[Mapping[str, Any]] = list(result["rows"])
        self.cols = cols
        self.x = cols.time if cols.time is not None else (cols.keys[0] if cols.keys else None)
        self.split = [k for k in cols.keys if k != self.x]
        self.series = " / ".join(self.split) if self.split else None
        found = {label(r, self.split) for r in self.rows} if self.split else set()
        # the legend in text order, a NULL series last (as the table sorts it)
        self.labels = sorted(found, key=lambda t: (t == NULL_LABEL, t))
        self.kind = "line" if cols.time is not None else "bar"

    def x_enc(self) -> dict[str, Any]:
        assert self.x is not None
        if self.kind == "line":
            grain = grain_of(self.x) or "day"
            return {
                "field": _field(self.x),
                "type": "temporal",
                "timeUnit": TIME_UNITS.get(grain, "utcyearmonthdate"),
                "title": _axis_title(self.x),
                "axis": {"format": TIME_FORMATS[grain], "labelAngle": -40},
            }
        return {
            "field": _field(self.x),
            "type": "nominal",
            "title": self.x,
            "sort": None,
            "axis": {"labelAngle": -40, "labelLimit": 140},
        }

    def tooltip(self, metrics: Sequence[str]) -> list[dict[str, Any]]:
        tips: list[dict[str, Any]] = []
        if self.x is not None:
            tip = dict(self.x_enc())
            for drop in ("axis", "sort"):
                tip.pop(drop, None)
            if self.kind == "line":
                tip["format"] = TIME_FORMATS[grain_of(self.x) or "day"]
            tips.append(tip)
        if self.series is not None:
            tips.append({"field": _field(self.series), "type": "nominal"})
        for m in metrics:
            tips.append(
                {"field": _field(m), "type": "quantitative", "format": self.cols.formats[m]}
            )
        return tips

    def y_enc(self, metric: str, **axis: Any) -> dict[str, Any]:
        return {
            "field": _field(metric),
            "type": "quantitative",
            "title": metric,
            "axis": {"format": _axis_format(self.rows, metric), **axis},
        }

    def mark(self) -> dict[str, Any]:
        if self.kind == "line":
            return {"type": "line", "point": True, "interpolate": "linear"}
        return {"type": "bar"}

    def one(self, metric: str, height: int, color: str | None = None) -> dict[str, Any]:
        """One metric's chart: a line per series or bars grouped by series."""
        enc: dict[str, Any] = {"y": self.y_enc(metric), "tooltip": self.tooltip([metric])}
        if self.x is not None:
            enc["x"] = self.x_enc()
        else:
            enc["x"] = {"datum": metric, "type": "nominal", "title": None}
        if self.series is not None:
            enc["color"] = {
                "field": _field(self.series),
                "type": "nominal",
                "title": self.series,
                "sort": self.labels,
            }
            if self.kind == "bar":
                enc["xOffset"] = {
                    "field": _field(self.series),
                    "type": "nominal",
                    "sort": self.labels,
                }
        mark = self.mark()
        if color is not None and self.series is None:
            mark["color"] = color
        return {"mark": mark, "encoding": enc, "width": WIDTH, "height": height}

    def shared(self) -> dict[str, Any]:
        """Metrics of one scale on one axis: fold them, a colour per metric."""
        metrics = self.cols.metrics
        fold = {"fold": [_field(m) for m in metrics], "as": ["metric", "value"]}
        fmt = _axis_format(self.rows, max(metrics, key=lambda m: magnitude(self.rows, m)))
        enc: dict[str, Any] = {
            "y": {
                "field": "value",
                "type": "quantitative",
                "title": ", ".join(metrics),
                "axis": {"format": fmt},
            },
            "color": {"field": "metric", "type": "nominal", "title": "metric", "sort": metrics},
            "tooltip": [
                *self.tooltip([])[:1],
                {"field": "metric", "type": "nominal"},
                {"field": "value", "type": "quantitative", "format": self.cols.formats[metrics[0]]},
            ],
        }
        if self.x is not None:
            enc["x"] = self.x_enc()
            if self.kind == "bar":
                enc["xOffset"] = {"field": "metric", "type": "nominal", "sort": metrics}
        else:
            enc["x"] = {"field": "metric", "type": "nominal", "title": None, "sort": metrics}
        return {
            "transform": [fold],
            "mark": self.mark(),
            "encoding": enc,
            "width": WIDTH,
            "height": HEIGHT,
        }

    def dual(self) -> dict[str, Any]:
        """Two metrics of different scales: one layer each, y axes left and right."""
        layers = []
        for i, (m, orient) in enumerate(zip(self.cols.metrics, ("left", "right"), strict=True)):
            layer = self.one(m, HEIGHT, PALETTE[i])
            layer["encoding"]["y"]["axis"].update({"orient": orient, "titleColor": PALETTE[i]})
            del layer["width"], layer["height"]  # the layer's size is the whole chart's
            layers.append(layer)
        return {
            "layer": layers,
            "resolve": {"scale": {"y": "independent"}},
            "width": WIDTH,
            "height": HEIGHT,
        }

    def rows_layout(self) -> dict[str, Any]:
        """Small multiples: one row per metric, each its own y axis, the x axis shared."""
        charts = [
            self.one(m, ROW_HEIGHT, PALETTE[i % len(PALETTE)])
            for i, m in enumerate(self.cols.metrics)
        ]
        for c in charts[:-1]:  # the x axis title once, under the last row
            c["encoding"]["x"]["title"] = None
        return {"vconcat": charts, "resolve": {"scale": {"x": "shared", "color": "shared"}}}


def chart_spec(
    result: Mapping[str, Any], *, descriptions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The Vega-Lite spec of a result ({columns, rows, outputs}; a `QueryResult` also lends its
    Arrow schema for number formats). `descriptions` (metric -> text) become the subtitle."""
    cols = columns_of(result)
    if not cols.metrics:
        raise ValueError("nothing to chart: the result has no metric or numeric column")
    b = _Builder(result, cols)
    n = len(cols.metrics)
    if n == 1:
        layout, body = "single", b.one(cols.metrics[0], HEIGHT)
    elif b.series is None and _same_scale(b.rows, cols.metrics):
        layout, body = "shared", b.shared()
    elif n == 2 and b.series is None and b.kind == "line":  # two bar layers would overlap
        layout, body = "dual", b.dual()
    else:
        layout, body = "rows", b.rows_layout()
    series = b.labels if b.series is not None else list(cols.metrics if layout == "shared" else [])
    title: dict[str, Any] = {"text": _title(cols, b.x, b.split), "anchor": "start"}
    notes = [
        f"{m}: {descriptions[m]}" for m in cols.metrics if descriptions and descriptions.get(m)
    ]
    if notes:
        title["subtitle"] = notes
    return {
        "title": title,
        "data": {"values": _values(result, cols, b.x, b.series, b.split)},
        **body,
        "config": {
            "font": "sans-serif",
            "view": {"stroke": "#ddd"},
            "axis": {"labelFontSize": 11, "titleFontSize": 12},
        },
        "usermeta": {
            "dosi": {
                "kind": b.kind,
                "layout": layout,
                "x": b.x,
                "series_field": b.series,
                "series": series,
                "metrics": cols.metrics,
                "vega_lite": VEGA_LITE_VERSION,
            }
        },
    }
