"""The series of a time-series result for terminal sparklines (`dosi query --spark`): one per
metric, per value of the other group-by columns when there are any. The time key is found
wherever it stands in the group-by, as in the chart spec (`spec.chart_spec`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dosi.frontends.charts.columns import columns_of, label, number


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


def chart_data(result: Mapping[str, Any]) -> ChartData:
    """Lines over the time key when the result has one; else bars over the keys."""
    cols = columns_of(result)
    rows: list[Mapping[str, Any]] = list(result["rows"])
    if cols.time is not None:
        x = cols.time
        split = [k for k in cols.keys if k != x]
        cats = sorted({str(r.get(x)) for r in rows if r.get(x) is not None})
        series: dict[str, dict[str, float | None]] = {}
        for r in rows:
            if r.get(x) is None:
                continue
            for m in cols.metrics:
                name = m if not split else f"{m} ({label(r, split)})"
                series.setdefault(name, {})[str(r.get(x))] = number(r.get(m))
        return ChartData(
            "line",
            x,
            cats,
            [Series(n, [(c, pts.get(c)) for c in cats]) for n, pts in series.items()],
        )
    cats = [label(r, cols.keys) or "total" for r in rows]
    return ChartData(
        "bar",
        " / ".join(cols.keys),
        cats,
        [
            Series(m, [(cats[i], number(r.get(m))) for i, r in enumerate(rows)])
            for m in cols.metrics
        ],
    )


def short_number(v: float) -> str:
    """A short label: 1.23k, 4.5M, 6.7G."""
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"
