"""ClickHouse (a server, or embedded chDB): an outer join fills the missing side with type
defaults ('' and 1970-01-01) unless `join_use_nulls = 1`, so every statement carries that
setting. Epochs go through DateTime64(6, 'UTC'), so a DATE is UTC midnight and a DateTime64
keeps its instant; VALUES cannot name columns, so window offsets are a UNION ALL.

`cume_dist` exists as a window function only on ClickHouse 25.11 and later (added in late
2025): with no version fact it is gated (`dialect_unsupported_window_function`, WIN-RNK-10);
`at_version` (a `clickhouse@<version>` dialect name, a connection's `server_version`, or the
version chDB reports) lifts the gate on servers that have it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, float_statistic, sqlglot_null_ordering
from dosi.sql.dialects.sqlite import union_values
from dosi.sql.dialects.time_format import MYSQL_TOKENS, TimeParser
from dosi.sql.dialects.window_support import CLICKHOUSE_LACKS


def _to_date(value: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="toDate", expressions=[value])


def _to_datetime64(value: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="toDateTime64", expressions=[value, exp.Literal.number(6)])


# D-FORMAT: parseDateTime (MySQL-style tokens; a DateTime, so a date layout goes through
# toDate). Its range is about 1970..2106 (FMT-GRP-07); range filters never call it.
PARSER = TimeParser(
    ts_fn="parseDateTime",
    tokens={**MYSQL_TOKENS, "S": "%S"},
    to_date=_to_date,
    parses_null_slots=True,
    to_timestamp=_to_datetime64,  # a DateTime is seconds (UInt32 in Arrow): a timestamp
)


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


_PARTS = {
    "isodow": "toDayOfWeek",  # mode 0: Monday = 1 .. Sunday = 7
    "isoweek": "toISOWeek",
    "hour": "toHour",
    "minute": "toMinute",
    "day": "toDayOfMonth",
    "doy": "toDayOfYear",
    "month": "toMonth",
    "quarter": "toQuarter",
    "year": "toYear",
}


def _epoch_day() -> exp.Expression:
    return _fn("toDate", exp.Literal.string("1970-01-01"))


#: The first ClickHouse release with the `cume_dist` window function (25.11, November 2025).
CUME_DIST_SINCE = (25, 11)
#: Window functions a ClickHouse server of unknown version may lack.
VERSION_GATED = frozenset({"cume_dist"})


@dataclass(frozen=True)
class ClickHouse(Dialect):
    #: The server's version when known (None: assume a server without the gated functions).
    server_version: tuple[int, ...] | None = None

    def date_part(self, expr: exp.Expression, part: str) -> exp.Expression:
        return exp.Cast(this=_fn(_PARTS[part], expr), to=exp.DataType.build("BIGINT"))

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        return _fn("dateDiff", exp.Literal.string("day"), _epoch_day(), _fn("toDate", expr))

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        day = _fn("addDays", _epoch_day(), days)
        if datatype == "Date":
            return day
        return _fn("toDateTime64", day, exp.Literal.number(6), exp.Literal.string("UTC"))

    def window_function_since(self, function: str) -> tuple[int, ...] | None:
        return CUME_DIST_SINCE if function in VERSION_GATED else None

    def at_version(self, version: tuple[int, ...]) -> ClickHouse:
        lifted = version[:2] >= CUME_DIST_SINCE
        gated = self.unsupported_window_functions - VERSION_GATED
        if not lifted:
            gated = gated | VERSION_GATED
        return replace(self, server_version=version, unsupported_window_functions=gated)

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        utc = _fn("toDateTime64", ts, exp.Literal.number(6), exp.Literal.string("UTC"))
        return _fn("toUnixTimestamp64Micro", utc)

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        micros = exp.Cast(this=units, to=exp.DataType.build("BIGINT"))
        name = "fromUnixTimestamp64Micro" if per_ms == 1000 else "fromUnixTimestamp64Milli"
        return _fn(name, micros, exp.Literal.string("UTC"))

    def values_table(self, values: Sequence[int], alias: str, column: str) -> exp.Expression:
        return union_values(values, alias, column)

    def as_timestamp(self, expr: exp.Expression) -> exp.Expression:
        """DateTime64(6): a DateTime (seconds) stops at 1970 and 2106."""
        return _to_datetime64(expr)

    def text_part(self, text: exp.Expression, start: int, width: int) -> exp.Expression:
        """`substring` counts bytes on ClickHouse; a layout's offsets count characters."""
        return _fn("substringUTF8", text, exp.Literal.number(start), exp.Literal.number(width))

    def finalize(self, tree: exp.Expression) -> exp.Expression:
        """SETTINGS join_use_nulls = 1 on the outermost SELECT (it applies to the whole
        query): outer joins then yield NULL for the missing side, as in standard SQL. Window
        statistics read their arguments as Float64 (ClickHouse refuses mixed Int64 / Decimal
        pairs) and read NaN (one-row samples) as NULL, as every other engine returns;
        `cume_dist` is spelled in ClickHouse's case-sensitive name."""
        tree = tree.transform(_window_statistics)
        if isinstance(tree, exp.Select):
            setting = exp.EQ(this=exp.column("join_use_nulls"), expression=exp.Literal.number(1))
            tree.set("settings", [setting])
        return tree


def _window_statistics(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.CumeDist):
        return exp.Anonymous(this="cume_dist", expressions=[])
    if not float_statistic(node):
        return node
    is_nan = _fn("isNaN", node.copy())
    return exp.Case(ifs=[exp.If(this=is_nan, true=exp.Null())], default=node.copy())


CLICKHOUSE = ClickHouse(
    "clickhouse",
    null_ordering=sqlglot_null_ordering("clickhouse"),
    unsupported_window_functions=VERSION_GATED | CLICKHOUSE_LACKS,
    streaming=True,
    time_parser=PARSER,
    spine_series="array_join",
    percentile_style="clickhouse",
    groups_by_correlated_subquery=False,
)
