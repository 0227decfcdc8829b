"""Apache DataFusion: rendered with sqlglot's PostgreSQL generator (DataFusion's SQL follows
PostgreSQL's), except the epoch conversions: EXTRACT(EPOCH ...) is a float there, so epochs go
through exact integer casts of a microsecond timestamp (`arrow_cast`)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dosi.sql.dialects.base import Dialect
from dosi.sql.dialects.postgres import Postgres
from dosi.sql.dialects.time_format import TimeParser
from dosi.sql.dialects.window_support import DATAFUSION_LACKS

_BIGINT = exp.DataType.build("BIGINT")
_INT = exp.DataType.build("INT")
_MICROS = "Timestamp(Microsecond, None)"


def _arrow_cast(value: exp.Expression, arrow_type: str) -> exp.Expression:
    return exp.Anonymous(this="arrow_cast", expressions=[value, exp.Literal.string(arrow_type)])


@dataclass(frozen=True)
class DataFusion(Postgres):
    def bucket(
        self,
        expr: exp.Expression,
        grain: str,
        datatype: str | None = None,
        week_start: int = 0,
    ) -> exp.Expression:
        """DATE_TRUNC then a DATE cast: DataFusion truncates a DATE without a time zone."""
        return Dialect.bucket(self, expr, grain, datatype, week_start)

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        """A Date32 cast to an integer is its day count from 1970-01-01."""
        day = exp.Cast(this=expr, to=exp.DataType.build("DATE"))
        return exp.Cast(this=exp.Cast(this=day, to=_INT.copy()), to=_BIGINT.copy())

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        day = exp.Cast(this=exp.Cast(this=days, to=_INT.copy()), to=exp.DataType.build("DATE"))
        if datatype == "Date":
            return day
        return exp.Cast(this=day, to=exp.DataType.build("TIMESTAMP"))

    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        return exp.Cast(this=_arrow_cast(ts, _MICROS), to=_BIGINT.copy())

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        micros: exp.Expression = exp.Cast(this=units, to=_BIGINT.copy())
        if per_ms != 1000:
            micros = exp.Mul(
                this=exp.Paren(this=micros), expression=exp.Literal.number(1000 // per_ms)
            )
        return _arrow_cast(micros, _MICROS)

    def finalize(self, tree: exp.Expression) -> exp.Expression:
        """DataFusion has no DIV(): integer `/` of two integers already truncates. Its parser
        binds `a IS NOT DISTINCT FROM b AND c` as `a IS NOT DISTINCT FROM (b AND c)`, so a
        null-safe comparison inside AND / OR / NOT is parenthesized (the merge's multi-key
        joins)."""
        return tree.transform(_finish)

    def frame_percentile(
        self, function: str, value: exp.Expression, fraction: float | None
    ) -> exp.Expression:
        p = exp.Literal.number(0.5 if function == "median" else fraction)
        return _percentile_cont(value, p)


def _percentile_cont(value: exp.Expression, fraction: exp.Expression) -> exp.Expression:
    """DataFusion's percentile_cont(x, p) aggregate (the PostgreSQL generator would write the
    ordered-set form, which DataFusion refuses under OVER)."""
    return exp.Anonymous(this="percentile_cont", expressions=[value, fraction])


def _finish(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.IntDiv):
        div = exp.Div(this=node.this, expression=node.expression, typed=True)
        return exp.Cast(this=div, to=_BIGINT.copy())
    if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)) and isinstance(
        node.parent, (exp.Connector, exp.Not)
    ):
        return exp.Paren(this=node.copy())
    return node


# DataFusion sorts NULLs last ascending and first descending (PostgreSQL's "large" NULLs)
DATAFUSION = DataFusion(
    "postgres",
    unsupported_window_functions=DATAFUSION_LACKS,
    key="datafusion",
    null_ordering="nulls_are_large",
    null_safe_full_join=False,
    streaming=True,
    # D-FORMAT: to_date / to_timestamp with chrono (strftime) formats
    time_parser=TimeParser(date_fn="to_date", ts_fn="to_timestamp"),
    spine_series="unnest_generate_series",
    groups_by_correlated_subquery=False,  # "Invalid (non-executable) plan after Analyzer"
    percentile_style="datafusion",
)
