"""Apache Spark (and Databricks, Hive): sqlglot renders a DATE truncation as TRUNC(date, unit),
which is NULL for the day grain (TRUNC knows only year, quarter, month and week), so buckets
truncate a TIMESTAMP_NTZ with DATE_TRUNC: every grain, wall-clock, no session time zone."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import JAVA_TOKENS, TimeParser

# D-FORMAT: to_date / to_timestamp with datetime patterns (yyyy, MM, dd, HH, mm, ss)
PARSER = TimeParser(date_fn="TO_DATE", ts_fn="TO_TIMESTAMP", tokens=JAVA_TOKENS)

_NTZ = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")


@dataclass(frozen=True)
class Spark(Dialect):
    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        return exp.TimestampTrunc(this=exp.Cast(this=expr, to=_NTZ.copy()), unit=exp.var(grain))

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        """UNIX_MICROS takes timestamps only: a DATE is cast first (midnight in the session
        time zone, UTC in sessions dosi starts)."""
        return exp.UnixMicros(this=exp.Cast(this=ts, to=_TIMESTAMP.copy()))


SPARK = Spark(
    "spark",
    null_ordering=sqlglot_null_ordering("spark"),
    streaming=True,
    time_parser=PARSER,
    spine_series="sequence",
)
DATABRICKS = Spark(
    "databricks",
    null_ordering=sqlglot_null_ordering("databricks"),
    streaming=True,
    time_parser=PARSER,
    spine_series="sequence",
)
# Hive has neither SEQUENCE nor a recursive WITH
HIVE = Spark(
    "hive", null_ordering=sqlglot_null_ordering("hive"), time_parser=PARSER, spine_series=None
)
