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

_EPOCH = exp.Literal.string("1970-01-01 00:00:00")
_NO_COVARIANCE = frozenset({"covar_pop", "covar_samp", "corr"})


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


@dataclass(frozen=True)
class MySQL(Dialect):
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
        **kw,  # type: ignore[arg-type]
    )


MYSQL = _mysql("mysql", "mysql", streaming=True)
MARIADB = _mysql("mysql", "mariadb", streaming=True)
TIDB = _mysql("mysql", "tidb")
# Doris and StarRocks have no recursive WITH: no generated time spine
DORIS = MySQL(
    "doris",
    null_ordering=sqlglot_null_ordering("doris"),
    null_safe_full_join=False,
    time_parser=PARSER,
    spine_series=None,
)
STARROCKS = MySQL(
    "starrocks",
    null_ordering=sqlglot_null_ordering("starrocks"),
    null_safe_full_join=False,
    time_parser=PARSER,
    spine_series=None,
)
