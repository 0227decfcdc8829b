"""Planner: ResolvedQuery -> QueryPlan.

Measures are grouped into branches keyed by (fact dataset, time axis): a branch only joins
many-to-one from its fact dataset, so no aggregate ever runs over fanned-out rows. Metrics
whose measures live in several branches are computed after the merge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sqlglot import exp

from dosi.errors import Diagnostic, QueryError
from dosi.ir.conform import conformity
from dosi.ir.model import FieldIr, MeasureIr, MetricIr, ModelIr
from dosi.plan.builder.stream_window import plan_stream
from dosi.plan.conform import ConformedSpellings
from dosi.plan.conversion import conversion_plan
from dosi.plan.empty_buckets import empty_bucket_filter
from dosi.plan.join_via import path_via, retry_with_via, via_targets
from dosi.plan.joins import JoinGraph, join_order
from dosi.plan.lod_field import lod_query_branch
from dosi.plan.records import (
    Branch,
    BranchDim,
    FilterResult,
    JoinStep,
    MetricColumn,
    QueryPlan,
    TimeFilter,
)
from dosi.plan.semi_additive import semi_additive_plan
from dosi.plan.time_format import branch_dim, time_filter
from dosi.plan.validity import version_time
from dosi.plan.where_reach import where_context_error
from dosi.query.metric_time_filter import bind_metric_time, uses_metric_time
from dosi.query.resolve import ResolvedQuery
from dosi.query.time_format import check_bounds


@dataclass
class _BranchDraft:
    dataset: str
    axis: FieldIr | None
    measures: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)


# Aggregates a repeated row cannot change: safe to evaluate through a join that repeats the
# measure's rows (the reference engine evaluates `COUNT(DISTINCT customers.id)` per order
# channel this way: customers who ordered through each channel).
DUP_INSENSITIVE = frozenset({"count_distinct", "min", "max", "approx_count_distinct"})


def filters_metric_time(rq: ResolvedQuery) -> bool:
    """where_sql or context_filter names metric_time (each metric's own axis)."""
    return any(w is not None and w.metric_time for w in (rq.where, rq.context))


def time_field_for(
    model: ModelIr,
    graph: JoinGraph,
    metric: MetricIr,
    root: str,
    *,
    for_range: bool = False,
) -> FieldIr:
    """The field metric_time means for one metric in a branch rooted at `root`."""
    if metric.time_axis is not None:
        f = model.field(metric.time_axis)
        if graph.reachable(root, f.dataset):
            return f
        # CONF-14: a merged conformed series (issue 20 point 3) is one axis in several
        # spellings; each fact's branch reads its own
        cls = conformity(model).class_of(f.dataset, f.name)
        mine = cls.member_on(root) if cls is not None else None
        if mine is not None:
            return mine
    own = model.datasets[root].primary_time
    if own is not None and metric.time_axis is None:
        return model.datasets[root].fields[own]
    times = [f.qualified for d in model.datasets.values() for f in d.fields.values() if f.is_time]
    if for_range:
        raise QueryError(  # the code the fallback's cause names (issue 20 point 10)
            "no_primary_time_dimension",
            f"metric `{metric.name}` has no primary time dimension, so a time_range without "
            "`dimension` has no column to filter",
            metrics=[metric.name],
            candidates=times,
            hint='name the time field: "time_range": {"dimension": "dataset.field", ...}',
        )
    raise QueryError(
        "no_primary_time_dimension",
        f"metric `{metric.name}` has no primary time dimension, so metric_time cannot apply to it",
        metrics=[metric.name],
        candidates=times,
        hint="declare time_dimension on the metric or its dataset (DATUS D-TIME), or group by "
        "an explicit time field",
    )


class Planner:
    def __init__(self, model: ModelIr, graph: JoinGraph, *, whole_query: bool = True) -> None:
        self.model = model
        self.graph = graph
        # False when planning one part of a query (a D-LOD side): another part may read the
        # context filter, so `context_unreadable` is the whole query's verdict, not a part's
        self.whole_query = whole_query
        self.conformed = ConformedSpellings(model, graph)  # D-CONFORM per-branch spellings

    def plan(self, rq: ResolvedQuery, extra_metrics: tuple[MetricIr, ...] = ()) -> QueryPlan:
        model = self.model
        needs_axis = (
            rq.uses_metric_time
            or (rq.time_range is not None and rq.time_range.field is None)
            or filters_metric_time(rq)
        )
        # a branch per fact dataset, time axis and measure variant (D-SEMI snapshot rows,
        # D-CONVERSION attributed events: MeasureIr.branch_key)
        drafts: dict[tuple[str, str | None, str | None], _BranchDraft] = {}
        sources: dict[str, list[tuple[str, tuple[str, str | None, str | None]]]] = {}
        # a stage-tier compose is computed above the window stage (plan/derive_stage.py)
        all_metrics = [
            m
            for m in [*rq.planned_metrics, *extra_metrics]
            if m.derive is None or not m.derive.above_stage
        ]
        required = self._required_datasets(rq)
        for m in all_metrics:
            srcs: list[tuple[str, tuple[str, str | None, str | None]]] = []
            for mname in m.measures:
                meas = model.measures[mname]
                root = self._root(m, meas, required, rq)
                axis = (
                    time_field_for(model, self.graph, m, root, for_range=not rq.uses_metric_time)
                    if needs_axis
                    else None
                )
                key = (root, axis.qualified if axis else None, meas.branch_key)
                draft = drafts.get(key)
                if draft is None:
                    draft = drafts[key] = _BranchDraft(root, axis)
                if mname not in draft.measures:
                    draft.measures.append(mname)
                if m.name not in draft.metrics:
                    draft.metrics.append(m.name)
                srcs.append((mname, key))
            sources[m.name] = srcs
        branch_ids = {key: f"m{i}" for i, key in enumerate(drafts)}
        self._unranged: list[tuple[list[str], str, QueryError]] = []
        if rq.context is not None and drafts and self.whole_query:
            # the whole query's verdict before any branch resolves its own paths (a D-LOD
            # rollup's included), as the reference engine orders it
            self.check_context_readable([d.dataset for d in drafts.values()], rq)
        branches = tuple(self._branch(branch_ids[k], d, rq) for k, d in drafts.items())
        warnings = self._range_not_applied(rq, len(branches))
        if self.whole_query:
            warnings += self.context_skipped(
                rq, [(n, d.dataset) for d in drafts.values() for n in d.metrics]
            )
        multi = len(branches) > 1
        metrics = tuple(
            MetricColumn(
                name=m.name,
                formula=m.formula,
                sources=tuple((meas, branch_ids[key]) for meas, key in sources[m.name]),
                fill=m.fill_nulls_with if m.window is None else None,
                zero_fill_count=multi and m.is_pure_count and m.fill_nulls_with is None,
            )
            for m in all_metrics
        )
        dims = tuple(d.output for d in rq.dims)
        outputs = (*dims, *(m.name for m in rq.metrics))
        # after the caller's keys, the group-by columns break ties: results are deterministic
        explicit = {k for k, *_ in rq.order}
        order = (*rq.order, *((d, False, None) for d in dims if d not in explicit))
        having = None
        if rq.result_filter is not None:
            f = rq.result_filter
            having = FilterResult(f.expr, tuple(m.name for m in f.metrics))
        plan = QueryPlan(
            branches=branches,
            dims=dims,
            metrics=metrics,
            outputs=outputs,
            order=order,
            limit=rq.query.limit,
            result_filter=having,
            warnings=warnings,
        )
        if any(d.window is not None for d in rq.dims):  # window_start / window_end columns
            plan = plan_stream(plan, rq)
        return plan

    @staticmethod
    def _required_datasets(rq: ResolvedQuery) -> list[str]:
        """Datasets a branch must reach for this query's dims, filters and explicit range."""
        out = [d.field.dataset for d in rq.dims if d.field is not None]
        if rq.where is not None:
            out.extend(f.dataset for f in rq.where.fields)
        if rq.time_range is not None and rq.time_range.field is not None:
            out.append(rq.time_range.field.dataset)
        if rq.context is not None:
            out.extend(f.dataset for f in rq.context.fields)
        return list(dict.fromkeys(out))

    def _root(self, m: MetricIr, meas: MeasureIr, required: list[str], rq: ResolvedQuery) -> str:
        """The fact dataset whose branch evaluates `meas`: its own dataset whenever that
        reaches every dataset the query needs (as the reference does: `COUNT(DISTINCT
        customer.id)` counts the customer table, buyers or not). A duplicate-insensitive
        measure whose own dataset cannot reach the query's dimensions is evaluated through
        the join from a dataset that reaches both: first the metric's other measures' (one
        metric, one branch: `SUM(orders.x) / COUNT(DISTINCT customers.id)` per order
        channel), then the query's own datasets, then any bridging fact in model order
        (customers per store state through the sales; the reference picks the same)."""
        own = meas.dataset
        reach = self.graph.reachable
        if self.conformed.active and all(self.conformed.reaches(own, f) for f in _named_fields(rq)):
            return own  # D-CONFORM: every field read on `own` or in its paired spelling
        if meas.agg not in DUP_INSENSITIVE or all(reach(own, r) for r in required):
            return own
        # never the datasets of other metrics in the query: the answer must not depend on
        # which other metrics share it
        owners = [self.model.measures[x].dataset for x in m.measures]
        for cand in dict.fromkeys([*owners, *required, *self.model.datasets]):
            if reach(cand, own) and all(reach(cand, r) for r in required):
                return cand
        return own

    def _reads_context(self, dataset: str, rq: ResolvedQuery) -> bool:
        """Whether a branch rooted at `dataset` can read every field of the context filter
        (D-LOD filter placement: the context applies to the metrics that can read it and is
        skipped by the others, as the reference engine does)."""
        assert rq.context is not None
        reach = self.graph.reachable
        return all(f.dataset == dataset or reach(dataset, f.dataset) for f in rq.context.fields)

    def check_context_readable(self, datasets: Iterable[str], rq: ResolvedQuery) -> None:
        """`context_unreadable` when no branch of the query (rooted at `datasets`) can read
        the context filter."""
        assert rq.context is not None
        roots = list(dict.fromkeys(datasets))
        if any(self._reads_context(ds, rq) for ds in roots):
            return
        text = rq.query.context_filter
        reads = ", ".join(roots)
        raise QueryError(
            "context_unreadable",
            f"the context_filter `{text}` names fields no metric of this query can read "
            f"(their rows: {reads}); filter on fields those datasets reach, or add a metric "
            "whose dataset reaches the filtered one",
            hint="a context filter applies to the metrics whose dataset reaches its fields "
            "along many-to-one relationships",
        )

    def _branch(self, bid: str, draft: _BranchDraft, rq: ResolvedQuery) -> Branch:
        model = self.model
        ds = draft.dataset
        needed: dict[str, str] = {}  # dataset -> why
        for mname in draft.measures:
            for d in model.measures[mname].datasets:
                needed.setdefault(d, f"measure `{mname}`")
        dims: list[BranchDim] = []
        spell = self.conformed
        read_on: dict[str, str] = {}  # group-by spelling -> the dataset this branch reads it on
        for d in rq.dims:
            f = spell.field_in_branch(ds, d.field) if d.field is not None else draft.axis
            if f is None:  # pragma: no cover - needs_axis guarantees an axis
                raise AssertionError("metric_time without an axis")
            spell.check_grain(f, d.grain, d.spelling)  # CONF-08: each branch's floor
            needed.setdefault(f.dataset, f"group_by `{d.spelling}`")
            read_on[d.spelling] = f.dataset
            dims.append(branch_dim(d.output, f, d.grain, d.window))
        vias = via_targets(rq.dims, read_on)  # docs/query.md, "Choosing a join path"
        measures = [model.measures[m] for m in draft.measures]
        semi = semi_additive_plan(
            model, measures, list(zip(rq.dims, dims, strict=True)), draft.axis
        )
        conversion = conversion_plan(model, measures)
        filters: list[exp.Expression] = []
        planned = {m.name: m for m in rq.planned_metrics}
        served = [planned.get(n) or model.metrics.get(n) for n in draft.metrics]
        kept = None if None in served else empty_bucket_filter(served, measures)  # type: ignore[arg-type]
        if kept is not None:  # dosi 1.15 empty_buckets: drop (plan/empty_buckets.py)
            filters.append(kept)
        elif semi is not None and None not in served:  # ... of the picked snapshot rows
            after = empty_bucket_filter(served, measures, semi_additive=True)  # type: ignore[arg-type]
            semi = replace(semi, kept=after) if after is not None else semi
        where = spell.where_in_branch(ds, rq)  # CONF-05: either spelling in where_sql
        if where is not None:
            for f in where[1]:
                needed.setdefault(f.dataset, f"where_sql field `{f.qualified}`")
            filters.append(self._on_axis(where[0], draft, needed, "where_sql"))
        if rq.context is not None and self._reads_context(ds, rq):
            # context_filter: a row filter of the view too, for the metrics that can read it
            for f in rq.context.fields:
                needed.setdefault(f.dataset, f"context_filter field `{f.qualified}`")
            filters.append(self._on_axis(rq.context.expr, draft, needed, "context_filter"))
        scans = {rq.range_scans[m] for m in draft.measures if m in rq.range_scans}
        for gate, gate_field in scans:  # time_ranges: the OR of the tags on this branch's axis
            needed.setdefault(gate_field.dataset, f"time_ranges on `{gate_field.qualified}`")
            filters.append(gate)
        time_filters: list[TimeFilter] = []
        if rq.time_range is not None:
            tf = rq.time_range.field or draft.axis
            if tf is not None:
                tf = spell.field_in_branch(ds, tf)  # CONF-05: time_range.dimension
            assert tf is not None  # time_field_for raised no_primary_time_dimension
            why = f"time_range on `{tf.qualified}`"
            unread = self._range_unreadable(ds, tf, why, rq)
            if unread is not None:  # LOD-FLT-01: a context filter this branch cannot read
                self._unranged.append((list(draft.metrics), ds, unread))
            else:
                needed.setdefault(tf.dataset, why)
                tr = rq.time_range.range
                check_bounds(tf, tr)  # D-FORMAT: an encoded axis takes aligned dates only
                time_filters.append(time_filter(tf, tr.start, tr.end))
        paths = []
        for target, why in needed.items():
            named = vias.get(target)
            try:
                if named is not None and named.via is not None:
                    paths.append(path_via(self.graph, ds, target, named.via, why))
                else:
                    paths.append(self.graph.path(ds, target, why))
            except QueryError as err:
                err.metrics = list(draft.metrics)
                if err.code == "ambiguous_join_path" and named is None:
                    err.suggested_retry = retry_with_via(self.graph, rq, ds, target, read_on)
                if why.startswith("where_sql"):  # some other metric reads it: context
                    ctx = where_context_error(model, rq, draft.metrics, spell.reaches)
                    if ctx is not None:
                        raise ctx from None
                raise spell.unreachable(ds, err) from None
        joins = tuple(JoinStep(r) for r in join_order(paths))
        axis = draft.axis.qualified if draft.axis else None
        try:  # D-VALIDITY: a time to pick each slowly changing dimension's version by
            version_time(model, ds, axis, (s.relationship for s in joins))
        except QueryError as err:
            err.metrics = list(draft.metrics)
            raise
        branch = Branch(
            id=bid,
            dataset=ds,
            axis=axis,
            joins=joins,
            dims=tuple(dims),
            measures=tuple(draft.measures),
            filters=tuple(filters),
            time_filters=tuple(time_filters),
            semi_additive=semi,
            conversion=conversion,
        )
        out = lod_query_branch(model, self.graph, branch, rq)  # D-LOD (plan/lod_field.py)
        if out.lod is not None and (semi is not None or conversion is not None):
            raise QueryError(
                "not_implemented",
                "a D-LOD fixed field in the branch of a "
                + ("semi-additive" if semi is not None else "conversion")
                + f" metric ({', '.join(draft.metrics)}) is not implemented",
                metrics=list(draft.metrics),
                hint="query the level-of-detail field with other metrics",
            )
        return out

    def _on_axis(
        self, expr: exp.Expression, draft: _BranchDraft, needed: dict[str, str], key: str
    ) -> exp.Expression:
        """A row filter with metric_time read as this branch's own time axis (issue 21 item
        2: each metric's axis, as a time_range without dimension)."""
        if not uses_metric_time(expr):
            return expr
        axis = draft.axis
        assert axis is not None  # needs_axis: time_field_for raised for a metric without one
        axis = self.conformed.field_in_branch(draft.dataset, axis)
        needed.setdefault(axis.dataset, f"metric_time in {key}")
        return bind_metric_time(expr, axis)

    def _range_unreadable(
        self, ds: str, tf: FieldIr, why: str, rq: ResolvedQuery
    ) -> QueryError | None:
        """Why a branch rooted at `ds` cannot read an explicit time_range field (no path, or
        only through a fan-out); None when it can, or when the range is each branch's own
        axis. Only the whole query decides (a D-LOD side is one part of it)."""
        if rq.time_range is None or rq.time_range.field is None or not self.whole_query:
            return None
        if tf.dataset == ds or self.graph.reachable(ds, tf.dataset):
            return None
        try:
            self.graph.path(ds, tf.dataset, why)
        except QueryError as err:
            return err
        return None  # pragma: no cover - reachable() and path() agree

    def context_skipped(
        self, rq: ResolvedQuery, parts: list[tuple[str, str]]
    ) -> tuple[Diagnostic, ...]:
        """LOD-FLT-01: metrics whose rows cannot read the context_filter are computed without
        it; one `context_skipped` notice names them (the reference engine's code), so an
        unapplied condition never looks applied. `parts`: (metric, the dataset of its rows)."""
        if rq.context is None:
            return ()
        names = list(dict.fromkeys(n for n, ds in parts if not self._reads_context(ds, rq)))
        if not names:
            return ()
        return (
            Diagnostic(
                "context_skipped",
                f"context_filter `{rq.query.context_filter}` does not filter "
                + ", ".join(f"`{n}`" for n in names)
                + ": their datasets cannot read every field it names along many-to-one "
                "relationships, so they are computed without it",
                "info",
                hint="filter on fields every metric's dataset reaches, or query these metrics "
                "separately",
                candidates=tuple(names),
            ),
        )

    def _range_not_applied(self, rq: ResolvedQuery, n_branches: int) -> tuple[Diagnostic, ...]:
        """LOD-FLT-01 (time_range is a context filter): branches that cannot read the range's
        field are computed unfiltered with one warning naming their metrics; the error only
        when no branch can read it."""
        if not self._unranged:
            return ()
        if len(self._unranged) == n_branches:
            metrics, ds, err = self._unranged[0]
            err.metrics = metrics
            raise self.conformed.unreachable(ds, err) from None
        assert rq.time_range is not None and rq.time_range.field is not None
        names = list(dict.fromkeys(n for ms, _, _ in self._unranged for n in ms))
        field_name = rq.time_range.field.qualified
        return (
            Diagnostic(
                "time_range_not_applied",
                f"time_range on `{field_name}` does not filter "
                + ", ".join(f"`{n}`" for n in names)
                + f": their datasets cannot read `{field_name}` along many-to-one "
                "relationships, so they are computed over all time",
                "warning",
                hint="range on each metric's own time field (omit `dimension` or use "
                "metric_time), or query these metrics separately",
                candidates=tuple(names),
            ),
        )


def _named_fields(rq: ResolvedQuery) -> list[FieldIr]:
    """Every field the query groups, filters or ranges by (metric_time excluded)."""
    out = [d.field for d in rq.dims if d.field is not None]
    if rq.where is not None:
        out.extend(rq.where.fields)
    if rq.time_range is not None and rq.time_range.field is not None:
        out.append(rq.time_range.field)
    return out
