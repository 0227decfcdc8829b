"""The plan DAG -> one sqlglot tree: one `visit_<kind>` per node kind (plan/nodes/).

Shapes:
- one branch, no window: a flat `SELECT dims, formulas FROM fact JOIN ... GROUP BY dims`;
- several branches: one CTE per branch, merged on the group-by output names (the Merge
  node's strategy), formulas evaluated over the measure columns after the merge;
- a window stage: the branch aggregate as the `base` CTE, the window functions in `win`,
  trim and metric filter on the rows of `win` (see `dosi.sql.window`).
The dialect renders the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.ir.model import ModelIr
from dosi.plan.builder.dag import build_dag
from dosi.plan.node import PlanNode, PlanVisitor
from dosi.plan.nodes import (
    Aggregate,
    ComputeMetrics,
    ConversionJoin,
    DecodeTime,
    Densify,
    DeriveCompute,
    FilterResult,
    Join,
    LodAttach,
    LodBroadcast,
    LodInclude,
    LodRollup,
    Merge,
    OrderLimit,
    PeriodSample,
    PreAggregate,
    Scan,
    SemiAdditiveJoin,
    StreamBucket,
    Trim,
    Window,
)
from dosi.plan.records import (
    Branch,
    ConversionPlan,
    JoinStep,
    LodShape,
    QueryPlan,
    SemiAdditivePlan,
)
from dosi.sql.densify import densify_sql
from dosi.sql.dialects import Dialect
from dosi.sql.dialects.base import RECURSIVE_CTE
from dosi.sql.lod_metric import attach_sql, include_sql
from dosi.sql.percentile import render_percentiles
from dosi.sql.period_sample import period_sample_sql
from dosi.sql.render import Renderer
from dosi.sql.util import and_all, clone, col, cte_name, table
from dosi.sql.window import BASE, WIN, render_window, trim_predicates


@dataclass(frozen=True)
class _Source:
    """What the nodes below an aggregate add up to: the scan, its joins, the bucketing."""

    scan: Scan
    joins: tuple[JoinStep, ...] = ()
    mode: str = "plain"  # "plain" | "pre_aggregate" | "stream" | "lod" | "conversion"
    lod: LodShape | None = None  # D-LOD: the rollups and shape (dosi.sql.lod_field)
    semi_additive: SemiAdditivePlan | None = None  # D-SEMI (dosi.sql.semi_additive)
    conversion: ConversionPlan | None = None  # D-CONVERSION (dosi.sql.conversion)


@dataclass(frozen=True)
class _Grouped:
    """An aggregate not yet given its columns (formulas when flat, measures in a CTE)."""

    branch: Branch
    mode: str


@dataclass(frozen=True)
class _Merged:
    node: Merge
    inputs: tuple[_Grouped, ...]


@dataclass(frozen=True)
class _Windowed:
    """A window stage and the SELECT of its series (a branch aggregate, or the merge)."""

    stage: Window
    base: exp.Select


@dataclass
class _Rows:
    """Result rows as the last of `ctes`, and the predicates kept on them (trim, filter)."""

    ctes: list[tuple[str, exp.Select]]
    wheres: list[exp.Expression] = field(default_factory=list)


#: What a node renders to, from the leaves up: the source rows, a branch aggregate, the
#: branches to merge, a SELECT, a window stage over its series, or the windowed rows.
SqlPart = _Source | _Grouped | _Merged | exp.Select | _Windowed | _Rows


class ToSql(PlanVisitor[SqlPart]):
    """The SQL visitor: one `visit_<kind>` per node kind (`dosi.plan.node.PlanVisitor`)."""

    def __init__(self, model: ModelIr, dialect: Dialect) -> None:
        self.r = Renderer(model, dialect)
        self._spines = 0  # Densify nodes rendered: each names its CTEs apart

    # -- what a parent renders to, where only one part can stand ---------------------------
    def _source(self, node: PlanNode) -> _Source:
        out = node.accept(self)
        assert isinstance(out, _Source)
        return out

    def _grouped(self, node: PlanNode) -> _Grouped:
        out = node.accept(self)
        assert isinstance(out, _Grouped)
        return out

    def _select(self, node: PlanNode) -> exp.Select:
        out = node.accept(self)
        assert isinstance(out, exp.Select)
        return out

    def _staged(self, node: PlanNode) -> _Windowed | _Rows | exp.Select:
        out = node.accept(self)
        assert isinstance(out, _Windowed | _Rows | exp.Select)
        return out

    def visit_scan(self, node: Scan) -> _Source:
        return _Source(node)

    def visit_join(self, node: Join) -> _Source:
        src = self._source(node.parent)
        return replace(src, joins=(*src.joins, JoinStep(node.relationship)))

    def visit_pre_aggregate(self, node: PreAggregate) -> _Source:
        return replace(self._source(node.parent), mode="pre_aggregate")

    def visit_stream_bucket(self, node: StreamBucket) -> _Source:
        return replace(self._source(node.parent), mode="stream")

    def visit_semi_additive_join(self, node: SemiAdditiveJoin) -> _Source:
        """D-SEMI: the branch's FROM joins its snapshots (Renderer.from_clause)."""
        return replace(self._source(node.parent), semi_additive=node.plan)

    def visit_conversion_join(self, node: ConversionJoin) -> _Source:
        """D-CONVERSION: the branch groups attributed conversion events (sql/conversion.py)."""
        return replace(self._source(node.parent), mode="conversion", conversion=node.plan)

    def visit_lod_rollup(self, node: LodRollup) -> _Source:
        """Two-stage: the view reads only this rollup, its dimension filters on the output."""
        return _Source(Scan(node.spec.dataset, node.output_filters), mode="lod", lod=node.shape)

    def visit_lod_broadcast(self, node: LodBroadcast) -> _Source:
        return replace(self._source(node.parent), mode="lod", lod=node.shape)

    def visit_aggregate(self, node: Aggregate) -> _Grouped:
        src = self._source(node.parent)
        branch = Branch(
            id=node.branch_id,
            dataset=node.dataset,
            axis=node.axis,
            joins=src.joins,
            dims=node.dims,
            measures=node.measures,
            filters=src.scan.filters,
            time_filters=src.scan.time_filters,
            lod=src.lod,
            semi_additive=src.semi_additive,
            conversion=src.conversion,
        )
        return _Grouped(branch, src.mode)

    def visit_decode_time(self, node: DecodeTime) -> _Grouped:
        """The parse runs in the aggregate's SELECT over its group keys: the dialect's decode
        fact, applied where the renderer selects an encoded dim (Renderer.decoded)."""
        return self._grouped(node.parent)

    def visit_merge(self, node: Merge) -> _Merged:
        return _Merged(node, tuple(self._grouped(p) for p in node.inputs))

    def visit_compute_metrics(self, node: ComputeMetrics) -> exp.Select:
        below = node.parent.accept(self)
        if isinstance(below, _Grouped):
            if node.passed:  # a window.base series beside measure-column series
                return self.r.flat_passing(
                    below.branch, node.metrics, tuple(n for n, _ in node.passed), below.mode
                )
            return self.r.flat(below.branch, node.metrics, below.mode)
        assert isinstance(below, _Merged)
        return self._merge_sql(below, node)

    def _merge_sql(self, m: _Merged, node: ComputeMetrics) -> exp.Select:
        ctes = [(g.branch.id, self.r.branch_cte(g.branch, g.mode)) for g in m.inputs]
        keyed = m.node.strategy == "union_keys"
        return self.r.merged(m.node.dims, ctes, node.metrics, keyed, taken=node.passed)

    def visit_lod_attach(self, node: LodAttach) -> exp.Select:
        """D-LOD exclude / fixed: side values attached to the view rows."""
        return attach_sql(node, self._select(node.view), [self._select(s.node) for s in node.sides])

    def visit_lod_include(self, node: LodInclude) -> exp.Select:
        """D-LOD include: the finer rows folded per view row."""
        beside = self._select(node.beside) if node.beside is not None else None
        return include_sql(self.r, node, self._select(node.inner), beside)

    def visit_window(self, node: Window) -> _Windowed | _Rows:
        below = node.parent.accept(self)
        if isinstance(below, _Rows):  # a nested window stage (D-DERIVE, WIN-19-06)
            name, body = below.ctes[-1]
            under = f"{name}_{len(below.ctes)}"
            below.ctes[-1] = (under, body)
            below.ctes.append((name, render_window(self.r, node, base=under)))
            return below
        if isinstance(below, _Grouped):
            return _Windowed(node, self.r.branch_cte(below.branch, below.mode))
        assert isinstance(below, exp.Select)  # the merged metrics
        return _Windowed(node, below)

    def visit_densify(self, node: Densify) -> exp.Select:
        """The rows below joined to a time spine (dosi.sql.densify): a branch aggregate, the
        merged metrics, or the rows of a window stage after its trim."""
        below = node.parent.accept(self)
        rows: exp.Select
        if isinstance(below, _Grouped):
            rows = self.r.branch_cte(below.branch, below.mode)
        elif isinstance(below, exp.Select):
            rows = below
        else:
            assert isinstance(below, _Windowed | _Rows)
            done = self._rows(below)
            rows = exp.Select().select(exp.Star(), copy=False).from_(table(WIN), copy=False)
            for cond in done.wheres:
                rows = rows.where(cond, copy=False)
            for name, body in done.ctes:
                rows = rows.with_(cte_name(name), as_=body, copy=False)
        self._spines += 1
        prefix = "dense" if self._spines == 1 else f"dense{self._spines}"
        return densify_sql(self.r, node, rows, prefix)

    def visit_derive_compute(self, node: DeriveCompute) -> _Rows:
        """Stage-tier composes over the window rows: the window CTE renamed, the composes in
        a SELECT over it that takes its name (the trim and filters stay outside)."""
        rows = self._rows(self._staged(node.parent))
        name, body = rows.ctes[-1]
        below = f"{name}_{len(rows.ctes)}"
        rows.ctes[-1] = (below, body)
        sel = exp.Select().select(exp.Star(), copy=False)
        for c in node.columns:
            sel = sel.select(exp.alias_(clone(c.formula), ident(c.name), copy=False), copy=False)
        rows.ctes.append((name, sel.from_(table(below), copy=False)))
        return rows

    def visit_trim(self, node: Trim) -> _Rows:
        rows = self._rows(self._staged(node.parent))
        cond = and_all(trim_predicates(self.r, node))
        if cond is not None:
            rows.wheres.append(cond)
        return rows

    def _rows(self, below: _Windowed | _Rows | exp.Select) -> _Rows:
        """Rows whose predicates stay outside the SELECT computing them (a WHERE inside
        would run before the window functions and lose their lookback)."""
        if isinstance(below, _Rows):
            return below
        if isinstance(below, _Windowed):
            lifted = _lift(below.base)
            return _Rows([*lifted, (BASE, below.base), (WIN, render_window(self.r, below.stage))])
        return _Rows([*_lift(below), (WIN, below)])

    def visit_filter_result(self, node: FilterResult) -> _Rows | exp.Select:
        below = self._staged(node.parent)
        if isinstance(below, exp.Select):
            return self.r.filtered(below, node.outputs, node.predicate)
        rows = self._rows(below)  # after the trim: both keep rows of the windowed result
        rows.wheres.append(clone(node.predicate))
        return rows

    def visit_period_sample(self, node: PeriodSample) -> _Rows:
        """D-WINDOW period_value: the accumulation-grain rows (their trim and filters applied)
        folded to one row per coarser bucket (dosi.sql.period_sample), as the window CTE."""
        below = self._staged(node.parent)
        if isinstance(below, exp.Select):  # a densified result: its own WITH, read whole
            ctes: list[tuple[str, exp.Select]] = []
            rows = below
        else:
            done = self._rows(below)
            ctes = done.ctes
            rows = exp.Select().select(exp.Star(), copy=False).from_(table(WIN), copy=False)
            for cond in done.wheres:
                rows = rows.where(cond, copy=False)
            name, body = ctes[-1]
            under = f"{name}_{len(ctes)}"
            ctes[-1] = (under, body)
            rows = rows.from_(table(under), copy=False)
        return _Rows([*ctes, (WIN, period_sample_sql(self.r, node.spec, rows))])

    def visit_order_limit(self, node: OrderLimit) -> exp.Select:
        below = self._staged(node.parent)
        if isinstance(below, exp.Select):
            return self.r.finish(below, node.order, node.limit)
        rows = self._rows(below)
        final = exp.Select().select(*(col(o) for o in node.outputs), copy=False)
        final = final.from_(table(WIN), copy=False)
        for cond in rows.wheres:
            final = final.where(cond, copy=False)
        final = self.r.finish(final, node.order, node.limit)
        for name, body in rows.ctes:
            final = final.with_(cte_name(name), as_=body, copy=False)
        return final


def _lift(sel: exp.Select) -> list[tuple[str, exp.Select]]:
    """Take `sel`'s CTEs off it (in order), to put them on the statement around it."""
    ctes = sel.args.get("with_")
    sel.set("with_", None)
    return [(c.alias, c.this) for c in (ctes.expressions if ctes is not None else ())]


def dag_to_sql(model: ModelIr, root: PlanNode, dialect: Dialect) -> exp.Expression:
    tree = _recursive(ToSql(model, dialect)._select(root))
    return render_percentiles(model, tree, dialect)  # the dialect's own percentile aggregates


def _recursive(tree: exp.Expression) -> exp.Expression:
    """WITH RECURSIVE where a CTE reads itself (a time spine's steps, Dialect.spine_steps)."""
    for w in tree.find_all(exp.With):
        if any(c.this.meta.get(RECURSIVE_CTE) for c in w.expressions):
            w.set("recursive", True)
    return tree


def render_plan(model: ModelIr, plan: QueryPlan, dialect: Dialect) -> exp.Expression:
    return dag_to_sql(model, build_dag(model, plan, dialect), dialect)
