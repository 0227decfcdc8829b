"""Calendar arithmetic on literal bounds, done in Python so bounds stay DATE literals.

docs/performance.md, rule 2: a DATE-typed bound lets the warehouse skip row groups; shifting
a literal by months or years is dialect-independent (end-of-month days clamp, as DATE - INTERVAL
does). Week truncation is dialect-defined and stays in SQL.
"""

from __future__ import annotations

import calendar
import datetime as dt

from dosi.errors import QueryError

When = dt.date | dt.datetime


def shift_when(value: When, count: int, granularity: str) -> When:
    """`value` moved by `count` grains; a result outside years 1..9999 is a structured error
    (a window offset or frame that reaches past the calendar from a time_range bound)."""
    try:
        return _shift(value, count, granularity)
    except (OverflowError, ValueError):
        raise QueryError(
            "unsupported_filter",
            f"the time_range bound {value.isoformat()} moved by {count} {granularity}(s) falls "
            "outside the years 1 to 9999",
            hint="use time_range bounds further from year 1 and year 9999",
        ) from None


def _shift(value: When, count: int, granularity: str) -> When:
    if granularity == "day":
        return value + dt.timedelta(days=count)
    if granularity == "week":
        return value + dt.timedelta(days=7 * count)
    months = {"month": 1, "quarter": 3, "year": 12}[granularity] * count
    total = value.year * 12 + (value.month - 1) + months
    year, month = divmod(total, 12)
    month += 1
    day = min(value.day, calendar.monthrange(year, month)[1])
    return value.replace(year=year, month=month, day=day)


def trunc_when(value: When, grain: str) -> When:
    """First instant of the month / quarter / year (or day) holding `value`."""
    if grain == "day":
        out: When = value
    elif grain == "month":
        out = value.replace(day=1)
    elif grain == "quarter":
        out = value.replace(month=(value.month - 1) // 3 * 3 + 1, day=1)
    elif grain == "year":
        out = value.replace(month=1, day=1)
    else:
        raise ValueError(f"trunc_when does not handle {grain}")
    if isinstance(out, dt.datetime):
        out = out.replace(hour=0, minute=0, second=0, microsecond=0)
    return out
