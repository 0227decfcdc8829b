"""One query through every layer: parse -> resolve -> plan -> SQL tree -> dialect text.

It sits at the root beside the facade because it is the one module that composes every compile
layer (`query`, `plan`, `sql`); `dosi.engine` and `dosi.analysis` call it, and nothing below
them imports it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from dosi.errors import Diagnostic, QueryError
from dosi.ir.model import FieldIr, ModelIr
from dosi.plan.builder.dag import build_dag
from dosi.plan.joins import JoinGraph
from dosi.plan.lod_field import check_lod_field_shape
from dosi.plan.lod_metric import plan_lod_query, reads_lod
from dosi.plan.lod_metric_checks import check_lod_compose_conformed
from dosi.plan.nodes import OrderLimit
from dosi.plan.planner import Planner
from dosi.plan.records import QueryPlan
from dosi.plan.rollup_match import AvailableRollups, RollupMatch, match_rollups
from dosi.plan.scan_sizes import UNKNOWN_SIZES, ScanSizes
from dosi.plan.window import plan_windows
from dosi.plan.window_gates import check_window_gates
from dosi.query.calendar import with_week_start
from dosi.query.densify import resolve_densify
from dosi.query.derive import check_conformed
from dosi.query.metric_dimensions import KEY as METRIC_DIMENSIONS
from dosi.query.metric_dimensions import InnerResult, with_metric_dimensions
from dosi.query.params import OutputColumn, expand_params
from dosi.query.resolve import ResolvedQuery, resolve_query
from dosi.query.spec import Query, parse_query
from dosi.query.spellings import canonical_spellings
from dosi.query.time_ranges import (
    RangePredicates,
    RangeScan,
    When,
    expand_time_ranges,
    restrict_to_ranges,
)
from dosi.sql.dialects import Dialect, get_dialect
from dosi.sql.rollup_build import reads_only_rollups, reads_only_stored
from dosi.sql.to_sql import dag_to_sql


@dataclass(frozen=True)
class CompiledQuery:
    query: Query
    resolved: ResolvedQuery
    plan: QueryPlan
    dag: OrderLimit  # the plan as a tree of nodes: what explain prints, what the SQL renders
    dialect: Dialect
    sql: str
    warnings: tuple[Diagnostic, ...]
    columns: tuple[OutputColumn, ...] = ()  # D-PARAM / time_ranges: column -> metric, params
    # which rollup serves each branch, and why the others did not (explain's Rollups section)
    rollup_notes: tuple[str, ...] = ()
    rollups_served: tuple[tuple[str, str], ...] = ()  # (dataset, rollup)
    # the SQL reads rollups only (no fact or dimension table): it may run on the store
    rollups_whole: bool = False

    def outputs(self) -> list[dict[str, Any]]:
        """One entry per metric column: its metric and resolved params (CORE-Q-16)."""
        if self.columns:
            return [c.to_dict() for c in self.columns]
        return [{"column": m.name, "metric": m.name} for m in self.resolved.metrics]

    def requested_columns(self) -> list[dict[str, Any]]:
        return [
            {
                "requested": d.spelling.split(":")[0] if d.window is None else d.spelling,
                "column": d.output,
            }
            for d in self.resolved.dims
        ]


def compile_query(
    model: ModelIr,
    graph: JoinGraph,
    raw: Any,
    dialect: str | None = None,
    pretty: bool = False,
    rollups: AvailableRollups | None = None,
    *,
    bounded: bool = False,
    sizes: ScanSizes = UNKNOWN_SIZES,
) -> CompiledQuery:
    """`rollups`: the built, fresh rollups branches may read (aggregate awareness, issue 28
    item 2); a branch none can serve reads the fact table. `bounded`: the caller has checked
    `raw` against the query bounds already. `sizes`: the fact tables the connection knows to
    be small (no day pre-aggregation on them: dosi.plan.scan_sizes; the rows are the same)."""
    dia = get_dialect(dialect)
    query, rq, plan, dag, tree, outputs, match = _compile(
        model, graph, raw, dia, rollups, bounded, sizes
    )
    whole = bool(match and match.served and rollups and reads_only_rollups(tree, rollups.tables))
    tree = dia.finalize(tree)
    try:
        sql = dia.render(tree, pretty)
    except Exception as exc:
        raise QueryError(
            "dialect_unsupported",
            f"the plan cannot be rendered for {dia.name}: {exc}",
            hint="compile for another dialect",
        ) from None
    return CompiledQuery(
        query,
        rq,
        plan,
        dag,
        dia,
        sql,
        plan.warnings,
        outputs,
        match.notes if match is not None else (),
        tuple((d, r.name) for d, r in match.served.items()) if match is not None else (),
        whole,
    )


def _compile(
    model: ModelIr,
    graph: JoinGraph,
    raw: Any,
    dia: Dialect,
    rollups: AvailableRollups | None = None,
    bounded: bool = False,
    sizes: ScanSizes = UNKNOWN_SIZES,
) -> tuple[
    Query,
    ResolvedQuery,
    QueryPlan,
    OrderLimit,
    exp.Expression,
    tuple[OutputColumn, ...],
    RollupMatch | None,
]:
    """Parse, resolve, plan and build the SQL tree of one query (not yet finalized for the
    dialect), its branches served by `rollups` where they can be; `metric_dimensions` first
    compiles each inner query the same way (over the fact tables)."""
    model, graph, raw = metric_dimension_model(model, graph, raw, dia)
    try:
        query = parse_query(raw, bounded=bounded)
    except QueryError as err:
        if err.code == "empty_query" and not err.candidates:
            err.candidates = list(model.metrics)
        raise
    model = with_week_start(model, query.week_start)  # the query's calendar (issue 22)
    query = canonical_spellings(model, query)  # `metric_time__month` (dosi.query.spellings)
    expanded, scan = expand_time_ranges(expand_params(model, query), _range_predicates(dia))
    model, query = expanded.model, expanded.query
    rq, plan, dag = plan_dag(model, graph, query, dia, scan, sizes)
    aware = rollups is not None and not reads_lod(rq)
    match = match_rollups(model, rq, plan, rollups) if aware and rollups is not None else None
    if match is not None and match.model is not None:
        s_rq, s_plan, s_dag = plan_dag(match.model, graph, query, dia, scan)
        s_tree = dag_to_sql(match.model, s_dag, dia)
        if reads_only_stored(s_tree, match.served):
            return query, s_rq, s_plan, s_dag, s_tree, expanded.outputs, match
        # when in doubt, the fact table
        match = replace(match, served={}, notes=(*match.notes, "fell back: fact table"))
    return query, rq, plan, dag, dag_to_sql(model, dag, dia), expanded.outputs, match


def metric_dimension_model(
    model: ModelIr, graph: JoinGraph, raw: Any, dia: Dialect
) -> tuple[ModelIr, JoinGraph, Any]:
    """A query with `metric_dimensions` (dosi.query.metric_dimensions): the model with one
    joined dataset per metric dimension, its join graph, and the query reading them; any
    other query as it is."""
    if not isinstance(raw, dict) or METRIC_DIMENSIONS not in raw:
        return model, graph, raw
    out, query, _ = with_metric_dimensions(model, raw, lambda q: _inner(model, graph, q, dia))
    return out, JoinGraph(out), query


def _inner(model: ModelIr, graph: JoinGraph, raw: dict[str, Any], dia: Dialect) -> InnerResult:
    """A metric dimension's inner query (dosi.query.metric_dimensions): its tree and the
    columns its keys and value land in."""
    _, rq, _, _, tree, outputs, _ = _compile(model, graph, raw, dia)
    keys = tuple(d.output for d in rq.dims)
    value = outputs[0].column if outputs else rq.metrics[0].name
    return InnerResult(tree, keys, value)


def plan_tree(
    model: ModelIr, graph: JoinGraph, query: Query, dia: Dialect
) -> tuple[ResolvedQuery, QueryPlan, exp.Expression]:
    """Resolve, plan and render one parsed query to its sqlglot tree (no dialect text)."""
    model = with_week_start(model, query.week_start)
    rq, plan, dag = plan_dag(model, graph, query, dia)
    return rq, plan, dag_to_sql(model, dag, dia)


def plan_dag(
    model: ModelIr,
    graph: JoinGraph,
    query: Query,
    dia: Dialect,
    scan: RangeScan | None = None,
    sizes: ScanSizes = UNKNOWN_SIZES,
) -> tuple[ResolvedQuery, QueryPlan, OrderLimit]:
    """Resolve and plan one parsed query: the plan records and the node tree built on them."""
    model = with_week_start(model, query.week_start)
    rq = resolve_query(model, query)
    if scan is not None:
        rq = restrict_to_ranges(rq, scan)
    check_window_gates(rq, dia)
    check_conformed(rq)
    check_lod_compose_conformed(model, rq, graph.reachable)
    check_lod_field_shape(model, rq)  # D-LOD restrictions before join paths (LOD-NI-08)
    if reads_lod(rq):  # D-LOD metrics: include / attach stages (plan/lod_metric.py)
        plan, root = plan_lod_query(model, graph, rq, dia)
        return rq, plan, root
    dense = resolve_densify(model, rq)  # the query key `densify` (dosi.query.densify)
    plan = plan_windows(model, graph, rq, Planner(model, graph), dia, dense)
    return rq, plan, build_dag(model, plan, dia, sizes)


def _range_predicates(dia: Dialect) -> RangePredicates:
    """A tagged range's gate on a time field, as the dialect renders a time_range filter."""

    def predicates(f: FieldIr, start: When | None, end: When | None) -> list[exp.Expression]:
        operand = dia.time_operand(f.expr, f.datatype)
        preds: list[exp.Expression] = []
        if start is not None:
            low = dia.time_literal(start, f.datatype)
            preds.append(exp.GTE(this=operand.copy(), expression=low))
        if end is not None:
            high = dia.time_literal(end, f.datatype)
            preds.append(exp.LT(this=operand.copy(), expression=high))
        return preds

    return predicates
