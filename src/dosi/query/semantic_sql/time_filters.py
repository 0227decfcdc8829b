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


def literal_time(node: exp.Expression) -> dt.datetime | None:
    """The constant a time comparison reads: a string, `DATE '...'`, `'...'::timestamp`,
    `TO_TIMESTAMP('...', fmt)` / `TO_DATE` (Superset), `timestamp with time zone '...Z'`
    (Metabase; only UTC, read as the wall clock); None when `node` is not a constant."""
    for _ in range(8):  # a few wrappers deep at most
        if isinstance(node, (exp.Cast, exp.TryCast, exp.Paren, exp.StrToTime, exp.StrToDate)):
            node = node.this
        elif isinstance(node, exp.Anonymous) and node.name.lower() in ("to_timestamp", "to_date"):
            node = node.expressions[0] if node.expressions else exp.null()
        else:
            break
    if not isinstance(node, exp.Literal) or not node.is_string:
        return None
    return parse_time(node.this, node)


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
