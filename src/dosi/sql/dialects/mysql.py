"""MySQL 8 and MariaDB 10.5+ (and the MySQL-protocol warehouses TiDB, Doris, StarRocks): no
NULLS clause (a leading CASE key instead), no FULL OUTER JOIN (branches merge through the union
of their keys), no covariance or correlation window functions, and VALUES cannot name columns.
Epochs are TIMESTAMPDIFF / TIMESTAMPADD from 1970-01-01, wall-clock whatever the session
time_zone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, float_statistic, order_outside, sqlglot_null_ordering
from dosi.sql.dialects.sqlite import union_values
from dosi.sql.dialects.time_format import MYSQL_TOKENS, TimeParser
from dosi.sql.dialects.window_support import MYSQL_LACKS

_EPOCH = exp.Literal.string("1970-01-01 00:00:00")
_NO_COVARIANCE = frozenset({"covar_pop", "covar_samp", "corr"}) | MYSQL_LACKS


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


# sub-day truncation as DATE_FORMAT text read back as a DATETIME (no DATE_TRUNC here)
_TRUNC_FORMATS = {
    "second": "%Y-%m-%d %H:%i:%s",
    "minute": "%Y-%m-%d %H:%i:00",
    "hour": "%Y-%m-%d %H:00:00",
}
_DATETIME = exp.DataType.build("DATETIME", dialect="mysql")
_PARTS = {
    "hour": "HOUR",
    "minute": "MINUTE",
    "day": "DAYOFMONTH",
    "doy": "DAYOFYEAR",
    "month": "MONTH",
    "quarter": "QUARTER",
    "year": "YEAR",
}
_TO_DAYS_EPOCH = 719_528  # TO_DAYS('1970-01-01')


@dataclass(frozen=True)
class MySQL(Dialect):
    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        """Sub-day grains as DATE_FORMAT read back as DATETIME; a week is the date less its
        WEEKDAY (0 = Monday), never WEEK() and STR_TO_DATE (year-boundary weeks)."""
        if grain in _TRUNC_FORMATS:
            text = _fn("DATE_FORMAT", expr, exp.Literal.string(_TRUNC_FORMATS[grain]))
            return exp.Cast(this=text, to=_DATETIME.copy())
        if grain == "week":
            return self.week_bucket(expr, 0, None)
        return super().truncate(expr, grain)

    def week_bucket(
        self, expr: exp.Expression, week_start: int, datatype: str | None
    ) -> exp.Expression:
        back: exp.Expression = _fn("WEEKDAY", expr.copy())
        if week_start:
            since = exp.Add(this=back, expression=exp.Literal.number(7 - week_start))
            back = exp.Mod(this=exp.Paren(this=since), expression=exp.Literal.number(7))
        interval = exp.Interval(this=back, unit=exp.var("DAY"))
        return exp.Sub(this=_fn("DATE", expr), expression=interval)

    def date_part(self, expr: exp.Expression, part: str) -> exp.Expression:
        if part == "isodow":
            return exp.Add(this=_fn("WEEKDAY", expr), expression=exp.Literal.number(1))
        if part == "isoweek":  # mode 3: Monday weeks, week 1 holds the year's first Thursday
            return _fn("WEEK", expr, exp.Literal.number(3))
        return _fn(_PARTS[part], expr)

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        return exp.Sub(this=_fn("TO_DAYS", expr), expression=exp.Literal.number(_TO_DAYS_EPOCH))

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        shifted = exp.Add(this=days, expression=exp.Literal.number(_TO_DAYS_EPOCH))
        day = _fn("FROM_DAYS", shifted)
        return day if datatype == "Date" else exp.Cast(this=day, to=_DATETIME.copy())

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        return _fn("TIMESTAMPDIFF", exp.var("MICROSECOND"), _EPOCH.copy(), ts)

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        unit = "MICROSECOND" if per_ms == 1000 else "MILLISECOND"
        if unit == "MILLISECOND":  # MySQL's TIMESTAMPADD has no MILLISECOND unit
            units = exp.Mul(this=exp.Paren(this=units), expression=exp.Literal.number(1000))
        return _fn("TIMESTAMPADD", exp.var("MICROSECOND"), units, _EPOCH.copy())

    def values_table(self, values: Sequence[int], alias: str, column: str) -> exp.Expression:
        return union_values(values, alias, column)

    def finalize(self, tree: exp.Expression) -> exp.Expression:
        """Window statistics over DOUBLE (DECIMAL arguments round them to the argument's
        scale), and ORDER BY on the outside (MySQL calls a select alias that is also a
        joined column ambiguous, and MariaDB refuses to order by an aggregate's alias)."""
        for window in tree.find_all(exp.Window):
            float_statistic(window)
        return order_outside(tree)


# D-FORMAT: STR_TO_DATE (a DATE for date layouts, a DATETIME with hours; %i minutes, %s seconds)
PARSER = TimeParser(date_fn="STR_TO_DATE", ts_fn="STR_TO_DATE", tokens=MYSQL_TOKENS)


def _mysql(name: str, key: str, **kw: object) -> MySQL:
    return MySQL(
        name,
        key=key,
        null_ordering=sqlglot_null_ordering(name),
        supports_nulls_clause=False,
        unsupported_window_functions=_NO_COVARIANCE,
        supports_full_outer_join=False,
        null_safe_full_join=False,
        time_parser=PARSER,
        percentile_style=None,  # MySQL / MariaDB: PERCENTILE_CONT is a window function only
        column_catalog="database",
        **kw,  # type: ignore[arg-type]
    )


MYSQL = _mysql("mysql", "mysql", streaming=True)
MARIADB = _mysql("mysql", "mariadb", streaming=True)
TIDB = _mysql("mysql", "tidb")
# Doris and StarRocks have no recursive WITH: no generated time spine
DORIS = MySQL(
    "doris",
    null_ordering=sqlglot_null_ordering("doris"),
    # none of the 1.14 window shapes is documented for them as a window function / clause
    unsupported_window_functions=MYSQL_LACKS,
    null_safe_full_join=False,
    time_parser=PARSER,
    spine_series=None,
    percentile_style=None,
)
STARROCKS = MySQL(
    "starrocks",
    null_ordering=sqlglot_null_ordering("starrocks"),
    # none of the 1.14 window shapes is documented for them as a window function / clause
    unsupported_window_functions=MYSQL_LACKS,
    null_safe_full_join=False,
    time_parser=PARSER,
    spine_series=None,
    percentile_style=None,
)
