"""The plan DAG -> one sqlglot tree: one `visit_<kind>` per node kind (plan/nodes/).

Shapes:
- one branch, no window: a flat `SELECT dims, formulas FROM fact JOIN ... GROUP BY dims`;
- several branches: one CTE per branch, merged on the group-by output names (the Merge
  node's strategy), formulas evaluated over the measure columns after the merge;
- a window stage: the branch aggregate as the `base` CTE, the window functions in `win`,
  trim and metric filter on the rows of `win` (see `dosi.sql.windows`).
The dialect renders the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from dosi.ir.model import ModelIr
from dosi.plan.builder.dag import build_dag
from dosi.plan.node import PlanNode
from dosi.plan.nodes import (
    Aggregate,
    ComputeMetrics,
    FilterResult,
    Join,
    Merge,
    OrderLimit,
    PreAggregate,
    Scan,
    StreamBucket,
    Trim,
    Window,
)
from dosi.plan.records import Branch, JoinStep, MetricColumn, QueryPlan
from dosi.sql.dialects import Dialect
from dosi.sql.render import Renderer
from dosi.sql.util import and_all, col
from dosi.sql.windows import BASE, WIN, render_window, trim_predicates


@dataclass(frozen=True)
class _Source:
    """What the nodes below an aggregate add up to: the scan, its joins, the bucketing."""

    scan: Scan
    joins: tuple[JoinStep, ...] = ()
    mode: str = "plain"  # "plain" | "pre_aggregate" | "stream"


@dataclass(frozen=True)
class _Grouped:
    """An aggregate not yet given its columns (formulas when flat, measures in a CTE)."""

    branch: Branch
    mode: str


@dataclass(frozen=True)
class _Merged:
    node: Merge
    inputs: tuple[_Grouped, ...]


@dataclass
class _Windowed:
    """Rows of the `win` CTE over `base`, and the predicates kept on them."""

    base: exp.Select
    win: exp.Select
    wheres: list[exp.Expression] = field(default_factory=list)


class ToSql:
    def __init__(self, model: ModelIr, dialect: Dialect) -> None:
        self.r = Renderer(model, dialect)

    def visit_scan(self, node: Scan) -> _Source:
        return _Source(node)

    def visit_join(self, node: Join) -> _Source:
        src: _Source = node.parent.accept(self)
        return replace(src, joins=(*src.joins, JoinStep(node.relationship)))

    def visit_pre_aggregate(self, node: PreAggregate) -> _Source:
        return replace(node.parent.accept(self), mode="pre_aggregate")

    def visit_stream_bucket(self, node: StreamBucket) -> _Source:
        return replace(node.parent.accept(self), mode="stream")

    def visit_aggregate(self, node: Aggregate) -> _Grouped:
        src: _Source = node.parent.accept(self)
        branch = Branch(
            id=node.branch_id,
            dataset=node.dataset,
            axis=node.axis,
            joins=src.joins,
            dims=node.dims,
            measures=node.measures,
            filters=src.scan.filters,
            time_filters=src.scan.time_filters,
        )
        return _Grouped(branch, src.mode)

    def visit_merge(self, node: Merge) -> _Merged:
        return _Merged(node, tuple(p.accept(self) for p in node.inputs))

    def visit_compute_metrics(self, node: ComputeMetrics) -> exp.Select:
        below = node.parent.accept(self)
        if isinstance(below, _Grouped):
            return self.r.flat(below.branch, node.metrics, below.mode)
        assert isinstance(below, _Merged)
        return self._merge_sql(below, node.metrics)

    def _merge_sql(self, m: _Merged, metrics: tuple[MetricColumn, ...]) -> exp.Select:
        inputs = [(g.branch.id, self.r.branch_cte(g.branch, g.mode)) for g in m.inputs]
        keyed = m.node.strategy == "union_keys"
        return self.r.merged(m.node.dims, inputs, metrics, keyed)

    def visit_window(self, node: Window) -> _Windowed:
        below = node.parent.accept(self)
        assert isinstance(below, _Grouped)
        base = self.r.branch_cte(below.branch, below.mode)
        return _Windowed(base, render_window(self.r, node))

    def visit_trim(self, node: Trim) -> _Windowed:
        w: _Windowed = node.parent.accept(self)
        cond = and_all(trim_predicates(self.r, node))
        if cond is not None:
            w.wheres.append(cond)
        return w

    def visit_filter_result(self, node: FilterResult) -> _Windowed | exp.Select:
        below = node.parent.accept(self)
        if isinstance(below, _Windowed):  # after the trim: both keep rows of the windowed result
            below.wheres.append(node.predicate.copy())
            return below
        return self.r.filtered(below, node.outputs, node.predicate)

    def visit_order_limit(self, node: OrderLimit) -> exp.Select:
        below = node.parent.accept(self)
        if not isinstance(below, _Windowed):
            return self.r.finish(below, node.order, node.limit)
        final = exp.Select().select(*(col(o) for o in node.outputs), copy=False)
        final = final.from_(exp.to_table(WIN), copy=False)
        for cond in below.wheres:
            final = final.where(cond, copy=False)
        final = self.r.finish(final, node.order, node.limit)
        return final.with_(BASE, as_=below.base, copy=False).with_(WIN, as_=below.win, copy=False)


def dag_to_sql(model: ModelIr, root: PlanNode, dialect: Dialect) -> exp.Expression:
    return root.accept(ToSql(model, dialect))


def render_plan(model: ModelIr, plan: QueryPlan, dialect: Dialect) -> exp.Expression:
    return dag_to_sql(model, build_dag(model, plan, dialect), dialect)
