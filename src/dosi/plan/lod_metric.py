"""Planning queries that read D-LOD metrics (datus-extensions §3 D-LOD; CHECKLIST LOD-REL-*,
LOD-FXM-*, LOD-NI-*).

* include: the base metrics planned at the view dims plus the include dims (the query's row
  filters and time_range feed that inner grouping, LOD-REL-05), folded per view row by the
  declared outer aggregate (LodInclude).
* exclude / fixed: the view planned as usual; each LOD metric gets a side plan of its base
  (exclude: the view dims minus the excluded ones, filtered like the view; fixed: grouped by
  its declared dims, with the context layer -- time_range, context_filter -- but no
  dimension filter, LOD-FXM-04), attached by a NULL-safe LEFT JOIN on the shared dims or a CROSS JOIN
  (LodAttach). The coarser value is recomputed, never a window over the view (LOD-REL-09).

The rules a query must pass first live in lod_metric_checks.py.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.model import MetricIr, ModelIr
from dosi.plan.builder.dag import build_dag, merge_strategy
from dosi.plan.dialect_facts import PlanDialect
from dosi.plan.joins import JoinGraph
from dosi.plan.lod_metric_checks import (
    check_common,
    excluded_dims,
    not_grouped,
    view_dim_for,
)
from dosi.plan.node import PlanNode
from dosi.plan.nodes import (
    FilterResult,
    LodAttach,
    LodInclude,
    LodIncludeMetric,
    LodSide,
    OrderLimit,
)
from dosi.plan.planner import Planner
from dosi.plan.records import QueryPlan
from dosi.plan.window import plan_windows
from dosi.query.resolve import ResolvedDim, ResolvedQuery, find_field


def reads_lod(rq: ResolvedQuery) -> bool:
    """Does the query read a D-LOD metric (requested or named by a metric filter)?"""
    return any(m.lod is not None for m in rq.planned_metrics)


def plan_lod_query(
    model: ModelIr, graph: JoinGraph, rq: ResolvedQuery, dia: PlanDialect
) -> tuple[QueryPlan, OrderLimit]:
    """The plan records (of the view) and the node tree of a query reading LOD metrics."""
    metrics = rq.planned_metrics
    lods, plain, composes = _leaves(model, metrics)
    check_common(model, rq, lods, plain)
    planner = Planner(model, graph, whole_query=False)
    includes = [m for m in lods if m.lod is not None and m.lod.kind == "include"]
    if includes:
        if composes:
            raise QueryError(
                "not_implemented",
                f"compose metric `{composes[0].name}` over the include metric "
                f"`{includes[0].name}`: arithmetic over an include stage's folded values is "
                "not implemented (D-LOD not-yet table)",
                metrics=[composes[0].name],
                hint=f"query `{includes[0].name}` and compute the arithmetic on its rows",
            )
        view_plan, top = _include(model, graph, rq, dia, planner, lods, plain)
    else:
        view_plan, top = _attach(model, graph, rq, dia, planner, lods, plain)
    if (
        rq.context is not None
    ):  # after the parts' own errors (as the reference orders them), the whole query's verdict: some part must read the context
        parts = [*plain, *_bases(model, lods)]
        planner.check_context_readable(
            [model.measures[x].dataset for m in parts for x in m.measures], rq
        )
        lod_rows = {m.name: _bases(model, [m]) for m in lods}
        named = [
            (m.name, model.measures[x].dataset)
            for m in rq.metrics
            for b in lod_rows.get(m.name, [m])
            for x in b.measures
        ]
        view_plan = replace(
            view_plan, warnings=(*view_plan.warnings, *planner.context_skipped(rq, named))
        )
    outputs = (*(d.output for d in rq.dims), *(m.name for m in rq.metrics))
    if rq.result_filter is not None:
        f = rq.result_filter
        top = FilterResult(top, f.expr, tuple(m.name for m in f.metrics), outputs)
    explicit = {k for k, *_ in rq.order}
    dims = tuple(d.output for d in rq.dims)
    order = (*rq.order, *((d, False, None) for d in dims if d not in explicit))
    root = OrderLimit(top, outputs, order, rq.query.limit)
    plan = replace(view_plan, outputs=outputs, order=order, limit=rq.query.limit)
    return plan, root


def _leaves(
    model: ModelIr, metrics: list[MetricIr]
) -> tuple[list[MetricIr], list[MetricIr], list[MetricIr]]:
    """(LOD leaves, plain metrics, composes over LOD): a compose is looked through to its
    members (LOD-REL-10), its plain members computed in the view, hidden."""
    lods: dict[str, MetricIr] = {}
    plain: dict[str, MetricIr] = {}
    composes: dict[str, MetricIr] = {}

    def visit(m: MetricIr) -> None:
        if m.lod is None:
            plain.setdefault(m.name, m)
        elif m.lod.kind == "compose":
            if m.name not in composes:
                composes[m.name] = m
                for n in m.lod.members:
                    visit(model.metrics[n])
        else:
            lods.setdefault(m.name, m)

    for m in metrics:
        visit(m)
    return list(lods.values()), list(plain.values()), list(composes.values())


# -- include ----------------------------------------------------------------------------------
def _include(
    model: ModelIr,
    graph: JoinGraph,
    rq: ResolvedQuery,
    dia: PlanDialect,
    planner: Planner,
    lods: list[MetricIr],
    plain: list[MetricIr],
) -> tuple[QueryPlan, PlanNode]:
    first = lods[0]
    assert first.lod is not None
    base_ds = model.metrics[first.lod.base].datasets
    own = [m for m in plain if m.datasets & base_ds]
    if own:
        raise QueryError(
            "not_implemented",
            f"metric `{own[0].name}` aggregates the fact's own rows, but `{first.name}` "
            "includes a level of detail whose finer grouping the outer stage reads instead: "
            "two grains, one relative to the view, are not nested (D-LOD not-yet table)",
            metrics=[own[0].name, first.name],
            hint=f"query `{own[0].name}` separately, or declare it as an include metric "
            f"over the same dimensions as `{first.name}`",
        )
    grains = {m.lod.dims for m in lods if m.lod is not None}
    if len(grains) > 1:
        other = next(m for m in lods if m.lod is not None and m.lod.dims != first.lod.dims)
        raise QueryError(
            "not_implemented",
            f"include metrics `{first.name}` and `{other.name}` include different dimensions: "
            "the outer stage reads one finer grouping",
            metrics=[first.name, other.name],
            hint="query them separately",
        )
    extra: list[ResolvedDim] = []
    taken = {d.output for d in rq.dims}
    for q in first.lod.dims:
        if view_dim_for(model, rq, q) is not None:
            continue  # already a view dim: the inner grouping holds it
        f = find_field(model, rq.query, q)
        clash = next((d for d in rq.dims if d.output == f.name), None)
        if clash is not None:  # LOD-NI-11: the grid would read them as one column
            raise QueryError(
                "duplicate_output_name",
                f"the level-of-detail dimension `{q}` of `{first.name}` and the group-by item "
                f"`{clash.spelling}` would both be the column `{f.name}`, and they are not "
                "the same field",
                metrics=[first.name],
                candidates=[q],
                hint=f"group by `{q}` itself, or rename one of the fields in the model",
            )
        out = f"__lod_{f.name}"
        while out in taken:
            out = "_" + out
        taken.add(out)
        extra.append(ResolvedDim(out, q, f, None))
    bases = _bases(model, lods)
    inner_rq = replace(rq, metrics=bases, dims=[*rq.dims, *extra], result_filter=None, order=[])
    inner_plan = plan_windows(model, graph, inner_rq, planner, dia)
    inner = _computed(model, inner_plan, dia)
    dims = tuple(d.output for d in rq.dims)
    beside = None
    if plain:  # a where_sql field some metric cannot read, as over the whole query
        reach = replace(rq, metrics=[*plain, *_bases(model, lods)], context=None)
        plan_windows(
            model, graph, replace(reach, result_filter=None, order=[]), planner, dia
        )  # other datasets' metrics: their branches merge beside the include stage
        beside_rq = replace(rq, metrics=plain, result_filter=None, order=[])
        beside = _computed(model, plan_windows(model, graph, beside_rq, planner, dia), dia)
    node = LodInclude(
        inner,
        dims,
        tuple(
            LodIncludeMetric(m.name, m.lod.outer or "avg", m.lod.base)
            for m in lods
            if m.lod is not None
        ),
        beside,
        tuple(m.name for m in plain),
        merge_strategy(dims, dia),
        tuple(m.name for m in rq.planned_metrics),
        tuple(
            (m.name, m.fill_nulls_with if m.fill_nulls_with is not None else 0)
            for m in plain
            if m.window is None and (m.fill_nulls_with is not None or m.is_pure_count)
        ),
    )
    return inner_plan, node


# -- exclude / fixed --------------------------------------------------------------------------
def _attach(
    model: ModelIr,
    graph: JoinGraph,
    rq: ResolvedQuery,
    dia: PlanDialect,
    planner: Planner,
    lods: list[MetricIr],
    plain: list[MetricIr],
) -> tuple[QueryPlan, PlanNode]:
    # the reference engine's order: with no group-by a LOD key is reported first; else a
    # group-by item or where_sql field some metric cannot read comes before the LOD key
    # rules, and those before a context_filter problem
    if not rq.dims:
        kept = _keys(model, rq, lods)
    reach = replace(rq, metrics=[*plain, *_bases(model, lods)], context=None)
    if rq.dims and rq.time_range is not None:
        # a time_range some metric cannot read comes after the LOD key rules (its own
        # planner: the probe leaves no state behind)
        probe = replace(reach, result_filter=None, order=[], time_range=None)
        plan_windows(model, graph, probe, Planner(model, graph, whole_query=False), dia)
        _keys(model, rq, lods)
    plan_windows(model, graph, replace(reach, result_filter=None, order=[]), planner, dia)
    if rq.dims:
        kept = _keys(model, rq, lods)
    sides: list[LodSide] = []
    for m in lods:
        lod = m.lod
        assert lod is not None
        if lod.kind == "exclude":
            side_dims = kept[m.name]
            side_rq = replace(rq, dims=side_dims)
        else:
            side_dims = [d for q in lod.dims if (d := view_dim_for(model, rq, q)) is not None]
            # fixed: the context layer (time_range, context_filter) feeds it; dimension
            # filters never do (LOD-FXM-04)
            side_rq = replace(rq, dims=side_dims, where=None)
        side_rq = replace(side_rq, metrics=_bases(model, [m]), result_filter=None, order=[])
        side_plan = plan_windows(model, graph, side_rq, planner, dia)
        on = tuple(d.output for d in side_dims)
        kind = "exclude" if lod.kind == "exclude" else "fixed"
        sides.append(LodSide(m.name, kind, _computed(model, side_plan, dia), on, lod.base))
    # the view's rows: its plain metrics, plus a LOD base (not output) for every dataset
    # they do not cover, so the rows are the base dataset's groups under the query's filters
    # as the reference has them
    # (and, beside metrics of other datasets, the union of both datasets' groups)
    covered = {d for m in plain for d in m.datasets}
    carriers = list(plain)
    for b in _bases(model, lods):
        if not b.datasets & covered:
            carriers.append(b)
            covered |= b.datasets
    view_rq = replace(rq, metrics=carriers, result_filter=None, order=[])
    view_plan = plan_windows(model, graph, view_rq, planner, dia)
    view = _computed(model, view_plan, dia)
    columns = tuple(
        (m.name, _inline(model, m.lod.formula) if m.lod is not None and m.lod.formula else None)
        for m in rq.planned_metrics
    )
    node = LodAttach(
        view,
        tuple(sides),
        tuple(d.output for d in rq.dims),
        tuple((n, f if f is not None else exp.column(n)) for n, f in columns),
    )
    return view_plan, node


def _inline(model: ModelIr, formula: exp.Expression) -> exp.Expression:
    """A compose formula with its compose members replaced by their own formulas, down to
    plain and LOD leaves (the columns the attach stage has)."""

    def sub(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table:
            m = model.metrics.get(n.name)
            if m is not None and m.lod is not None and m.lod.formula is not None:
                return exp.Paren(this=_inline(model, m.lod.formula))
        return n

    return formula.transform(sub)


def _keys(model: ModelIr, rq: ResolvedQuery, lods: list[MetricIr]) -> dict[str, list[ResolvedDim]]:
    """Every fixed key a view dim, every excluded dim one the view carries; the view dims
    each exclude metric keeps."""
    kept: dict[str, list[ResolvedDim]] = {}
    for m in lods:
        assert m.lod is not None
        if m.lod.kind == "exclude":
            kept[m.name] = excluded_dims(model, rq, m)
        else:
            for q in m.lod.dims:
                if view_dim_for(model, rq, q) is None:
                    raise not_grouped(m, q, rq)
    return kept


# -- helpers ----------------------------------------------------------------------------------
def _bases(model: ModelIr, lods: list[MetricIr]) -> list[MetricIr]:
    out: dict[str, MetricIr] = {}
    for m in lods:
        assert m.lod is not None
        out.setdefault(m.lod.base, model.metrics[m.lod.base])
    return list(out.values())


def _computed(model: ModelIr, plan: QueryPlan, dia: PlanDialect) -> PlanNode:
    """A sub-plan's rows before order / limit: its metric formulas over the grouped rows."""
    root = build_dag(model, plan, dia)
    return root.parent
