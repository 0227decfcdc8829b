"""What a chart of a query result shows: a time series (one line per metric, per value of a
second group-by column when there is one) when the first group-by column is a time bucket, else
bars. Shared by every drawing (SVG, PNG, sparklines)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    if isinstance(v, (int, float, decimal.Decimal)):  # a chart draws doubles, rows stay exact
        f = float(v)
        return f if math.isfinite(f) else None
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


def short_number(v: float) -> str:
    """A short axis label: 1.23k, 4.5M, 6.7G."""
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"
