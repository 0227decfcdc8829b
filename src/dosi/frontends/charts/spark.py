"""Terminal sparklines of a time-series result (`dosi query --spark`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dosi.frontends.charts.data import chart_data, short_number

SPARK = "▁▂▃▄▅▆▇█"


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
            f"min {short_number(min(nums))} max {short_number(max(nums))} last {short_number(nums[-1])}"
        )
    return lines
