"""Apache Spark (and Databricks, Hive): sqlglot renders a DATE truncation as TRUNC(date, unit),
which is NULL for the day grain (TRUNC knows only year, quarter, month and week), so buckets
truncate a TIMESTAMP_NTZ with DATE_TRUNC: every grain, wall-clock, no session time zone."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import JAVA_TOKENS, TimeParser
from dosi.sql.dialects.window_support import HIVE_LACKS, SPARK_LACKS

# D-FORMAT: to_date / to_timestamp with datetime patterns (yyyy, MM, dd, HH, mm, ss)
PARSER = TimeParser(date_fn="TO_DATE", ts_fn="TO_TIMESTAMP", tokens=JAVA_TOKENS)

_NTZ = exp.DataType.build("TIMESTAMP_NTZ", dialect="spark")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")


def _n(value: int) -> exp.Expression:
    return exp.Literal.number(value)


_PARTS = {
    "isoweek": "WEEKOFYEAR",  # ISO 8601 weeks
    "hour": "HOUR",
    "minute": "MINUTE",
    "day": "DAYOFMONTH",
    "doy": "DAYOFYEAR",
    "month": "MONTH",
    "quarter": "QUARTER",
    "year": "YEAR",
}


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


@dataclass(frozen=True)
class Spark(Dialect):
    def frame_percentile(
        self, function: str, value: exp.Expression, fraction: float | None
    ) -> exp.Expression:
        """percentile(x, p), Spark's exact interpolated percentile: the one of its percentile
        aggregates that takes a window frame (percentile_disc is gated)."""
        p = exp.Literal.number(0.5 if function == "median" else fraction)
        return _fn("percentile", value, p)

    def date_part(self, expr: exp.Expression, part: str) -> exp.Expression:
        """DAYOFWEEK counts from Sunday = 1: (d + 5) % 7 + 1 is ISO (Monday = 1)."""
        if part == "isodow":
            shifted = exp.Paren(this=exp.Add(this=_fn("DAYOFWEEK", expr), expression=_n(5)))
            return exp.Add(this=exp.Mod(this=shifted, expression=_n(7)), expression=_n(1))
        return _fn(_PARTS[part], expr)

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        return _fn("UNIX_DATE", exp.Cast(this=expr, to=exp.DataType.build("DATE")))

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        day = _fn("DATE_FROM_UNIX_DATE", days)
        return day if datatype == "Date" else exp.Cast(this=day, to=_NTZ.copy())

    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        return exp.TimestampTrunc(this=exp.Cast(this=expr, to=_NTZ.copy()), unit=exp.var(grain))

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        """UNIX_MICROS takes timestamps only: a DATE is cast first (midnight in the session
        time zone, UTC in sessions dosi starts)."""
        return exp.UnixMicros(this=exp.Cast(this=ts, to=_TIMESTAMP.copy()))


SPARK = Spark(
    "spark",
    unsupported_window_functions=SPARK_LACKS,
    null_ordering=sqlglot_null_ordering("spark"),
    streaming=True,
    time_parser=PARSER,
    spine_series="sequence",
    percentile_style="spark",
)
DATABRICKS = Spark(
    "databricks",
    unsupported_window_functions=SPARK_LACKS,
    null_ordering=sqlglot_null_ordering("databricks"),
    streaming=True,
    time_parser=PARSER,
    spine_series="sequence",
    percentile_style="spark",
)
# Hive has neither SEQUENCE nor a recursive WITH
HIVE = Spark(
    "hive",
    unsupported_window_functions=HIVE_LACKS,
    null_ordering=sqlglot_null_ordering("hive"),
    time_parser=PARSER,
    spine_series=None,
    percentile_style="spark",
)
