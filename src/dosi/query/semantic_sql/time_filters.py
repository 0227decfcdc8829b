"""Comparisons of a time column with constants, folded into one `[start, end)` range.

A grained column (`metric_time__month`) compares its bucket start: `bucket >= L` holds for
rows from the first bucket starting at or after L, `bucket <= L` for rows before the bucket
after L's, and so on; a column as stored compares day by day (a DATE) or exactly (a
TIMESTAMP). The range becomes the query's `time_range`, so window metrics keep reading the
rows before it (an offset's previous month), as the dosi query would.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from sqlglot import exp

from dosi.query.semantic_sql.errors import UNSUPPORTED, refuse, snippet

_ONE_US = dt.timedelta(microseconds=1)


@dataclass(frozen=True)
class TimeRange:
    """Rows with start <= t < end (None: unbounded); empty when start >= end."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None

    def meet(self, other: TimeRange) -> TimeRange:
        starts = [x for x in (self.start, other.start) if x is not None]
        ends = [x for x in (self.end, other.end) if x is not None]
        return TimeRange(max(starts) if starts else None, min(ends) if ends else None)

    @property
    def empty(self) -> bool:
        return self.start is not None and self.end is not None and self.start >= self.end


def floor(t: dt.datetime, grain: str) -> dt.datetime:
    day = dt.datetime(t.year, t.month, t.day)
    if grain == "day":
        return day
    if grain == "week":  # ISO weeks start on Monday (date_trunc('week'))
        return day - dt.timedelta(days=day.weekday())
    if grain == "month":
        return dt.datetime(t.year, t.month, 1)
    if grain == "quarter":
        return dt.datetime(t.year, (t.month - 1) // 3 * 3 + 1, 1)
    return dt.datetime(t.year, 1, 1)


def following(t: dt.datetime, grain: str | None) -> dt.datetime:
    """The start of the bucket after the one holding `t` (`t` + 1 microsecond when exact)."""
    if grain is None:
        return t + _ONE_US
    start = floor(t, grain)
    if grain == "day":
        return start + dt.timedelta(days=1)
    if grain == "week":
        return start + dt.timedelta(days=7)
    months = {"month": 1, "quarter": 3, "year": 12}[grain]
    index = start.year * 12 + start.month - 1 + months
    return dt.datetime(index // 12, index % 12 + 1, 1)


def ceiling(t: dt.datetime, grain: str | None) -> dt.datetime:
    if grain is None or floor(t, grain) == t:
        return t
    return following(t, grain)


def compare(op: str, literal: dt.datetime, grain: str | None) -> TimeRange:
    """The rows whose bucket (at `grain`; None: exact) satisfies `bucket op literal`."""
    if op == ">=":
        return TimeRange(start=ceiling(literal, grain))
    if op == ">":
        return TimeRange(start=following(literal, grain))
    if op == "<":
        return TimeRange(end=ceiling(literal, grain))
    if op == "<=":
        return TimeRange(end=following(literal, grain))
    # "=": a bucket equals only its own start
    if grain is not None and floor(literal, grain) != literal:
        return TimeRange(start=literal, end=literal)
    return TimeRange(start=literal, end=following(literal, grain))


_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "=": "="}
_OPS: dict[type[exp.Expression], str] = {
    exp.GTE: ">=",
    exp.GT: ">",
    exp.LTE: "<=",
    exp.LT: "<",
    exp.EQ: "=",
}


def literal_time(node: exp.Expression, now: dt.datetime | None = None) -> dt.datetime | None:
    """The constant a time comparison reads, or None when `node` is not one: a string,
    `DATE '...'`, `'...'::timestamp`, `TO_TIMESTAMP('...', fmt)` / `TO_DATE` (Superset),
    `timestamp with time zone '...Z'` (Metabase; only UTC, read as the wall clock), and the
    relative bounds dashboards send: `NOW()`, `CURRENT_DATE`, `CURRENT_TIMESTAMP`, plus or minus
    an `INTERVAL`, `DATE_TRUNC` and casts of those (the clock is the server's, naive)."""
    if isinstance(node, exp.Paren):
        return literal_time(node.this, now)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        inner = literal_time(node.this, now)
        if inner is not None and node.to.this == exp.DataType.Type.DATE:
            return dt.datetime(inner.year, inner.month, inner.day)
        return inner
    if isinstance(node, (exp.StrToTime, exp.StrToDate)):
        return literal_time(node.this, now)
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("to_timestamp", "to_date"):
        return literal_time(node.expressions[0], now) if node.expressions else None
    if isinstance(node, exp.Literal) and node.is_string:
        return parse_time(node.this, node)
    clock = now or dt.datetime.now()
    if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDatetime)) or (
        isinstance(node, exp.Anonymous) and node.name.lower() in ("now", "localtimestamp")
    ):
        return clock
    if isinstance(node, exp.CurrentDate):
        return dt.datetime(clock.year, clock.month, clock.day)
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
        unit = node.args.get("unit")
        base = literal_time(node.this, now)
        grain = unit.name.lower() if unit is not None else ""
        return floor(base, grain) if base is not None and grain in _GRAINS else None
    if isinstance(node, (exp.Add, exp.Sub)):
        base = literal_time(node.this, now)
        step = _interval(node.expression)
        if base is None or step is None:
            return None
        amount, unit = step
        return _shift(base, -amount if isinstance(node, exp.Sub) else amount, unit)
    return None


_GRAINS = ("day", "week", "month", "quarter", "year")
_UNITS = {
    "second": "seconds",
    "minute": "minutes",
    "hour": "hours",
    "day": "days",
    "week": "weeks",
    "month": "months",
    "quarter": "quarters",
    "year": "years",
}


def _interval(node: exp.Expression) -> tuple[int, str] | None:
    if not isinstance(node, exp.Interval):
        return None
    text = node.this.name if node.this is not None else ""
    unit = node.args.get("unit")
    parts = text.split()
    if unit is None and len(parts) == 2:
        text, unit_text = parts
    else:
        unit_text = unit.name if unit is not None else ""
    unit_text = unit_text.lower().rstrip("s")
    try:
        amount = int(text)
    except ValueError:
        return None
    return (amount, unit_text) if unit_text in _UNITS else None


def _shift(t: dt.datetime, amount: int, unit: str) -> dt.datetime:
    if unit in ("month", "quarter", "year"):
        months = amount * {"month": 1, "quarter": 3, "year": 12}[unit]
        index = t.year * 12 + t.month - 1 + months
        year, month = divmod(index, 12)
        last = [
            31,
            29 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 28,
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ][month]
        return t.replace(year=year, month=month + 1, day=min(t.day, last))
    return t + dt.timedelta(**{_UNITS[unit]: amount})


_OFFSET = re.compile(r"(Z|[+-]\d{2}(:?\d{2})?)$")


def parse_time(text: str, node: exp.Expression) -> dt.datetime:
    raw = text.strip()
    date_part, rest = raw[:10], raw[10:]
    offset = _OFFSET.search(rest)
    if offset is not None:
        if offset.group(1) not in ("Z", "+00", "+0000", "+00:00", "-00", "-00:00"):
            raise refuse(
                UNSUPPORTED,
                f"`{snippet(node)}` carries a UTC offset; times are the data's own wall clock",
                hint="write the bound without an offset",
            )
        rest = rest[: offset.start()]
    try:
        value = dt.datetime.fromisoformat(date_part + rest.replace(" ", "T", 1))
    except ValueError:
        raise refuse(
            UNSUPPORTED,
            f"`{snippet(node)}` is not an ISO date or timestamp",
            hint="compare a time column with 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'",
        ) from None
    return value.replace(tzinfo=None)


def comparison(node: exp.Expression) -> tuple[exp.Expression, str, exp.Expression] | None:
    """`(left, operator, right)` of a binary comparison, None for anything else."""
    op = _OPS.get(type(node))
    if op is None:
        return None
    left, right = node.this, node.expression
    return (left, op, right)


def flipped(op: str) -> str:
    return _FLIP[op]


def bound_text(t: dt.datetime) -> str:
    """A `time_range` bound: a date at midnight, else an ISO timestamp."""
    if t == dt.datetime(t.year, t.month, t.day):
        return t.date().isoformat()
    return t.isoformat(timespec="microseconds" if t.microsecond else "seconds")
