"""Plan records: what the planner resolves per branch, window stage and metric (IR values);
`dosi.plan.builder.dag` turns them into the node tree (plan/nodes/) that SQL and explain read.

A query plan is: aggregation branches (one per fact dataset and time axis) -> a merge on the
group-by output names -> metric formulas -> an optional window stage -> trim -> order / limit.
Each node can describe itself for `explain`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

from sqlglot import exp

from dosi.errors import Diagnostic
from dosi.ext import ConversionWindow, TimeFormat, WindowSpec
from dosi.ir.conversion import ConversionIr
from dosi.ir.densify import TimeSpineIr
from dosi.ir.model import RelationshipIr
from dosi.ir.semi_additive import SemiAdditiveIr
from dosi.query.stream_window import StreamWindow


@dataclass(frozen=True)
class JoinStep:
    """Join `relationship.to_dataset` (the one side) onto the many side already in scope."""

    relationship: RelationshipIr

    @property
    def kind(self) -> str:
        return self.relationship.join_type.upper()

    def describe(self) -> str:
        r = self.relationship
        return f"{self.kind} JOIN {r.to_dataset} via {r.name} ({r.from_dataset} -> {r.to_dataset})"


@dataclass(frozen=True)
class BranchDim:
    output: str
    expr: exp.Expression  # over the branch's tables
    grain: str | None  # bucketed by the dialect at render time
    window: StreamWindow | None = None  # a streaming window (window-udf.md)
    datatype: str | None = None  # the field's Ossie datatype (Date enables day pre-aggregation)
    # D-FORMAT: `expr` is the stored encoding, decoded by the dialect (a decode-time step);
    # `datatype` is then the decoded type (Date, or DateTime for layouts with hours)
    time_format: TimeFormat | None = None


@dataclass(frozen=True)
class TimeFilter:
    """`expr` in [start, end): bounds rendered as literals typed like the field."""

    expr: exp.Expression
    start: dt.date | dt.datetime | None
    end: dt.date | dt.datetime | None
    datatype: str | None
    # D-FORMAT: bounds are folded into the stored encoding; the column is never wrapped
    time_format: TimeFormat | None = None

    def describe(self) -> str:
        text = f"time {self.expr.sql()} in [{self.start or '-inf'}, {self.end or '+inf'})"
        if self.time_format is not None and self.time_format.encoded:
            text += f" folded to {self.time_format.format}"
        return text


@dataclass(frozen=True)
class SemiAdditivePlan:
    """D-SEMI in one branch of one query: the rows kept are, per period and window grouping,
    those at the chosen snapshot (plan/semi_additive.py chose the period)."""

    ir: SemiAdditiveIr
    snapshot: BranchDim  # the snapshot time as compared: at the field's stored grain
    period: BranchDim | None  # the query's bucket of the dimension (None: the whole range)
    groupings: tuple[exp.Expression, ...]  # window groupings, over the branch's tables
    value_measure: str | None = None  # min / max: the measure whose value picks the snapshot
    # dosi 1.15 empty_buckets: drop: the picked rows some measure's filter admits
    kept: exp.Expression | None = None

    def describe(self) -> str:
        period = f"per {self.period.output}" if self.period is not None else "over the range"
        return f"{self.ir.describe()}, {period}"


@dataclass(frozen=True)
class ConversionPlan:
    """D-CONVERSION in one branch of one query: each conversion event of the same entity (and
    constant properties) at or after a base event, within the window, attributed to the
    latest such base event; the branch groups the attributed events by the base event's
    dimensions (plan/conversion.py)."""

    ir: ConversionIr
    measure: str  # the converted measure
    conversion_dataset: str
    entity: tuple[exp.Expression, exp.Expression]  # (base side, conversion side)
    base_time: BranchDim
    conversion_time: BranchDim
    window: ConversionWindow | None
    properties: tuple[tuple[exp.Expression, exp.Expression], ...] = ()
    base_event: exp.Expression | None = None  # rows the base aggregate reads (non-NULL arg)
    conversion_event: exp.Expression | None = None  # rows the conversion aggregate reads

    def describe(self) -> str:
        return self.ir.describe()


@dataclass(frozen=True)
class Branch:
    """One GROUP BY over one fact dataset at the query grain (never across a fan-out)."""

    id: str
    dataset: str
    axis: str | None  # the field metric_time resolves to in this branch
    joins: tuple[JoinStep, ...]
    dims: tuple[BranchDim, ...]
    measures: tuple[str, ...]
    filters: tuple[exp.Expression, ...]
    time_filters: tuple[TimeFilter, ...] = ()
    lod: LodShape | None = None  # D-LOD fixed fields read in this branch (plan/lod_field.py)
    semi_additive: SemiAdditivePlan | None = None  # D-SEMI (plan/semi_additive.py)
    conversion: ConversionPlan | None = None  # D-CONVERSION (plan/conversion.py)

    def describe(self) -> str:
        parts = [f"Branch {self.id}: aggregate {self.dataset}"]
        if self.axis:
            parts.append(f"metric_time={self.axis}")
        parts.append(f"measures=[{', '.join(self.measures)}]")
        if self.dims:
            parts.append(f"by=[{', '.join(d.output for d in self.dims)}]")
        return " ".join(parts)


@dataclass(frozen=True)
class MetricColumn:
    """A metric computed from measures; `sources` maps each measure to its branch."""

    name: str
    formula: exp.Expression
    sources: tuple[tuple[str, str], ...]  # (measure, branch id)
    fill: float | int | None
    zero_fill_count: bool  # S-FAN-6: pure count reading a group only other branches made

    def describe(self) -> str:
        extra = ""
        if self.fill is not None:
            extra = f" fill={self.fill}"
        elif self.zero_fill_count:
            extra = " fill=0 (count)"
        return f"{self.name} = {self.formula.sql()}{extra}"


@dataclass(frozen=True)
class TimeBounds:
    """Half-open [start, end) on a time bucket or a time column."""

    start: dt.date | dt.datetime | None
    end: dt.date | dt.datetime | None


@dataclass(frozen=True)
class DistinctRows:
    """The distinct (bucket, dims, value) rows of a COUNT(DISTINCT value) base: a
    `count_distinct` frame counts the values of the rows inside each bucket's frame."""

    branch: Branch  # the base measure's branch, its scan widened like the stage's
    value: exp.Expression  # the COUNT(DISTINCT ...) argument, over the branch's tables


@dataclass(frozen=True)
class WindowMetric:
    """One window metric evaluated over the base series (D-WINDOW)."""

    name: str
    base_column: str  # the base series column in the stage input
    spec: WindowSpec
    partition: tuple[str, ...]  # output columns
    tiebreak: tuple[str, ...]  # output columns used to break ties (row_number / ntile / value)
    second_column: str | None = None
    # rows below this bound were loaded only for other metrics' lookback: a frame that does
    # not expand reads them as NULL, so it answers exactly as it would alone (WM Restrictions)
    mask_before: dt.date | dt.datetime | None = None
    # the end-side twin: rows loaded only for a forward offset's lookahead
    mask_after: dt.date | dt.datetime | None = None
    # 1.15 `count_distinct`: the fact rows the frame counts distinct values of
    distinct: DistinctRows | None = None

    def describe(self) -> str:
        return (
            f"{self.name}: {describe_window(self.spec)} over {self.base_column} "
            f"partition=[{', '.join(self.partition)}]"
        )


def describe_window(spec: WindowSpec) -> str:
    """One line for explain: the family and what it computes."""
    return spec.describe()


@dataclass(frozen=True)
class WindowStage:
    time_key: str | None  # output column of the time bucket
    grain: str | None
    metrics: tuple[WindowMetric, ...]
    trim: TimeBounds | None  # applied after the window stage
    # D-DERIVE nested windows: the metrics of stages 2 and 3, above the first (WIN-19-06)
    uppers: tuple[tuple[WindowMetric, ...], ...] = ()

    def describe(self) -> str:
        t = f" time={self.time_key}" if self.time_key else ""
        trim = ""
        if self.trim is not None:
            trim = f" trim=[{self.trim.start or '-inf'}, {self.trim.end or '+inf'})"
        return f"WindowStage{t}{trim}"


@dataclass(frozen=True)
class PeriodSample:
    """D-WINDOW `period_value` (issue 22 item 7): the plan runs at the frame's accumulation
    grain (`key`, one row per `grain` bucket); each coarser bucket of the query (`buckets`:
    output column and grain, computed from `key`) keeps the first, last or average running
    value of its rows (`picks`), per the other group-by values (`dims`). `outputs`, `order`
    and `limit` are the query's own, applied after the sampling."""

    key: str
    grain: str
    buckets: tuple[tuple[str, str], ...]
    dims: tuple[str, ...]
    #: (metric column, "first" | "last" | "average" | "sum" | "first_day": an offset's value on
    #: the bucket's first day)
    picks: tuple[tuple[str, str], ...]
    outputs: tuple[str, ...]
    order: tuple[tuple[str, bool, str | None], ...]
    limit: int | None
    datatype: str | None = None  # the key's datatype (buckets keep the query's types)
    #: stage composes over the picked members, computed per coarser bucket (1.15)
    derived: tuple[Any, ...] = ()
    #: offsets (1.15): a bucket whose picked values are all NULL is no row (its days were only
    #: loaded for other buckets' shifts)
    drop_empty: bool = False

    def describe(self) -> str:
        by = ", ".join(f"{o}" for o, _ in self.buckets)
        picks = ", ".join(f"{m}={p}" for m, p in self.picks)
        return f"PeriodSample by [{by}] of {self.key} ({self.grain}): {picks}"


@dataclass(frozen=True)
class FilterResult:
    """where_sql conjuncts that name a metric (HAVING semantics): they keep result rows after
    aggregation, the window stage and its trim, before order / limit."""

    predicate: exp.Expression  # over output column names
    metrics: tuple[str, ...]  # the metric columns it reads, selected or computed only for it

    def describe(self) -> str:
        return f"FilterResult {self.predicate.sql()}"


# -- densify: the time spine a query fills empty buckets from (plan/densify.py) ----------
@dataclass(frozen=True)
class SpineKey:
    """One grouped time bucket the spine fills: its output column, grain and bucket type."""

    output: str
    grain: str
    datatype: str | None


@dataclass(frozen=True)
class Spine:
    """The buckets a time spine holds: steps of `step` from `start` (aligned to its bucket)
    to `end` (exclusive), each bucketed to every key; a missing bound is the data's first /
    last bucket of `driver` (the finest key). `table`: read the model's time-spine rows
    instead of generating the steps in SQL. `beyond`: shifts (count, grain) the data's last
    bucket is moved on by (densify `covered`: a back offset has values after the data)."""

    keys: tuple[SpineKey, ...]
    step: str
    driver: str
    start: dt.date | dt.datetime | None = None
    end: dt.date | dt.datetime | None = None
    table: TimeSpineIr | None = None
    beyond: tuple[tuple[int, str], ...] = ()

    def describe(self) -> str:
        keys = ", ".join(f"{k.output}" for k in self.keys)
        whole = self.table is not None and self.table.bounds == "table"
        of = f"row of {self.table.qualified}" if whole and self.table else self.driver
        lo = self.start or f"first {of}"
        hi = self.end or f"last {of}" + "".join(f" + {n} {g}" for n, g in self.beyond)
        bracket = ")" if self.end else "]"
        source = f"rows of {self.table.qualified}" if self.table else f"{self.step} steps in SQL"
        return f"spine [{keys}] in [{lo}, {hi}{bracket} from {source}"


@dataclass(frozen=True)
class DensePlan:
    """Where a query densifies (QueryPlan.densify): `series` is the window stage's spine
    (crossed with the other dims' combinations seen `within` the trimmed range; `present`
    marks the rows with data, dropped again by the trim unless `covering` and a window
    metric has a value there), `output` the result's spine (`cross`: crossed with the other
    dims, else joined on the time buckets alone)."""

    others: tuple[str, ...]
    series: Spine | None = None
    present: bool = False
    within: TimeBounds | None = None
    output: Spine | None = None
    cross: bool = True
    covering: bool = False

    def describe(self) -> str:
        parts = []
        if self.series is not None:
            parts.append(f"series {self.series.describe()}")
        if self.output is not None:
            parts.append(f"output {self.output.describe()}")
        return "; ".join(parts)


@dataclass(frozen=True)
class QueryPlan:
    branches: tuple[Branch, ...]
    dims: tuple[str, ...]  # group-by output names, in order
    metrics: tuple[MetricColumn, ...]  # base metrics (including window bases, hidden or not)
    outputs: tuple[str, ...]  # final column order
    order: tuple[tuple[str, bool, str | None], ...]  # (column, desc, nulls)
    limit: int | None
    window: WindowStage | None = None
    result_filter: FilterResult | None = None
    # D-DERIVE stage tier: composes over the window stage's columns (plan/derive_stage.py)
    derived: tuple[Any, ...] = ()
    # the query key `densify`: where a time spine fills empty buckets (plan/densify.py)
    densify: DensePlan | None = None
    # query warnings the plan made (a time_range a branch cannot read: time_range_not_applied)
    warnings: tuple[Diagnostic, ...] = ()
    # D-WINDOW period_value: the plan runs at the accumulation grain, sampled after (issue 22)
    sample: PeriodSample | None = None


LodMode = Literal["rollup", "detail", "grid"]


@dataclass(frozen=True)
class LodRollupSpec:
    """One derived table: the dataset grouped by a key family, its fixed values computed
    over the context layer's rows only."""

    alias: str
    dataset: str
    keys: tuple[tuple[str, exp.Expression], ...]  # (key field name, expression over dataset)
    values: tuple[tuple[str, exp.Expression], ...]  # (fixed field name, aggregate)
    fields: tuple[str, ...]  # qualified fixed fields it provides
    joins: tuple[JoinStep, ...] = ()  # joins the context layer names (LOD-FLT-09)
    filters: tuple[exp.Expression, ...] = ()  # context_filter
    time_filters: tuple[TimeFilter, ...] = ()  # time_range

    def describe(self) -> str:
        keys = ", ".join(k for k, _ in self.keys) or "(none: table level)"
        return (
            f"LodRollup {self.alias} over {self.dataset} keys=[{keys}] "
            f"values=[{', '.join(v for v, _ in self.values)}]"
        )

    def context(self) -> tuple[str, ...]:
        return (
            *(f"context join {s.describe()}" for s in self.joins),
            *(f"context filter {f.sql()}" for f in self.filters),
            *(f"context {t.describe()}" for t in self.time_filters),
        )


@dataclass(frozen=True)
class LodShape:
    """How a branch reads its fixed fields, and where its dimension filters landed."""

    mode: LodMode
    rollups: tuple[LodRollupSpec, ...]
    grid_family: str | None = None  # the aggregated family's alias (grid mode)
    # placement of the dimension filters, for explain: (where, conjunct)
    placements: tuple[tuple[str, str], ...] = ()

    def family_of(self, qualified: str) -> LodRollupSpec:
        for r in self.rollups:
            if qualified in r.fields:
                return r
        raise KeyError(qualified)
