"""QueryPlan records -> the plan DAG (plan/nodes/): every choice that changes the SQL made
here, as a node: the day pre-aggregation, the streaming bucket, the merge strategy, the
window stage, its trim and the metric filter."""

from __future__ import annotations

from sqlglot import exp

from dosi.ir.model import ModelIr
from dosi.plan.builder.lod_field import lod_input
from dosi.plan.densify import PRESENT, measure_fills, metric_fills
from dosi.plan.dialect_facts import PlanDialect
from dosi.plan.node import PlanNode
from dosi.plan.nodes import (
    Aggregate,
    ComputeMetrics,
    ConversionJoin,
    DecodeTime,
    Densify,
    DeriveCompute,
    FilterResult,
    Join,
    Merge,
    MergeStrategy,
    OrderLimit,
    PeriodSample,
    PreAggregate,
    Scan,
    SemiAdditiveJoin,
    StreamBucket,
    Trim,
    Window,
)
from dosi.plan.records import Branch, DensePlan, MetricColumn, QueryPlan, TimeBounds, WindowStage
from dosi.plan.scan_sizes import UNKNOWN_SIZES, ScanSizes

# measures whose per-day partial aggregates roll up exactly (COUNT DISTINCT / AVG do not)
ROLLUP_AGGS = frozenset({"sum", "count", "count_star", "min", "max"})


def pre_aggregable(model: ModelIr, b: Branch, sizes: ScanSizes = UNKNOWN_SIZES) -> bool:
    """A DATE bucket coarser than a day over measures that roll up (docs/performance.md, rule 1),
    on a fact table not known to be small (the cost rule: dosi.plan.scan_sizes).
    A semi-additive branch pre-aggregates its snapshot rows (the SemiAdditiveJoin is below:
    never a day's partial sum across snapshots); a conversion branch groups attributed events
    of its own shape."""
    if any(d.window is not None for d in b.dims) or b.conversion is not None:
        return False
    if b.dataset in sizes.small:
        return False
    if not any(d.grain not in (None, "day") and d.datatype == "Date" for d in b.dims):
        return False
    return all(model.measures[m].agg in ROLLUP_AGGS for m in b.measures)


def merge_strategy(dims: tuple[str, ...], dialect: PlanDialect) -> MergeStrategy:
    """How branches meet: the dialect says whether FULL JOIN takes a NULL-safe condition."""
    if not dims:
        return "cross"
    return "full_outer" if dialect.null_safe_full_join else "union_keys"


def aggregate_node(model: ModelIr, b: Branch, sizes: ScanSizes = UNKNOWN_SIZES) -> Aggregate:
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
    elif pre_aggregable(model, b, sizes):
        by = tuple(d.output for d in b.dims if d.grain is not None)
        node = PreAggregate(node, by, b.measures)
    return Aggregate(node, b.id, b.dataset, b.axis, b.dims, b.measures)


def decoded(agg: Aggregate) -> PlanNode:
    """D-FORMAT: the aggregate's encoded group keys parsed once per group (a DecodeTime)."""
    dims = tuple(d for d in agg.dims if d.time_format is not None)
    return DecodeTime(agg, dims) if dims else agg


def build_dag(
    model: ModelIr, plan: QueryPlan, dialect: PlanDialect, sizes: ScanSizes = UNKNOWN_SIZES
) -> OrderLimit:
    """The plan as a DAG whose root is the result (OrderLimit); `sizes`: the connection's small
    fact tables, read without the day pre-aggregation."""
    aggs = [aggregate_node(model, b, sizes) for b in plan.branches]
    series = [decoded(a) for a in aggs]
    having = plan.result_filter
    top: PlanNode
    stage = plan.window
    metric_names = {c.name for c in plan.metrics}
    computed_base = stage is not None and any(
        wm.base_column in metric_names for wm in stage.metrics
    )
    dense = plan.densify
    if stage is not None and len(aggs) == 1 and not computed_base:
        windowed = {wm.name for wm in stage.metrics}
        shown = {*plan.outputs, *(having.metrics if having is not None else ()), *_read(plan)}
        carried = tuple(m for m in plan.metrics if m.name not in windowed and m.name in shown)
        below, passed = series_densified(model, series[0], aggs[0].measures, (), plan)
        top = Window(below, stage.time_key, stage.grain, plan.dims, carried, stage.metrics, passed)
        top = _trimmed(_derived(top, plan), stage, dense, plan)
        top = output_densified(model, top, plan, windowed)
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
        below, carried = series_densified(model, merged, tuple(passed), plain, plan, carried)
        top = Window(below, stage.time_key, stage.grain, plan.dims, (), stage.metrics, carried)
        top = _trimmed(_derived(top, plan), stage, dense, plan)
        top = output_densified(model, top, plan, windowed)
    else:
        top = (
            series[0]
            if len(series) == 1
            else Merge(tuple(series), plan.dims, merge_strategy(plan.dims, dialect))
        )
        top = ComputeMetrics(top, plan.dims, plan.metrics)
        top = output_densified(model, top, plan)
    if having is not None:
        top = FilterResult(top, having.predicate, having.metrics, plan.outputs)
    sample = plan.sample
    if sample is not None:  # D-WINDOW period_value: one row per coarser bucket
        top = PeriodSample(top, sample)
        if sample.derived:  # composes over the sampled members (1.15)
            top = DeriveCompute(top, sample.derived)
        return OrderLimit(top, sample.outputs, sample.order, sample.limit)
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


def _trimmed(
    top: PlanNode, stage: WindowStage, dense: DensePlan | None, plan: QueryPlan
) -> PlanNode:
    """The rows of the widened scan outside the queried range dropped after the windows (and
    the rows a densified series filled, when the output keeps the rows with data). Densify
    `covered` keeps the buckets where a window metric the result reads has a value, and the
    rows with data when it reads a metric outside the windows."""
    trim = stage.trim
    present = PRESENT if dense is not None and dense.series is not None and dense.present else None
    key = stage.time_key
    if key is None and present is not None:
        key = dense.series.driver  # type: ignore[union-attr]
    if key is None or ((trim is None or (trim.start is None and trim.end is None)) and not present):
        return top
    covering: tuple[str, ...] = ()
    direct = True
    if present is not None and dense is not None and dense.covering:
        covering, direct = _covering(plan, stage)
    return Trim(top, key, trim or TimeBounds(None, None), present, covering, direct)


def _covering(plan: QueryPlan, stage: WindowStage) -> tuple[tuple[str, ...], bool]:
    """The window metrics the result reads (through composes, not through an upper window's
    base: a nested offset covers where the outer one has a value), and whether it reads a
    metric outside the windows."""
    windows = [wm.name for wms in (stage.metrics, *stage.uppers) for wm in wms]
    composes = {d.name: d for d in plan.derived}
    having = plan.result_filter
    todo = [*plan.outputs[len(plan.dims) :], *(having.metrics if having is not None else ())]
    seen: set[str] = set()
    cover: set[str] = set()
    direct = False
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in windows:
            cover.add(name)
        elif name in composes:
            formula = composes[name].formula
            todo.extend(c.name for c in formula.find_all(exp.Column) if not c.table)
        else:
            direct = True
    return tuple(w for w in dict.fromkeys(windows) if w in cover), direct


def series_densified(
    model: ModelIr,
    below: PlanNode,
    measures: tuple[str, ...],
    plain: tuple[MetricColumn, ...],
    plan: QueryPlan,
    passed: tuple[str, ...] = (),
) -> tuple[PlanNode, tuple[str, ...]]:
    """A window stage's series over the time spine (plan/densify.py), and the columns the
    stage passes up (the presence mark besides `passed`)."""
    dense = plan.densify
    if dense is None or dense.series is None:
        return below, passed
    columns = (*(m.name for m in plain), *measures)
    fills = (*metric_fills(model, plain), *measure_fills(model, measures))
    node = Densify(
        below,
        dense.series,
        cross=True,
        dims=plan.dims,
        others=dense.others,
        columns=columns,
        fills=fills,
        present=PRESENT if dense.present else None,
        keys_within=dense.within,
    )
    return node, (*passed, PRESENT) if dense.present else passed


def output_densified(
    model: ModelIr, top: PlanNode, plan: QueryPlan, windowed: set[str] | None = None
) -> PlanNode:
    """The result over the time spine (plan/densify.py): every bucket of the range a row."""
    dense = plan.densify
    if dense is None or dense.output is None:
        return top
    having = plan.result_filter
    names = [*plan.outputs[len(plan.dims) :], *(having.metrics if having is not None else ())]
    if windowed is None:  # the flat or merged result: every metric column
        names = [m.name for m in plan.metrics]
    columns = tuple(dict.fromkeys(names))
    metrics = tuple(m for m in plan.metrics if m.name in columns)
    fills = metric_fills(model, metrics, frozenset(windowed or ()))
    return Densify(
        top, dense.output, dense.cross, plan.dims, dense.others, columns=columns, fills=fills
    )
