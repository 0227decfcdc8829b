"""One query through every layer: parse -> resolve -> plan -> SQL tree -> dialect text.

It sits at the root beside the facade because it is the one module that composes every compile
layer (`query`, `plan`, `sql`); `dosi.engine` and `dosi.analysis` call it, and nothing below
them imports it."""

from __future__ import annotations

from dataclasses import dataclass
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
from dosi.plan.window import plan_windows
from dosi.plan.window_gates import check_window_gates
from dosi.query.calendar import with_week_start
from dosi.query.densify import resolve_densify
from dosi.query.derive import check_conformed
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
    *,
    bounded: bool = False,
) -> CompiledQuery:
    """`bounded`: the caller has checked `raw` against the query bounds already."""
    try:
        query = parse_query(raw, bounded=bounded)
    except QueryError as err:
        if err.code == "empty_query" and not err.candidates:
            err.candidates = list(model.metrics)
        raise
    dia = get_dialect(dialect)
    model = with_week_start(model, query.week_start)  # the query's calendar (issue 22)
    query = canonical_spellings(model, query)  # `metric_time__month` (dosi.query.spellings)
    expanded, scan = expand_time_ranges(expand_params(model, query), _range_predicates(dia))
    model, query = expanded.model, expanded.query
    rq, plan, dag = plan_dag(model, graph, query, dia, scan)
    tree = dia.finalize(dag_to_sql(model, dag, dia))
    try:
        sql = dia.render(tree, pretty)
    except Exception as exc:
        raise QueryError(
            "dialect_unsupported",
            f"the plan cannot be rendered for {dia.name}: {exc}",
            hint="compile for another dialect",
        ) from None
    return CompiledQuery(query, rq, plan, dag, dia, sql, plan.warnings, expanded.outputs)


def plan_tree(
    model: ModelIr, graph: JoinGraph, query: Query, dia: Dialect
) -> tuple[ResolvedQuery, QueryPlan, exp.Expression]:
    """Resolve, plan and render one parsed query to its sqlglot tree (no dialect text)."""
    model = with_week_start(model, query.week_start)
    rq, plan, dag = plan_dag(model, graph, query, dia)
    return rq, plan, dag_to_sql(model, dag, dia)


def plan_dag(
    model: ModelIr, graph: JoinGraph, query: Query, dia: Dialect, scan: RangeScan | None = None
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
    return rq, plan, build_dag(model, plan, dia)


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
