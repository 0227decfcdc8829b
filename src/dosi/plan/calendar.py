"""Calendar arithmetic on literal bounds, done in Python so bounds stay DATE literals.

docs/performance.md, rule 2: a DATE-typed bound lets the warehouse skip row groups; shifting
a literal by months or years is dialect-independent (end-of-month days clamp, as DATE - INTERVAL
does). Every grain's bucket start is computed here on the model's calendar (dosi.ir.calendar):
week starts on its `week_start`, fiscal periods from its start month, retail periods from its
52/53-week years, so the scan a window widens to starts on the same boundary the SQL buckets
(dosi.sql.calendar) use, whatever the dialect.
"""

from __future__ import annotations

import calendar
import datetime as dt

from dosi.errors import QueryError
from dosi.ext.grains import FIXED_SECONDS, MONTHS
from dosi.ir.calendar import DEFAULT_CALENDAR, CalendarIr, RetailCalendar

When = dt.date | dt.datetime

# the most days one step of a retail grain spans (a 53-week year, a 14-week quarter, a
# 6-week month): scan widening only needs an upper bound
_RETAIL_DAYS = {"retail_year": 371, "retail_quarter": 98, "retail_month": 42}


def shift_when(value: When, count: int, granularity: str) -> When:
    """`value` moved by `count` grains; a result outside years 1..9999 is a structured error
    (a window offset or frame that reaches past the calendar from a time_range bound). A
    retail step moves by its longest span (the scan a retail offset reads is widened by it)."""
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
    if granularity in FIXED_SECONDS:
        seconds = FIXED_SECONDS[granularity] * count
        if isinstance(value, dt.datetime) or seconds % 86_400 == 0:
            return value + dt.timedelta(seconds=seconds)
        start = dt.datetime.combine(value, dt.time())  # a date moved by hours: a timestamp
        return start + dt.timedelta(seconds=seconds)
    if granularity in _RETAIL_DAYS:
        return value + dt.timedelta(days=_RETAIL_DAYS[granularity] * count)
    return _add_months(value, MONTHS[granularity] * count)


def _add_months(value: When, months: int) -> When:
    total = value.year * 12 + (value.month - 1) + months
    year, month = divmod(total, 12)
    month += 1
    day = min(value.day, calendar.monthrange(year, month)[1])
    return value.replace(year=year, month=month, day=day)


def trunc_when(value: When, grain: str, cal: CalendarIr = DEFAULT_CALENDAR) -> When:
    """The first instant of the `grain` bucket holding `value` on `cal` (a date stays a date
    for grains of a day or coarser)."""
    if grain == "second" and isinstance(value, dt.datetime):
        return value.replace(microsecond=0)
    if grain == "minute" and isinstance(value, dt.datetime):
        return value.replace(second=0, microsecond=0)
    if grain == "hour" and isinstance(value, dt.datetime):
        return value.replace(minute=0, second=0, microsecond=0)
    if grain in ("second", "minute", "hour", "day"):
        return _midnight(value, value)
    day = value.date() if isinstance(value, dt.datetime) else value
    return _midnight(value, bucket_day(day, grain, cal))


def bucket_day(day: dt.date, grain: str, cal: CalendarIr = DEFAULT_CALENDAR) -> dt.date:
    """The first day of the `grain` bucket holding `day` (a day grain or coarser)."""
    if grain == "day":
        return day
    if grain == "week":
        return day - dt.timedelta(days=(day.weekday() - cal.week_start) % 7)
    if grain == "month":
        return day.replace(day=1)
    if grain == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    if grain == "year":
        return day.replace(month=1, day=1)
    if grain in ("fiscal_quarter", "fiscal_year") and cal.fiscal_start_month is not None:
        back = cal.fiscal_start_month - 1
        moved = _add_months(day.replace(day=1), -back)
        assert isinstance(moved, dt.date)
        inner = bucket_day(moved, "quarter" if grain == "fiscal_quarter" else "year")
        out = _add_months(inner, back)
        assert isinstance(out, dt.date)
        return out
    if grain.startswith("retail_") and cal.retail is not None:
        return retail_bucket(day, grain, cal.retail)
    raise ValueError(f"no Python bucket for the grain {grain}")


def retail_year_end(year: int, r: RetailCalendar) -> dt.date:
    """The last day of the retail year named `year`: the year-end weekday last on or before
    (or nearest to) the last day of `year_end_month` in `year`."""
    last = dt.date(year, r.year_end_month, calendar.monthrange(year, r.year_end_month)[1])
    gap = (last.weekday() - r.year_end_weekday) % 7
    if r.rule == "last":
        return last - dt.timedelta(days=gap)
    return last - dt.timedelta(days=gap) if gap <= 3 else last + dt.timedelta(days=7 - gap)


def retail_year_of(day: dt.date, r: RetailCalendar) -> int:
    """The name of the retail year holding `day` (the calendar year its last day falls in,
    the day after `year_end_month` otherwise)."""
    for year in (day.year - 1, day.year, day.year + 1):
        if day <= retail_year_end(year, r):
            return year
    return day.year + 2  # pragma: no cover - a year ends within days of its month


def retail_bucket(day: dt.date, grain: str, r: RetailCalendar) -> dt.date:
    year = retail_year_of(day, r)
    start = retail_year_end(year - 1, r) + dt.timedelta(days=1)
    week = (day - start).days // 7
    if grain == "retail_year":
        return start
    if grain == "retail_quarter":
        return start + dt.timedelta(weeks=13 * min(week // 13, 3))
    first = 0
    for weeks in r.month_weeks[:-1]:
        if week < first + weeks:
            break
        first += weeks
    return start + dt.timedelta(weeks=first)


def _midnight(like: When, day: When) -> When:
    if isinstance(like, dt.datetime):
        if isinstance(day, dt.datetime):
            return day.replace(hour=0, minute=0, second=0, microsecond=0)
        return dt.datetime.combine(day, dt.time())
    return day.date() if isinstance(day, dt.datetime) else day
