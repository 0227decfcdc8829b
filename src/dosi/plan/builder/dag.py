"""QueryPlan records -> the plan DAG (plan/nodes/): every choice that changes the SQL made
here, as a node: the day pre-aggregation, the streaming bucket, the merge strategy, the
window stage, its trim and the metric filter."""

from __future__ import annotations

from sqlglot import exp

from dosi.ir.model import ModelIr
from dosi.plan.builder.lod_field import lod_input
from dosi.plan.dialect_facts import PlanDialect
from dosi.plan.node import PlanNode
from dosi.plan.nodes import (
    Aggregate,
    ComputeMetrics,
    ConversionJoin,
    DecodeTime,
    DeriveCompute,
    FilterResult,
    Join,
    Merge,
    MergeStrategy,
    OrderLimit,
    PreAggregate,
    Scan,
    SemiAdditiveJoin,
    StreamBucket,
    Trim,
    Window,
)
from dosi.plan.records import Branch, QueryPlan, WindowStage

# measures whose per-day partial aggregates roll up exactly (COUNT DISTINCT / AVG do not)
ROLLUP_AGGS = frozenset({"sum", "count", "count_star", "min", "max"})


def pre_aggregable(model: ModelIr, b: Branch) -> bool:
    """A DATE bucket coarser than a day over measures that roll up (docs/performance.md, rule 1).
    A semi-additive branch pre-aggregates its snapshot rows (the SemiAdditiveJoin is below:
    never a day's partial sum across snapshots); a conversion branch groups attributed events
    of its own shape."""
    if any(d.window is not None for d in b.dims) or b.conversion is not None:
        return False
    if not any(d.grain not in (None, "day") and d.datatype == "Date" for d in b.dims):
        return False
    return all(model.measures[m].agg in ROLLUP_AGGS for m in b.measures)


def merge_strategy(dims: tuple[str, ...], dialect: PlanDialect) -> MergeStrategy:
    """How branches meet: the dialect says whether FULL JOIN takes a NULL-safe condition."""
    if not dims:
        return "cross"
    return "full_outer" if dialect.null_safe_full_join else "union_keys"


def aggregate_node(model: ModelIr, b: Branch) -> Aggregate:
    """Scan -> joins -> (stream bucket | pre-aggregation) -> the branch's GROUP BY."""
    if b.lod is not None:  # D-LOD: a rollup read alone, or a broadcast (plan/builder/lod_field.py)
        return Aggregate(lod_input(b), b.id, b.dataset, b.axis, b.dims, b.measures)
    node: PlanNode = Scan(b.dataset, b.filters, b.time_filters)
    for step in b.joins:
        node = Join(node, step.relationship)
    if b.semi_additive is not None:  # D-SEMI: the period's snapshot rows, before any rollup
        node = SemiAdditiveJoin(node, b.semi_additive)
    if b.conversion is not None:  # D-CONVERSION: attributed conversion events
        c = b.conversion
        node = ConversionJoin(node, Scan(c.conversion_dataset), c)
        return Aggregate(node, b.id, b.dataset, b.axis, b.dims, b.measures)
    stream = next((d for d in b.dims if d.window is not None), None)
    if stream is not None:
        assert stream.window is not None
        node = StreamBucket(node, stream.output, stream.window)
    elif pre_aggregable(model, b):
        by = tuple(d.output for d in b.dims if d.grain is not None)
        node = PreAggregate(node, by, b.measures)
    return Aggregate(node, b.id, b.dataset, b.axis, b.dims, b.measures)


def decoded(agg: Aggregate) -> PlanNode:
    """D-FORMAT: the aggregate's encoded group keys parsed once per group (a DecodeTime)."""
    dims = tuple(d for d in agg.dims if d.time_format is not None)
    return DecodeTime(agg, dims) if dims else agg


def build_dag(model: ModelIr, plan: QueryPlan, dialect: PlanDialect) -> OrderLimit:
    """The plan as a DAG whose root is the result (OrderLimit)."""
    aggs = [aggregate_node(model, b) for b in plan.branches]
    series = [decoded(a) for a in aggs]
    having = plan.result_filter
    top: PlanNode
    stage = plan.window
    metric_names = {c.name for c in plan.metrics}
    computed_base = stage is not None and any(
        wm.base_column in metric_names for wm in stage.metrics
    )
    if stage is not None and len(aggs) == 1 and not computed_base:
        windowed = {wm.name for wm in stage.metrics}
        shown = {*plan.outputs, *(having.metrics if having is not None else ()), *_read(plan)}
        carried = tuple(m for m in plan.metrics if m.name not in windowed and m.name in shown)
        top = Window(series[0], stage.time_key, stage.grain, plan.dims, carried, stage.metrics)
        top = _trimmed(_derived(top, plan), stage)
    elif stage is not None:
        # a window metric beside metrics of another fact dataset: the branches merge first
        # and the window stage reads the merged series (as the reference engine does: a month
        # only another dataset has is a row of the frame, its base NULL)
        windowed = {wm.name for wm in stage.metrics}
        bases = {c for wm in stage.metrics for c in (wm.base_column, wm.second_column) if c}
        passed: dict[str, str] = {}
        for agg in aggs:
            for meas in agg.measures:
                if meas in bases:
                    passed.setdefault(meas, agg.branch_id)
        plain = tuple(m for m in plan.metrics if m.name not in windowed)
        below: PlanNode = (
            series[0]
            if len(series) == 1  # a window.base series computed first (plan/derive_series.py)
            else Merge(tuple(series), plan.dims, merge_strategy(plan.dims, dialect))
        )
        merged = ComputeMetrics(
            below,
            plan.dims,
            plain,
            tuple(passed.items()),
        )
        shown = {*plan.outputs, *(having.metrics if having is not None else ()), *_read(plan)}
        carried = tuple(m.name for m in plain if m.name in shown)
        top = Window(merged, stage.time_key, stage.grain, plan.dims, (), stage.metrics, carried)
        top = _trimmed(_derived(top, plan), stage)
    else:
        top = (
            series[0]
            if len(series) == 1
            else Merge(tuple(series), plan.dims, merge_strategy(plan.dims, dialect))
        )
        top = ComputeMetrics(top, plan.dims, plan.metrics)
    if having is not None:
        top = FilterResult(top, having.predicate, having.metrics, plan.outputs)
    return OrderLimit(top, plan.outputs, plan.order, plan.limit)


def _read(plan: QueryPlan) -> set[str]:
    """Columns the stage-tier composes read (their carried members)."""
    return {c.name for d in plan.derived for c in d.formula.find_all(exp.Column) if not c.table}


def _derived(top: Window, plan: QueryPlan) -> PlanNode:
    """D-DERIVE stage tier: the composes over the window outputs after the stage they need,
    and the window stages above them (nested windows, WIN-19-06), before the trim."""
    stage = plan.window
    assert stage is not None
    node: PlanNode = top
    have = [
        *top.passed,
        *(m.name for m in top.carried),
        *(wm.name for wm in top.metrics),
    ]
    for level in range(1, 2 + len(stage.uppers)):
        if level > 1:
            wms = stage.uppers[level - 2]
            node = Window(node, stage.time_key, stage.grain, plan.dims, (), wms, tuple(have))
            have.extend(wm.name for wm in wms)
        cols = tuple(d for d in plan.derived if d.level == level)
        if cols:
            node = DeriveCompute(node, cols)
            have.extend(d.name for d in cols)
    return node


def _trimmed(top: PlanNode, stage: WindowStage) -> PlanNode:
    """The rows of the widened scan outside the queried range dropped after the windows."""
    trim = stage.trim
    if trim is None or stage.time_key is None or (trim.start is None and trim.end is None):
        return top
    return Trim(top, stage.time_key, trim)
