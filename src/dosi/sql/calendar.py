"""The SQL of every grain on the query's calendar (issue 22 items 2-5): one entry point,
`grain_bucket`, for grouping, window reset keys and detail rows, and `grain_shift` for the
offset self-join keys. Dialects state only primitives (`bucket` of a native grain with a week
start, `date_part`, `day_number` / `from_day_number`, `shift`); the calendar arithmetic is
written once here, so every engine buckets a fiscal or retail period identically.

* native grains: `Dialect.bucket` with the calendar's week start;
* date parts: integers (`day_of_week` 1..7 counted from the week start, ISO `week_of_year`);
* fiscal periods: the value moved back to a calendar year starting in January, truncated to
  its quarter / year, and moved forward again (month arithmetic from the month start, so no
  day-of-month clamping differs between engines);
* retail periods: integer day arithmetic. The retail year ending in calendar year `y` ends on
  `L(y) + c - ((L(y) + a) mod 7)` where `L(y)` is the day number of the last day of the
  year-end month (1970-01-01, day 0, is a Thursday) and (c, a) = (0, 3 - weekday) for the
  `last` rule, (3, 6 - weekday) for `nearest`; a day's retail year is the first whose end is
  on or after it; months and quarters are week offsets of the year's first day.

The Python twin (bounds, tests' expectations are independent) is dosi.plan.calendar.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from dosi.ext.grains import is_date_part
from dosi.ir.calendar import CalendarIr, RetailCalendar
from dosi.plan.calendar import retail_year_end
from dosi.sql.dialects import Dialect

# a multiple of 7 large enough that every day number (years 1..9999) plus it is positive,
# so `%` (which truncates toward zero on most engines) is a true modulo
_POSITIVE = 7 * 1_000_000

_PARTS = {
    "minute_of_hour": "minute",
    "hour_of_day": "hour",
    "day_of_month": "day",
    "day_of_year": "doy",
    "week_of_year": "isoweek",
    "month_of_year": "month",
    "quarter_of_year": "quarter",
    "year_number": "year",
}


def _n(value: int) -> exp.Expression:
    return exp.Literal.number(value)


def _p(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e)


def grain_bucket(
    dialect: Dialect,
    expr: exp.Expression,
    grain: str,
    datatype: str | None,
    cal: CalendarIr,
) -> exp.Expression:
    """The bucket (its first instant) or date part of `expr` at `grain` on `cal`."""
    if is_date_part(grain):
        return date_part(dialect, expr, grain, cal)
    kind = cal.kind(grain)
    if kind == "fiscal":
        assert cal.fiscal_start_month is not None
        return _fiscal(dialect, expr, grain, datatype, cal.fiscal_start_month)
    if kind == "retail":
        assert cal.retail is not None
        return _retail(dialect, expr, grain, datatype, cal.retail)
    return dialect.bucket(expr, grain, datatype, cal.week_start)


def date_part(dialect: Dialect, expr: exp.Expression, part: str, cal: CalendarIr) -> exp.Expression:
    """A date part as an integer: `day_of_week` is 1 on the calendar's week start (ISO
    1 = Monday .. 7 = Sunday by default)."""
    if part != "day_of_week":
        return dialect.date_part(expr, _PARTS[part])
    iso = dialect.date_part(expr, "isodow")
    if cal.week_start == 0:
        return iso
    since = exp.Mod(this=_p(exp.Add(this=iso, expression=_n(6 - cal.week_start))), expression=_n(7))
    return exp.Add(this=since, expression=_n(1))


def _fiscal(
    dialect: Dialect, expr: exp.Expression, grain: str, datatype: str | None, start: int
) -> exp.Expression:
    inner = "quarter" if grain == "fiscal_quarter" else "year"
    month = dialect.bucket(expr, "month", datatype)
    if start == 1:
        return dialect.bucket(month, inner, datatype)
    moved = dialect.shift(month, -(start - 1), "month")
    out = dialect.shift(dialect.bucket(moved, inner, datatype), start - 1, "month")
    return dialect.bucket(out, "month", datatype)  # the axis' type (DATE stays DATE)


def _retail(
    dialect: Dialect, expr: exp.Expression, grain: str, datatype: str | None, r: RetailCalendar
) -> exp.Expression:
    day = dialect.day_number(expr.copy(), datatype)
    year = dialect.bucket(expr.copy(), "year", datatype)
    start = retail_year_start(dialect, day, year, datatype, r)
    if grain == "retail_year":
        return dialect.from_day_number(start, datatype)
    into = exp.Sub(this=day.copy(), expression=start.copy())
    weeks = [13, 13, 13] if grain == "retail_quarter" else list(r.month_weeks[:-1])
    ifs = []
    first = 0
    for w in weeks:
        ifs.append(
            exp.If(
                this=exp.LT(this=into.copy(), expression=_n(7 * (first + w))), true=_n(7 * first)
            )
        )
        first += w
    offset = exp.Case(ifs=ifs, default=_n(7 * first))
    return dialect.from_day_number(exp.Add(this=start, expression=offset), datatype)


def retail_year_start(
    dialect: Dialect,
    day: exp.Expression,
    year: exp.Expression,
    datatype: str | None,
    r: RetailCalendar,
) -> exp.Expression:
    """The day number of the first day of the retail year holding `day` (a day number);
    `year` is the first instant of its calendar year."""

    def end(back: int) -> exp.Expression:
        # the last day of the year-end month of calendar year (y - back), as a day number
        first_after = dialect.shift(year.copy(), 12 * -back + r.year_end_month, "month")
        last = exp.Sub(this=dialect.day_number(first_after, datatype), expression=_n(1))
        c, a = (0, 3 - r.year_end_weekday) if r.rule == "last" else (3, 6 - r.year_end_weekday)
        mod = exp.Mod(
            this=_p(exp.Add(this=last.copy(), expression=_n(a + _POSITIVE))), expression=_n(7)
        )
        return _p(exp.Sub(this=exp.Add(this=last, expression=_n(c)), expression=_p(mod)))

    def after(e: exp.Expression) -> exp.Expression:
        return exp.Add(this=e, expression=_n(1))

    return _p(
        exp.Case(
            ifs=[
                exp.If(this=exp.LTE(this=day.copy(), expression=end(1)), true=after(end(2))),
                exp.If(this=exp.LTE(this=day.copy(), expression=end(0)), true=after(end(1))),
            ],
            default=after(end(0)),
        )
    )


def grain_shift(
    dialect: Dialect,
    key: exp.Expression,
    count: int,
    granularity: str,
    datatype: str | None,
    cal: CalendarIr,
) -> exp.Expression:
    """The offset self-join key: the bucket start `key` moved by `count` (signed)
    `granularity` units. Fiscal periods are months; a retail year moves to the same day of
    the retail year `count` years away (week 1 with week 1), none when that year is too short
    (the 53rd week of a year against a 52-week one)."""
    if granularity == "fiscal_quarter":
        return dialect.shift(key, 3 * count, "month")
    if granularity == "fiscal_year":
        return dialect.shift(key, count, "year")
    if granularity != "retail_year":
        return dialect.shift(key, count, granularity)
    assert cal.retail is not None
    day = dialect.day_number(key, datatype)
    # the retail calendar repeats every 400 Gregorian years (146097 days, whole weeks): the
    # day moves by a delta read from the position of the day in that cycle
    cycle = exp.Mod(
        this=_p(exp.Add(this=day.copy(), expression=_n(_CYCLE * 100))), expression=_n(_CYCLE)
    )
    ifs = []
    for upper, delta in retail_shift_table(cal.retail, count):
        then = exp.Null() if delta is None else _n(delta)
        ifs.append(exp.If(this=exp.LT(this=cycle.copy(), expression=_n(upper)), true=then))
    moved = exp.Add(this=day, expression=_p(exp.Case(ifs=ifs)))
    return dialect.from_day_number(moved, datatype)


_CYCLE = 146_097  # days in 400 Gregorian years: 20871 weeks


def retail_shift_table(r: RetailCalendar, count: int) -> list[tuple[int, int | None]]:
    """(exclusive upper cycle position, day delta or None) covering positions 0..146096 of
    the 400-year cycle that starts on 1970-01-01: a day of retail year Y moves to the same
    offset in year Y + count, None past the end of a shorter target year."""
    epoch = dt.date(1970, 1, 1)

    def start(year: int) -> int:
        return (retail_year_end(year - 1, r) - epoch).days + 1

    out: list[tuple[int, int | None]] = []
    year = 1969
    while start(year) < _CYCLE:
        lo, hi = start(year), start(year + 1)
        target = start(year + count)
        fits = min(hi - lo, start(year + count + 1) - target)
        for a, b, delta in ((lo, lo + fits, target - lo), (lo + fits, hi, None)):
            a, b = max(a, 0), min(b, _CYCLE)
            if a >= b:
                continue
            if out and out[-1][1] == delta:
                out[-1] = (b, delta)
            else:
                out.append((b, delta))
        year += 1
    return out
