"""Cumulative metrics sampled at a coarser grain (D-WINDOW `period_value`, issue 22 item 7):
a model over densekit's gappy sales table, and the expected values in plain Python.

`expected` walks the days itself: the running value of every day (the days with sales, or every
calendar day when densified), restarted at each reset period, then for each coarser bucket
the first, last or average of those values. Nothing here asks dosi.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from densekit import bucket
from enginekit import dataset, field, metric, model_doc, to_yaml

Sale = tuple[int, dt.date, str, Decimal]


def _w(window: dict[str, Any]) -> dict[str, Any]:
    return {"v": "1.14", "window": window}


def _cum(reset: str | None, pick: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "cumulative", "function": "sum", "period_value": pick}
    if reset is not None:
        out["reset"] = reset
    return out


#: metric -> (reset grain, pick)
METRICS: dict[str, tuple[str | None, str]] = {
    "run_first": (None, "first"),
    "run_last": (None, "last"),
    "run_avg": (None, "average"),
    "mtd_first": ("month", "first"),
    "mtd_last": ("month", "last"),
    "mtd_avg": ("month", "average"),
}


def model_text() -> str:
    metrics = [
        metric(name, "SUM(sales.amount)", _w(_cum(reset, pick)))
        for name, (reset, pick) in METRICS.items()
    ]
    metrics += [
        metric("revenue", "SUM(sales.amount)"),
        metric(
            "run_monthly",
            "SUM(sales.amount)",
            _w(_cum(None, {"value": "first", "grain": "month"})),
        ),
        metric(
            "run_general",
            "SUM(sales.amount)",
            _w({"frame": {"function": "sum", "preceding": "unbounded", "period_value": "last"}}),
        ),
        metric(
            "mtd_plain",
            "SUM(sales.amount)",
            _w({"type": "cumulative", "function": "sum", "reset": "month"}),
        ),
    ]
    doc = model_doc(
        [
            dataset(
                "sales",
                [
                    field("sale_id", datatype="Integer"),
                    field("sale_date", datatype="Date", is_time=True),
                    field("region", datatype="String"),
                    field("amount", datatype="Decimal"),
                ],
                primary_key=["sale_id"],
            )
        ],
        metrics=metrics,
    )
    return to_yaml(doc)


def expected(
    sales: Sequence[Sale],
    name: str,
    grain: str,
    start: dt.date | None = None,
    end: dt.date | None = None,
    dense: bool = False,
    by_region: bool = False,
) -> dict[Any, float | None]:
    """bucket (or (bucket, region)) -> the sampled running value, as dosi should answer it."""
    reset, pick = METRICS[name]
    # the scan: a reset frame reads from its period start; a running one from the range start
    kept = [s for s in sales if (end is None or s[1] < end)]
    if start is not None:
        low = bucket(start, reset) if reset is not None else start
        kept = [s for s in kept if s[1] >= low]
    if not kept and not (dense and start is not None and end is not None):
        return {}
    seen = [s for s in kept if start is None or s[1] >= start] if dense else kept
    regions = sorted({s[2] for s in seen}) if by_region else [None]
    days_with = sorted({s[1] for s in kept})
    if dense:
        # the spine: the range (or the data's first to last day), every calendar day
        lo = start if start is not None else days_with[0]
        hi = end if end is not None else days_with[-1] + dt.timedelta(days=1)
        first = min([lo, *days_with])
        days = [first + dt.timedelta(days=i) for i in range((hi - first).days)]
    out: dict[Any, float | None] = {}
    for region in regions:
        rows = [s for s in kept if region is None or s[2] == region]
        own = sorted({s[1] for s in rows})
        series = days if dense else own
        values: dict[dt.date, float | None] = {}
        for d in series:
            lo_d = bucket(d, reset) if reset is not None else dt.date.min
            frame = [s for s in rows if lo_d <= s[1] <= d]
            # a running SUM over rows whose values are all NULL (empty days) is NULL
            values[d] = float(sum(s[3] for s in frame)) if frame else None
        shown = [d for d in series if start is None or d >= start]
        buckets: dict[dt.date, list[dt.date]] = {}
        for d in shown:
            buckets.setdefault(bucket(d, grain), []).append(d)
        for b, ds in buckets.items():
            vals = [values[d] for d in ds]
            if pick == "first":
                v = vals[0]
            elif pick == "last":
                v = vals[-1]
            else:
                present = [x for x in vals if x is not None]
                v = sum(present) / len(present) if present else None
            out[(b, region) if by_region else b] = v
    return out
