"""One query through every layer: parse -> resolve -> plan -> SQL tree -> dialect text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dosi.errors import Diagnostic, QueryError
from dosi.ir.model import ModelIr
from dosi.plan.gates import check_window_gates
from dosi.plan.joins import JoinGraph
from dosi.plan.nodes import QueryPlan
from dosi.plan.planner import Planner
from dosi.plan.windows import plan_windows
from dosi.query.resolve import ResolvedQuery, resolve_query
from dosi.query.spec import Query, parse_query
from dosi.sql.dialects import Dialect, get_dialect
from dosi.sql.render import render_plan


@dataclass(frozen=True)
class CompiledQuery:
    query: Query
    resolved: ResolvedQuery
    plan: QueryPlan
    dialect: Dialect
    sql: str
    warnings: tuple[Diagnostic, ...]

    def outputs(self) -> list[dict[str, Any]]:
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
    model: ModelIr, graph: JoinGraph, raw: Any, dialect: str | None = None, pretty: bool = False
) -> CompiledQuery:
    try:
        query = parse_query(raw)
    except QueryError as err:
        if err.code == "empty_query" and not err.candidates:
            err.candidates = list(model.metrics)
        raise
    dia = get_dialect(dialect)
    rq, plan, tree = plan_tree(model, graph, query, dia)
    tree = dia.finalize(tree)
    try:
        sql = tree.sql(dialect=dia.name, pretty=pretty)
    except Exception as exc:
        raise QueryError(
            "dialect_unsupported",
            f"the plan cannot be rendered for {dia.name}: {exc}",
            hint="compile for another dialect",
        ) from None
    return CompiledQuery(query, rq, plan, dia, sql, ())


def plan_tree(
    model: ModelIr, graph: JoinGraph, query: Query, dia: Dialect
) -> tuple[ResolvedQuery, QueryPlan, exp.Expression]:
    """Resolve, plan and render one parsed query to its sqlglot tree (no dialect text)."""
    rq = resolve_query(model, query)
    check_window_gates(rq, dia)
    plan = plan_windows(model, graph, rq, Planner(model, graph), dia)
    return rq, plan, render_plan(model, plan, dia)
