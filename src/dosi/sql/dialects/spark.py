"""Apache Spark (and Databricks, Hive): sqlglot renders a DATE truncation as TRUNC(date, unit),
which is NULL for the day grain (TRUNC knows only year, quarter, month and week), so buckets
truncate a TIMESTAMP_NTZ with DATE_TRUNC: every grain, wall-clock, no session time zone."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

_NTZ = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")


@dataclass(frozen=True)
class Spark(Dialect):
    def bucket(self, expr: exp.Expression, grain: str) -> exp.Expression:
        return exp.TimestampTrunc(this=exp.Cast(this=expr, to=_NTZ.copy()), unit=exp.var(grain))


SPARK = Spark("spark", null_ordering=sqlglot_null_ordering("spark"), streaming=True)
DATABRICKS = Spark("databricks", null_ordering=sqlglot_null_ordering("databricks"), streaming=True)
HIVE = Spark("hive", null_ordering=sqlglot_null_ordering("hive"))
