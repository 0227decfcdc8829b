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
- `week_start`: the weekday `truncate(x, "week")` starts on (Monday: each dialect's
  truncation is made ISO where the warehouse's own is not); other week starts are built on it
  (`week_bucket`), so no warehouse's own week start reaches a result;
- `groups_by_correlated_subquery`: a GROUP BY key may be a correlated scalar subquery (how a
  calendar-table grain reads its calendar row; ClickHouse and DataFusion refuse them: a
  `dialect_unsupported_calendar_table` error before any SQL runs);
- `time_parser`: how a D-FORMAT stored time value is parsed (dosi.sql.dialects.time_format);
- `spine_series`: how a time spine's steps are generated in SQL (densify): "recursive" (a
  recursive WITH adding one grain a step), "unnest_generate_series" (DuckDB, DataFusion),
  "generate_series" (PostgreSQL's set-returning function), "sequence" (Spark's explode),
  "unnest_sequence" (Trino), "array_join" (ClickHouse's arrayJoin over range); None where
  dosi knows no way (a structured `dialect_unsupported_densify` before any SQL);
- `percentile_style`: how PERCENTILE_CONT / PERCENTILE_DISC / MEDIAN / APPROX_QUANTILE are
  computed (dosi.sql.dialects.percentile, which states the numbers every style gives); None
  where the engine has no percentile aggregate (a structured `dialect_unsupported_percentile`
  before any SQL runs);
- `pre_aggregate_count_guard`: the day pre-aggregation grouped by the date alone carries a
  no-op `HAVING COUNT(*) > 0` (DuckDB 2.0 runs a perfect-hash GROUP BY on a DATE key with a
  lone SUM about 2x slower without a COUNT(*) beside it: docs/performance.md, rule 4).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect as SqlglotDialect

from dosi.ext.time_format import TimeFormat
from dosi.sql.dialects.percentile import STYLES as PERCENTILE_STYLES
from dosi.sql.dialects.time_format import CAST_ONLY, TimeParser, decode

_DATE = exp.DataType.build("DATE")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")
_BIGINT = exp.DataType.build("BIGINT")
_TEMPORAL_TS = {"DateTime", "DateTimeTz"}
LARGE, SMALL, LAST = "nulls_are_large", "nulls_are_small", "nulls_are_last"
#: meta key on a CTE body that reads itself: the statement's WITH must say RECURSIVE
RECURSIVE_CTE = "dosi_recursive"


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
    # the truncation unit of an ISO (Monday) week: WEEK where the warehouse's own week is
    # Monday's, its ISO unit where it is not (BigQuery's WEEK starts on Sunday)
    week_unit: str = "WEEK"
    groups_by_correlated_subquery: bool = True
    time_parser: TimeParser = CAST_ONLY
    pre_aggregate_count_guard: bool = False
    spine_series: str | None = "recursive"
    percentile_style: str | None = "within_group"
    # where `dosi validate --db` reads a table's columns (dosi.execute.warehouse_columns):
    # "current_schema" / "database" (information_schema in the current schema / DATABASE()),
    # "pragma" (SQLite pragma_table_info), None: a `SELECT * ... LIMIT 0` probe
    column_catalog: str | None = None
    # dates and timestamps may be stored as ISO text columns (SQLite has no temporal type)
    temporal_as_text: bool = False
    # its engine returns dosi's canonical Arrow types already (UTC wall clocks, int64, float64):
    # results from any other engine are conformed to them (dosi.execute.shape.conform)
    canonical_result_types: bool = False

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)

    # -- window-function gates --------------------------------------------------------------
    def supports_window_function(self, function: str) -> bool:
        return function not in self.unsupported_window_functions

    def window_function_since(self, function: str) -> tuple[int, ...] | None:
        """The first server version that has `function` as a window function, when a newer
        server than the one assumed would lift the gate (None: no version has it)."""
        return None

    def frame_percentile(
        self, function: str, value: exp.Expression, fraction: float | None
    ) -> exp.Expression:
        """A percentile frame aggregate (1.14): PERCENTILE_CONT / PERCENTILE_DISC at `fraction`,
        median as PERCENTILE_CONT at 0.5 (sqlglot spells them per dialect: DuckDB's
        QUANTILE_CONT); only dialects the gate admits reach here."""
        p = exp.Literal.number(0.5 if function == "median" else fraction)
        if function == "percentile_disc":
            return exp.PercentileDisc(this=value, expression=p)
        return exp.PercentileCont(this=value, expression=p)

    def at_version(self, version: tuple[int, ...]) -> Dialect:
        """This dialect on a server of `version` (a version fact: `clickhouse@25.11`). Only a
        dialect whose facts depend on the server version overrides it."""
        return self

    # -- time ----------------------------------------------------------------------------------
    def bucket(
        self,
        expr: exp.Expression,
        grain: str,
        datatype: str | None = None,
        week_start: int = 0,
    ) -> exp.Expression:
        """The start of the native grain bucket (second .. year) holding `expr`; weeks start
        on `week_start` (0 = Monday .. 6 = Sunday). Bucket values keep their type: a bucket of
        a Date field is a DATE (a month of a DATE column is `2024-01-01`), anything else a
        timestamp, as DATE_TRUNC yields. Calendar and table grains are dosi.sql.calendar's."""
        if grain == "week" and week_start:
            return self.week_bucket(expr, week_start, datatype)
        if datatype == "Date":
            if grain == "day":
                return exp.Cast(this=expr, to=_DATE.copy())
            return exp.Cast(this=self.truncate(expr, grain), to=_DATE.copy())
        return self.truncate(expr, grain)

    def truncate(self, expr: exp.Expression, grain: str) -> exp.Expression:
        """DATE_TRUNC: the timestamp starting the grain period holding `expr` (weeks: Monday)."""
        unit = self.week_unit if grain == "week" else grain.upper()
        return exp.DateTrunc(unit=exp.var(unit), this=expr)

    def week_bucket(
        self, expr: exp.Expression, week_start: int, datatype: str | None
    ) -> exp.Expression:
        """Weeks starting `week_start` days after Monday: the Monday week of the value moved
        back by that many days, moved forward again."""
        monday = self.bucket(self.shift(expr, -week_start, "day"), "week", datatype)
        out = self.shift(monday, week_start, "day")
        return exp.Cast(this=out, to=_DATE.copy()) if datatype == "Date" else out

    def date_part(self, expr: exp.Expression, part: str) -> exp.Expression:
        """An integer part of a date or timestamp: `isodow` (1 = Monday .. 7 = Sunday),
        `isoweek` (ISO 8601, 1..53), `hour`, `minute`, `day` (of the month), `doy`, `month`,
        `quarter`, `year`."""
        unit = _EXTRACT[part]
        return exp.Cast(this=exp.Extract(this=exp.var(unit), expression=expr), to=_BIGINT.copy())

    def day_number(self, expr: exp.Expression, datatype: str | None) -> exp.Expression:
        """Days from 1970-01-01 to the day holding `expr` (an integer; calendar arithmetic)."""
        day = exp.Cast(this=expr, to=_DATE.copy())
        return exp.Sub(this=day, expression=_epoch_date())

    def from_day_number(self, days: exp.Expression, datatype: str | None) -> exp.Expression:
        """The day `days` after 1970-01-01: a DATE for a Date axis, else its midnight as a
        timestamp (bucket values keep the axis' type)."""
        whole = exp.Cast(this=days, to=exp.DataType.build("INT"))  # DATE + INTEGER
        day = exp.Add(this=_epoch_date(), expression=whole)
        return day if datatype == "Date" else exp.Cast(this=day, to=_TIMESTAMP.copy())

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

    def bucket_datatype(self, datatype: str | None, grain: str | None) -> str | None:
        """The datatype of `bucket(x, grain, datatype)`'s value (the field's own: a bucket of
        a Date is a DATE), so a literal compared with it is written as that type."""
        return datatype

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

    # -- time spines (densify) -----------------------------------------------------------
    def as_timestamp(self, expr: exp.Expression) -> exp.Expression:
        """A time value (a DATE bucket, a timestamp) as a timestamp: a spine's step type."""
        return exp.Cast(this=expr, to=_TIMESTAMP.copy())

    def spine_steps(self, bounds: str, name: str, grain: str) -> exp.Query:
        """`SELECT t, hi`: every step of `grain` from the `bounds` row's `lo` on, up to its `hi`
        (which may itself be a step: the spine keeps the steps below it), none when `lo` is
        NULL, generated the way `spine_series` says. The recursive form reads itself as
        `name`; its body carries `RECURSIVE_CTE` in its meta, so the statement's WITH says
        RECURSIVE."""
        form = self.spine_series
        if form is None:
            raise ValueError(f"{self.key} generates no time series")
        if form == "recursive":
            return self._recursive_steps(bounds, name, grain)
        lo, hi = exp.column("lo"), exp.column("hi")
        if form == "unnest_sequence":  # UNNEST is a relation (Trino)
            seq = exp.Anonymous(this="SEQUENCE", expressions=[lo, hi, self.step_interval(grain)])
            unnest = exp.Unnest(
                expressions=[seq],
                alias=exp.TableAlias(this=exp.to_identifier("s"), columns=[exp.to_identifier("t")]),
            )
            return (
                exp.Select()
                .select(exp.column("t", "s"), hi.copy())
                .from_(bounds)
                .join(unnest, join_type="CROSS")
            )
        step = _SERIES[form](self, lo, hi, grain)
        out = exp.Select().select(exp.alias_(step, "t"), hi.copy()).from_(bounds)
        return out.where(exp.Not(this=exp.Is(this=lo.copy(), expression=exp.Null())))

    def _recursive_steps(self, bounds: str, name: str, grain: str) -> exp.Query:
        lo, t = exp.column("lo"), exp.column("t")
        anchor = (
            exp.Select()
            .select(exp.alias_(lo, "t"), exp.column("hi"))
            .from_(bounds)
            .where(exp.Not(this=exp.Is(this=lo.copy(), expression=exp.Null())))
        )
        nxt = self.shift(t, 1, grain)
        step = (
            exp.Select()
            .select(exp.alias_(nxt, "t"), exp.column("hi"))
            .from_(name)
            .where(exp.LT(this=nxt.copy(), expression=exp.column("hi")))
        )
        body = exp.Union(this=anchor, expression=step, distinct=False)
        body.meta[RECURSIVE_CTE] = True
        return body

    def step_interval(self, grain: str) -> exp.Interval:
        """One step of `grain` as an INTERVAL (a week is 7 days, a quarter 3 months)."""
        unit, n = self.shift_units(1, grain)
        return exp.Interval(this=exp.Literal.string(str(n)), unit=exp.var(unit))

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

    # -- percentiles (issue 21) ---------------------------------------------------------------
    def percentile(self, value: exp.Expression, q: Decimal, method: str) -> exp.Expression:
        """The `method` ("cont", "disc", "approx") percentile `q` of `value` over a group's
        rows; ValueError where `percentile_style` is None."""
        if self.percentile_style is None:
            raise ValueError(f"{self.key} has no percentile aggregate")
        return PERCENTILE_STYLES[self.percentile_style](value, q, method)

    # -- the statement -------------------------------------------------------------------------
    def finalize(self, tree: exp.Expression) -> exp.Expression:
        """Last touches on the whole statement (query-level settings); identity by default."""
        return tree

    def render(self, tree: exp.Expression, pretty: bool = False) -> str:
        """The statement's text. `tree` must be built for this one render (every IR piece in
        it cloned): sqlglot's generator may rewrite it in place, and skipping its defensive
        deep copy of the whole statement is a third of a compile (docs/performance.md)."""
        return _sqlglot_dialect(self.name).generate(tree, copy=False, pretty=pretty)


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _unnest_generate_series(
    d: Dialect, lo: exp.Expression, hi: exp.Expression, grain: str
) -> exp.Expression:
    """UNNEST(generate_series(lo, hi, INTERVAL)): DuckDB, DataFusion (inclusive of hi)."""
    return _fn("UNNEST", _fn("generate_series", lo, hi, d.step_interval(grain)))


def _generate_series(
    d: Dialect, lo: exp.Expression, hi: exp.Expression, grain: str
) -> exp.Expression:
    """generate_series(lo, hi, INTERVAL) in the select list: PostgreSQL's set-returning form."""
    return _fn("generate_series", lo, hi, d.step_interval(grain))


def _sequence(d: Dialect, lo: exp.Expression, hi: exp.Expression, grain: str) -> exp.Expression:
    """EXPLODE(SEQUENCE(lo, hi, INTERVAL)): Spark, Databricks."""
    return _fn("EXPLODE", _fn("SEQUENCE", lo, hi, d.step_interval(grain)))


_CLICKHOUSE_ADD = {
    "DAY": "addDays",
    "MONTH": "addMonths",
    "YEAR": "addYears",
    "HOUR": "addHours",
    "MINUTE": "addMinutes",
    "SECOND": "addSeconds",
}


def _array_join(d: Dialect, lo: exp.Expression, hi: exp.Expression, grain: str) -> exp.Expression:
    """ClickHouse: add(lo, n * k) for n in arrayJoin(range(dateDiff(unit, lo, hi) + 1))."""
    unit, k = d.shift_units(1, grain)
    lo_nn = _fn("assumeNotNull", lo)
    diff = _fn("dateDiff", exp.Literal.string(unit.lower()), lo_nn, _fn("assumeNotNull", hi))
    units: exp.Expression = _fn("toUInt64", diff)
    if k != 1:
        units = _fn("intDiv", units, exp.Literal.number(k))
    count = exp.Add(this=units, expression=exp.Literal.number(1))
    n: exp.Expression = _fn("arrayJoin", _fn("range", count))
    if k != 1:
        n = exp.Mul(this=n, expression=exp.Literal.number(k))
    return _fn(_CLICKHOUSE_ADD[unit], lo_nn.copy(), n)


_SERIES = {
    "unnest_generate_series": _unnest_generate_series,
    "generate_series": _generate_series,
    "sequence": _sequence,
    "array_join": _array_join,
}


_EXTRACT = {
    "isodow": "ISODOW",
    "isoweek": "WEEK",
    "hour": "HOUR",
    "minute": "MINUTE",
    "day": "DAY",
    "doy": "DOY",
    "month": "MONTH",
    "quarter": "QUARTER",
    "year": "YEAR",
}


def _epoch_date() -> exp.Expression:
    return exp.Cast(this=exp.Literal.string("1970-01-01"), to=_DATE.copy())


STATISTICS = (
    exp.StddevPop,
    exp.StddevSamp,
    exp.VariancePop,
    exp.Variance,
    exp.CovarPop,
    exp.CovarSamp,
    exp.Corr,
    exp.RegrSlope,
    exp.RegrIntercept,
    exp.RegrR2,
    exp.RegrAvgx,
    exp.RegrAvgy,
    exp.RegrSxx,
    exp.RegrSyy,
    exp.RegrSxy,
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
