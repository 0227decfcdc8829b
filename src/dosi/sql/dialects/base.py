"""The dialect base class: facts plus the builders the renderer asks for (docs/architecture.md,
"Design rules", as sqlglot's dialect classes). A subclass per warehouse overrides only what
differs; nothing outside this package branches on a dialect's name.

Facts a dialect states (each checked against sqlglot or an engine in tests/sql/dialects/):
- `null_ordering`: sqlglot's vocabulary, read from sqlglot's own dialect class;
- `supports_nulls_clause`: ORDER BY ... NULLS FIRST/LAST is accepted;
- `unsupported_window_functions`: window functions the engine lacks (a structured
  `dialect_unsupported_window_function` error before any SQL runs);
- `null_safe_full_join`: FULL JOIN ... ON a IS NOT DISTINCT FROM b is accepted (the merge
  strategy; otherwise the union of branch keys LEFT JOINs every branch);
- `streaming`: streaming windows render as portable epoch arithmetic (`epoch_us`,
  `from_epoch`);
- `week_start`: the weekday a week bucket starts on (ISO Monday everywhere dosi executes);
- `time_parser`: how a D-FORMAT stored time value is parsed (dosi.sql.dialects.time_format);
- `pre_aggregate_count_guard`: the day pre-aggregation grouped by the date alone carries a
  no-op `HAVING COUNT(*) > 0` (DuckDB 2.0 runs a perfect-hash GROUP BY on a DATE key with a
  lone SUM about 2x slower without a COUNT(*) beside it: docs/performance.md, rule 4).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect as SqlglotDialect

from dosi.ext.time_format import TimeFormat
from dosi.sql.dialects.time_format import CAST_ONLY, TimeParser, decode

_DATE = exp.DataType.build("DATE")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_BIGINT = exp.DataType.build("BIGINT")
_TEMPORAL_TS = {"DateTime", "DateTimeTz"}
LARGE, SMALL, LAST = "nulls_are_large", "nulls_are_small", "nulls_are_last"


@cache
def _sqlglot_dialect(name: str) -> SqlglotDialect:
    """sqlglot's dialect instance, made once (its lookup is per call otherwise)."""
    return SqlglotDialect.get_or_raise(name)


def sqlglot_null_ordering(name: str) -> str:
    """sqlglot's NULL_ORDERING for a dialect (the default placement its generator assumes)."""
    return str(SqlglotDialect.get_or_raise(name).NULL_ORDERING)


@dataclass(frozen=True)
class Dialect:
    name: str  # the sqlglot dialect the SQL text is rendered with
    key: str = ""  # the name dosi knows it by (a connection type); defaults to `name`
    null_ordering: str = LAST
    supports_nulls_clause: bool = True
    unsupported_window_functions: frozenset[str] = field(default_factory=frozenset)
    supports_full_outer_join: bool = True
    null_safe_full_join: bool = True
    streaming: bool = False
    week_start: str = "monday"
    time_parser: TimeParser = CAST_ONLY
    pre_aggregate_count_guard: bool = False
    # its engine returns dosi's canonical Arrow types already (UTC wall clocks, int64, float64):
    # results from any other engine are conformed to them (dosi.execute.shape.conform)
    canonical_result_types: bool = False

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)

    # -- window-function gates --------------------------------------------------------------
    def supports_window_function(self, function: str) -> bool:
        return function not in self.unsupported_window_functions

    # -- time ----------------------------------------------------------------------------------
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

    # -- D-FORMAT stored time values --------------------------------------------------------
    def decode_time(self, raw: exp.Expression, fmt: TimeFormat) -> exp.Expression:
        """The stored value `raw` (a D-FORMAT layout) as a DATE, or a TIMESTAMP for layouts
        with hours (FMT-GRP-05/06), parsed the way `time_parser` says."""
        return decode(raw, fmt, self.time_parser, self.text_part)

    def text_part(self, text: exp.Expression, start: int, width: int) -> exp.Expression:
        """`width` characters of `text` from 1-based character `start`."""
        return exp.Substring(
            this=text, start=exp.Literal.number(start), length=exp.Literal.number(width)
        )

    def encoded_literal(self, value: str | int) -> exp.Expression:
        """A bound folded into the stored encoding (FMT-FLT-01): compared with the raw column."""
        if isinstance(value, int):
            return exp.Literal.number(value)
        return exp.Literal.string(value)

    def time_operand(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        """The time column as range filters compare it with `time_literal` bounds."""
        return expr

    @staticmethod
    def shift_units(count: int, grain: str) -> tuple[str, int]:
        """`count` grain units as a calendar unit the engines share (week = 7 days, quarter =
        3 months)."""
        if grain == "week":
            return "DAY", count * 7
        if grain == "quarter":
            return "MONTH", count * 3
        return grain.upper(), count

    def shift(self, expr: exp.Expression, count: int, grain: str) -> exp.Expression:
        """`expr` moved by `count` grain units (negative = back), calendar-correct."""
        unit, n = self.shift_units(count, grain)
        interval = exp.Interval(this=exp.Literal.string(str(abs(n))), unit=exp.var(unit))
        op = exp.Add if n >= 0 else exp.Sub
        return op(this=expr, expression=interval)

    def trunc_date(self, value: exp.Expression, grain: str) -> exp.Expression:
        """DATE-typed truncation of a bound, so range filters can skip row groups."""
        return exp.Cast(this=self.bucket(value, grain), to=_DATE.copy())

    # -- epoch arithmetic (streaming windows, window-udf.md) ---------------------------------
    def epoch_us(self, ts: exp.Expression) -> exp.Expression:
        """Epoch microseconds (BIGINT) of a timestamp/timestamptz/date expression."""
        return exp.UnixMicros(this=ts)

    def from_epoch(self, units: exp.Expression, per_ms: int) -> exp.Expression:
        """Timestamp (µs, no time zone) from epoch microseconds (per_ms=1000) or ms (1)."""
        scale = exp.UnixToTime.MICROS if per_ms == 1000 else exp.UnixToTime.MILLIS
        return exp.UnixToTime(this=units, scale=scale)

    def values_table(self, values: Sequence[int], alias: str, column: str) -> exp.Expression:
        """A one-column derived table of integer `values` (streaming-window offsets)."""
        rows = [exp.Tuple(expressions=[exp.Literal.number(v)]) for v in values]
        names = exp.TableAlias(this=exp.to_identifier(alias), columns=[exp.to_identifier(column)])
        return exp.Values(expressions=rows, alias=names)

    # -- ordering ------------------------------------------------------------------------------
    def nulls_first_default(self, desc: bool) -> bool:
        if self.null_ordering == LARGE:
            return desc
        if self.null_ordering == SMALL:
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

    # -- the statement -------------------------------------------------------------------------
    def finalize(self, tree: exp.Expression) -> exp.Expression:
        """Last touches on the whole statement (query-level settings); identity by default."""
        return tree

    def render(self, tree: exp.Expression, pretty: bool = False) -> str:
        """The statement's text. `tree` must be built for this one render (every IR piece in
        it cloned): sqlglot's generator may rewrite it in place, and skipping its defensive
        deep copy of the whole statement is a third of a compile (docs/performance.md)."""
        return _sqlglot_dialect(self.name).generate(tree, copy=False, pretty=pretty)


STATISTICS = (
    exp.StddevPop,
    exp.StddevSamp,
    exp.VariancePop,
    exp.Variance,
    exp.CovarPop,
    exp.CovarSamp,
    exp.Corr,
)
_DOUBLE = exp.DataType.build("DOUBLE")


def float_statistic(node: exp.Expression) -> bool:
    """Cast the arguments of a statistical window function to DOUBLE in place (engines that
    keep DECIMAL arithmetic round the result, or refuse mixed argument types); True when
    `node` was one."""
    if not (isinstance(node, exp.Window) and isinstance(node.this, STATISTICS)):
        return False
    func = node.this
    for key in ("this", "expression"):
        arg = func.args.get(key)
        if isinstance(arg, exp.Expression) and not (
            isinstance(arg, exp.Cast) and arg.to.this == exp.DataType.Type.DOUBLE
        ):
            func.set(key, exp.Cast(this=arg, to=_DOUBLE.copy()))
    return True


def order_outside(tree: exp.Expression, alias: str = "dosi_result") -> exp.Expression:
    """`SELECT * FROM (<tree without ORDER BY / LIMIT>) AS alias ORDER BY ... LIMIT ...`, the
    CTEs kept on top: for engines that resolve ORDER BY names against the joined tables before
    the select list (MySQL: "ambiguous"), or refuse an ORDER BY on an aggregate's alias."""
    if not isinstance(tree, exp.Select) or tree.args.get("order") is None:
        return tree
    inner = tree.copy()
    order, limit, ctes = inner.args.get("order"), inner.args.get("limit"), inner.args.get("with_")
    for key in ("order", "limit", "with_"):
        inner.set(key, None)
    outer = (
        exp.Select()
        .select(exp.Star())
        .from_(exp.alias_(exp.Subquery(this=inner), exp.to_identifier(alias), table=True))
    )
    outer.set("order", order)
    outer.set("limit", limit)
    outer.set("with_", ctes)
    return outer
