"""Dialects as facts plus a few builders (STYLE.md: sqlglot's dialect classes).

The planner asks a Dialect how to bucket, shift or bound time; plain rendering is sqlglot's.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlglot import exp

from dosi.errors import QueryError, closest

_DATE = exp.DataType.build("DATE")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_TEMPORAL_TS = {"DateTime", "DateTimeTz"}


@dataclass(frozen=True)
class Dialect:
    name: str  # sqlglot dialect name
    # sqlglot's vocabulary: nulls_are_last (always last), nulls_are_large (ASC last, DESC
    # first), nulls_are_small (ASC first, DESC last)
    null_ordering: str = "nulls_are_last"
    supports_nulls_clause: bool = True
    supports_two_arg_stat_window: bool = True
    supports_cume_dist: bool = True
    supports_full_outer_join: bool = True
    null_safe_full_join: bool = True  # FULL JOIN ... ON a IS NOT DISTINCT FROM b is accepted

    def bucket(
        self, expr: exp.Expression, grain: str, datatype: str | None = None
    ) -> exp.Expression:
        """The start of the grain bucket holding `expr`. Bucket values keep their type: a
        bucket of a Date field is a DATE (a month of a DATE column is `2024-01-01`), anything
        else a timestamp, as DATE_TRUNC yields."""
        if datatype == "Date":
            if grain == "day":
                return exp.Cast(this=expr, to=_DATE.copy())
            return exp.Cast(this=self.truncate(expr, grain), to=_DATE.copy())
        return self.truncate(expr, grain)

    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        """DATE_TRUNC: the timestamp starting the grain period holding `expr`."""
        return exp.DateTrunc(unit=exp.var(grain.upper()), this=expr)

    def time_literal(self, value: dt.date | dt.datetime, datatype: str | None) -> exp.Expression:
        if isinstance(value, dt.datetime):
            text = value.replace(tzinfo=None).isoformat(sep=" ")
            return exp.Cast(this=exp.Literal.string(text), to=_TIMESTAMP.copy())
        if datatype in _TEMPORAL_TS:
            return exp.Cast(
                this=exp.Literal.string(f"{value.isoformat()} 00:00:00"), to=_TIMESTAMP.copy()
            )
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=_DATE.copy())

    def shift(self, expr: exp.Expression, count: int, grain: str) -> exp.Expression:
        """`expr` moved by `count` grain units (negative = back), calendar-correct."""
        unit, n = ("DAY", count * 7) if grain == "week" else (grain.upper(), count)
        if grain == "quarter":
            unit, n = "MONTH", count * 3
        interval = exp.Interval(this=exp.Literal.string(str(abs(n))), unit=exp.var(unit))
        op = exp.Add if n >= 0 else exp.Sub
        return op(this=expr, expression=interval)

    def nulls_first_default(self, desc: bool) -> bool:
        if self.null_ordering == "nulls_are_large":
            return desc
        if self.null_ordering == "nulls_are_small":
            return not desc
        return False

    def ordered(
        self, expr: exp.Expression, desc: bool, nulls: str | None = None
    ) -> list[exp.Ordered]:
        """Sort keys for `expr`; a NULLS clause only where it differs from the default (1.9
        `order.nulls`), and a leading CASE key where the dialect has no NULLS clause."""
        default_first = self.nulls_first_default(desc)
        if nulls is None or (nulls == "first") == default_first:
            return [exp.Ordered(this=expr, desc=desc, nulls_first=default_first)]
        want_first = nulls == "first"
        if self.supports_nulls_clause:
            return [exp.Ordered(this=expr, desc=desc, nulls_first=want_first)]
        is_null = exp.Is(this=expr.copy(), expression=exp.Null())
        key = exp.Case(
            ifs=[exp.If(this=is_null, true=exp.Literal.number(0 if want_first else 1))],
            default=exp.Literal.number(1 if want_first else 0),
        )
        return [
            exp.Ordered(this=key, desc=False, nulls_first=self.nulls_first_default(False)),
            exp.Ordered(this=expr, desc=desc, nulls_first=default_first),
        ]

    def trunc_date(self, value: exp.Expression, grain: str) -> exp.Expression:
        """DATE-typed truncation of a bound, so range filters can skip row groups."""
        return exp.Cast(this=self.bucket(value, grain), to=_DATE.copy())


@dataclass(frozen=True)
class MySQL(Dialect):
    pass


@dataclass(frozen=True)
class Postgres(Dialect):
    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        """DATE_TRUNC of a DATE resolves to the timestamptz overload on PostgreSQL: the bucket
        is midnight in the session TimeZone (01:00 where DST starts at midnight, e.g.
        America/Santiago) and typed timestamptz. Truncating a plain TIMESTAMP keeps the
        wall-clock bucket every other dialect returns (a Date field's bucket is then cast
        back to DATE by `bucket`)."""
        return super().truncate(exp.Cast(this=expr, to=_TIMESTAMP.copy()), grain)


_LARGE, _SMALL = "nulls_are_large", "nulls_are_small"
DIALECTS: dict[str, Dialect] = {
    "duckdb": Dialect("duckdb"),
    "postgres": Postgres("postgres", _LARGE, null_safe_full_join=False),
    "snowflake": Dialect("snowflake", _LARGE),
    "bigquery": Dialect("bigquery", _SMALL),
    "databricks": Dialect("databricks", _SMALL),
    "spark": Dialect("spark", _SMALL),
    "hive": Dialect("hive", _SMALL),
    "trino": Dialect("trino", _LARGE),
    "oracle": Dialect("oracle", _LARGE),
    "redshift": Dialect(
        "redshift", _LARGE, supports_two_arg_stat_window=False, null_safe_full_join=False
    ),
    "clickhouse": Dialect("clickhouse", "nulls_are_last", supports_cume_dist=False),
    "mysql": MySQL(
        "mysql",
        _SMALL,
        supports_nulls_clause=False,
        supports_two_arg_stat_window=False,
        supports_full_outer_join=False,
        null_safe_full_join=False,
    ),
    "tidb": MySQL(
        "mysql",
        _SMALL,
        supports_nulls_clause=False,
        supports_two_arg_stat_window=False,
        supports_full_outer_join=False,
        null_safe_full_join=False,
    ),
    "doris": MySQL("doris", _SMALL, null_safe_full_join=False),
    "starrocks": MySQL("starrocks", _SMALL, null_safe_full_join=False),
    "sqlite": Dialect("sqlite", _SMALL, null_safe_full_join=False),
}
ALIASES = {"postgresql": "postgres", "pg": "postgres", "datafusion": "postgres", "mariadb": "mysql"}


def get_dialect(name: str | None) -> Dialect:
    key = (name or "duckdb").lower()
    key = ALIASES.get(key, key)
    d = DIALECTS.get(key)
    if d is None:
        raise QueryError(
            "unknown_dialect",
            f"unknown SQL dialect `{name}`",
            candidates=closest(key, DIALECTS) or sorted(DIALECTS),
            hint="dialects: " + ", ".join(sorted(DIALECTS)),
        )
    return d
