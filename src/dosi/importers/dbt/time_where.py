"""A MetricFlow where filter that only bounds metric_time, as dosi's `time_range`.

MetricFlow applies a filter on metric_time after its time-spine joins: an offset reads the
shifted rows first, and a spine-joined metric's spine is cut to the filter's days. dosi's
`time_range` means the same (the scan widens for the windows, the result is trimmed back, the
spine is bounded), while a `where_sql` filters the rows before any window. So a where filter
made only of `>=`, `>`, `<`, `<=` comparisons of the metric_time column with date literals
(MetricFlow's `render_time_constraint` shape, ANDed) translates to a time_range; anything else
stays a where filter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import sqlglot
from sqlglot import exp

_OPS = (exp.GTE, exp.GT, exp.LT, exp.LTE)


def _bare(e: exp.Expression) -> exp.Expression:
    while isinstance(e, (exp.Cast, exp.Paren)):
        e = e.this
    return e


def _day(e: exp.Expression) -> dt.date | None:
    e = _bare(e)
    if not (isinstance(e, exp.Literal) and e.is_string):
        return None
    try:
        return dt.date.fromisoformat(e.this)
    except ValueError:
        return None


def where_as_time_range(sql: str, axis_sql: Iterable[str]) -> dict[str, str] | None:
    """`{"start", "end"}` (dates; end exclusive) when `sql` only bounds a column spelled as one
    of `axis_sql` with whole-day literals; None otherwise."""
    axes = {a.lower() for a in axis_sql}
    try:
        tree = sqlglot.parse_one(sql)
    except sqlglot.errors.ParseError:
        return None
    parts = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
    start: dt.date | None = None
    end: dt.date | None = None
    for p in parts:
        if not isinstance(p, _OPS):
            return None
        left, right = _bare(p.this), p.expression
        if not isinstance(left, exp.Column) or left.sql().lower() not in axes:
            return None
        day = _day(right)
        if day is None:
            return None
        if isinstance(p, (exp.GTE, exp.GT)):
            low = day + dt.timedelta(days=1) if isinstance(p, exp.GT) else day
            start = low if start is None else max(start, low)
        else:
            high = day + dt.timedelta(days=1) if isinstance(p, exp.LTE) else day
            end = high if end is None else min(end, high)
    out = {}
    if start is not None:
        out["start"] = start.isoformat()
    if end is not None:
        out["end"] = end.isoformat()
    return out or None
