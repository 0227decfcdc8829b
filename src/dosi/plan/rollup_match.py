"""Aggregate awareness (issue 28 item 2): which plan branches a declared rollup can answer,
and the model under which they read it.

A branch is served when the rollup holds every measure it aggregates (additive, so partial
values roll up), every field it groups by (the time field at a grain the rollup's grain
divides), every field its filters read, and time bounds on whole rollup buckets; and when no
other part of the plan reads the dataset's rows (a join from another branch, a D-LOD stage).
Everything above the branch aggregates (merges, D-FILL, metric formulas, D-DERIVE composes,
window stages with their scan expansion, metric filters, densify) is unchanged: it reads the
same branch columns. When in doubt, the fact table: every refusal is a reason `explain`
prints.

The served model is the query's model with the dataset's source replaced by the rollup's
table, its stored fields read as plain columns, and its measures re-aggregated (SUM of sums
and of counts, MIN of minima, MAX of maxima). The planner then plans the same query on it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from dosi.ir.model import DatasetIr, MeasureIr, ModelIr
from dosi.ir.rollup import DERIVABLE_GRAINS, RollupIr
from dosi.plan.records import Branch, QueryPlan, TimeFilter
from dosi.query.resolve import ResolvedQuery

_BIGINT = exp.DataType.build("BIGINT")


@dataclass(frozen=True)
class AvailableRollups:
    """The rollups a compile may read: built, fresh, with the table each is stored in;
    `unusable` names the declared ones that may not be read now, and why (never built,
    stale since the data changed, built from another declaration)."""

    rollups: tuple[RollupIr, ...] = ()
    tables: Mapping[str, exp.Table] = field(default_factory=dict)
    unusable: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # name: (dataset, why)
    # the version of the store these were read from: a plan runs only on that version
    store_stamp: Any = None
    # stored rows per rollup: of several that qualify, the one with the fewest rows serves
    sizes: Mapping[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Part of the compiled-plan cache key: a plan depends on which rollups it may read."""
        usable = ",".join(sorted(f"{r.name}:{self.sizes.get(r.name, 0)}" for r in self.rollups))
        return f"{usable}|{','.join(sorted(self.unusable))}"


@dataclass(frozen=True)
class RollupMatch:
    model: ModelIr | None  # the served model (None: no branch reads a rollup)
    served: Mapping[str, RollupIr]  # dataset -> the rollup that serves its branches
    notes: tuple[str, ...]  # explain lines: what serves each branch and why others did not


def match_rollups(
    model: ModelIr, rq: ResolvedQuery, plan: QueryPlan, available: AvailableRollups
) -> RollupMatch:
    declared = [*available.rollups]
    if not declared and not available.unusable:
        return RollupMatch(None, {}, ())
    notes: list[str] = []
    blocker = _query_blocker(model, rq)
    joined = {s.relationship.to_dataset for b in plan.branches for s in b.joins}
    served: dict[str, RollupIr] = {}
    by_dataset: dict[str, list[Branch]] = {}
    for b in plan.branches:
        by_dataset.setdefault(b.dataset, []).append(b)
    for ds, branches in by_dataset.items():
        ids = ", ".join(b.id for b in branches)
        reasons: list[str] = []
        rank = _size_rank(available.sizes)
        for r in sorted((r for r in declared if r.dataset == ds), key=rank):
            why = blocker
            if why is None and ds in joined:
                why = f"another branch joins {ds} (the rollup holds aggregates, not its rows)"
            theirs = {
                s.relationship.to_dataset for b in plan.branches if b.dataset != ds for s in b.joins
            }
            for _, other, _ in r.joined:
                if why is None and other in theirs:
                    why = f"another branch joins {other}, which the rollup replaces"
            for b in branches:
                why = why or _why_not(model, rq, b, r)
            if why is None:
                served[ds] = r
                break
            reasons.append(f"{r.name}: {why}")
        reasons += [f"{n}: {why}" for n, (d, why) in available.unusable.items() if d == ds]
        if ds in served:
            notes.append(f"{ids} over {ds}: rollup {served[ds].name} ({served[ds].describe()})")
        else:
            notes.append(f"{ids} over {ds}: fact table")
        notes += [f"  not {r}" for r in reasons]
    if not served:
        return RollupMatch(None, {}, tuple(notes))
    return RollupMatch(_served_model(model, served, available.tables), served, tuple(notes))


def _size_rank(sizes: Mapping[str, int]) -> Any:
    """Smaller rollups first: fewer stored rows (each scanned row costs), then fewer
    dimensions and keys, then the coarser grain."""
    fine = ["hour", "day", "week", "month", "quarter", "year"]

    def rank(r: RollupIr) -> tuple[int, int, int]:
        grain = -fine.index(r.grain) if r.grain in fine else 0
        return (sizes.get(r.name, 0), len(r.dimensions) + len(r.keys), grain)

    return rank


def _query_blocker(model: ModelIr, rq: ResolvedQuery) -> str | None:
    if model.conformed is not None and rq.where is not None:
        return "where_sql on a D-CONFORM model (its spelling may differ per branch)"
    if rq.context is not None:
        return "the query has a context_filter (D-LOD context layer)"
    if rq.range_scans:
        return "the query has tagged time_ranges"
    if rq.where is not None and rq.where.metric_time:
        return "where_sql filters metric_time (bounds may split a rollup bucket)"
    if any(m.lod is not None for m in rq.metrics):
        return "a D-LOD metric reads the rows"
    if any(d.window is not None for d in rq.dims):
        return "a streaming window groups by row time"
    return None


def _why_not(model: ModelIr, rq: ResolvedQuery, b: Branch, r: RollupIr) -> str | None:
    wanted = {j[0] for j in r.joined}
    steps = {s.relationship.name for s in b.joins}
    if steps != wanted:  # the same joins as the build, so the same rows (fan-out included)
        if b.joins and not wanted:
            return f"branch {b.id} joins {b.joins[0].relationship.to_dataset}"
        return (
            f"the rollup's rows are joined through [{', '.join(sorted(wanted))}]; branch "
            f"{b.id} joins [{', '.join(sorted(steps)) or 'nothing'}]"
        )
    joined = {(d, f) for _, d, f in r.joined}
    if b.lod is not None or b.semi_additive is not None or b.conversion is not None:
        return f"branch {b.id} reads rows (D-LOD, D-SEMI or D-CONVERSION)"
    missing = [m for m in b.measures if m not in r.measures]
    if missing:
        return f"lacks measure {missing[0]}"
    time_field = f"{r.dataset}.{r.time}" if r.time else None
    for d in rq.dims:
        if d.field is None:  # metric_time: this branch's axis
            if b.axis is None or b.axis != time_field:
                return f"metric_time is {b.axis}, which the rollup does not bucket"
            why = _grain_ok(model, rq, r, d.grain)
        elif (d.field.dataset, d.field.name) in joined and d.grain is None:
            why = None
        elif d.field.dataset != r.dataset:
            return f"groups by {d.field.qualified}"
        elif d.field.name in r.dimensions:
            why = None
        elif d.field.name == r.time:
            why = _grain_ok(model, rq, r, d.grain)
        else:
            return f"lacks dimension {d.field.qualified}"
        if why is not None:
            return why
    if rq.where is not None:
        for f in rq.where.fields:
            if (f.dataset, f.name) in joined:
                continue
            if f.dataset != r.dataset or f.name not in r.dimensions:
                return f"filters on {f.qualified}, not a rollup dimension"
    if b.time_filters and time_field is None:
        return "the query has time bounds and the rollup no time field"
    for tf in b.time_filters:
        why = _bounds_ok(model, r, tf)
        if why is not None:
            return why
    return None


def _grain_ok(model: ModelIr, rq: ResolvedQuery, r: RollupIr, grain: str | None) -> str | None:
    assert r.grain is not None
    if grain is None or grain not in DERIVABLE_GRAINS[r.grain]:
        return f"grain {grain} is not derivable from the rollup's {r.grain}"
    if model.calendar.kind(grain) != "native":
        return f"grain {grain} is a calendar grain"
    if r.grain == "week" and rq.query.week_start is not None:
        return "the query's week_start is not the rollup's"
    return None


def _bounds_ok(model: ModelIr, r: RollupIr, tf: TimeFilter) -> str | None:
    assert r.time is not None and r.grain is not None
    if tf.time_format is not None:
        return "the time bound is on a D-FORMAT field"
    if tf.expr.sql() != model.datasets[r.dataset].fields[r.time].expr.sql():
        return f"a time bound is on {tf.expr.sql()}, not on {r.time}"
    for bound in (tf.start, tf.end):
        if bound is not None and not _aligned(bound, r.grain):
            return f"the time bound {bound.isoformat()} splits a {r.grain} bucket"
    return None


def aligned(v: dt.date | dt.datetime, grain: str) -> bool:
    """`v` starts a bucket of `grain` (a week never counts: its start is the calendar's)."""
    return _aligned(v, grain)


def _aligned(v: dt.date | dt.datetime, grain: str) -> bool:
    if isinstance(v, dt.datetime):
        if (v.minute, v.second, v.microsecond) != (0, 0, 0) or v.tzinfo is not None:
            return False
        if grain == "hour":
            return True
        if v.hour != 0:
            return False
        v = v.date()
    if grain in ("hour", "day"):
        return True
    if grain == "week":
        return False  # a week bound depends on the calendar's week start: the fact table
    if v.day != 1:
        return False
    if grain == "month":
        return True
    if grain == "quarter":
        return v.month in (1, 4, 7, 10)
    return v.month == 1


def _served_model(
    model: ModelIr, served: Mapping[str, RollupIr], tables: Mapping[str, exp.Table]
) -> ModelIr:
    datasets = dict(model.datasets)
    measures = dict(model.measures)
    for ds, r in served.items():
        datasets[ds] = _served_dataset(model.datasets[ds], r, tables[r.name])
        for _, other, fname in r.joined:  # read from the same rollup rows (self-join)
            o = datasets[other]
            fields = {
                **o.fields,
                fname: replace(o.fields[fname], expr=_stored(other, f"{other}__{fname}")),
            }
            datasets[other] = replace(o, source=tables[r.name].copy(), fields=fields)
        keys = dict(r.keys)
        for m in r.measures:
            measures[m] = _served_measure(model.measures[m], ds, keys.get(m))
    return replace(model, datasets=datasets, measures=measures)


def _stored(dataset: str, name: str) -> exp.Column:
    return exp.column(name, table=dataset, quoted=True)


def _served_dataset(ds: DatasetIr, r: RollupIr, table: exp.Table) -> DatasetIr:
    fields = dict(ds.fields)
    for name in (*r.dimensions, *((r.time,) if r.time else ())):
        fields[name] = replace(fields[name], expr=_stored(ds.name, name))
    return replace(ds, source=table.copy(), fields=fields)


def _served_measure(m: MeasureIr, dataset: str, key: str | None) -> MeasureIr:
    """The measure re-aggregated from its stored partials; a COUNT DISTINCT one counts the
    distinct stored keys (every key of every group is kept, so the count is exact)."""
    stored = _stored(dataset, key or m.name)
    expr: exp.Expression
    if key is not None and m.agg == "approx_count_distinct":
        expr = exp.ApproxDistinct(this=stored)
    elif key is not None:
        expr = exp.Count(this=exp.Distinct(expressions=[stored]))
    elif m.agg in ("count", "count_star"):  # a count stays an integer, 0 over no rows
        total = exp.Coalesce(this=exp.Sum(this=stored), expressions=[exp.Literal.number(0)])
        expr = exp.Cast(this=total, to=_BIGINT.copy())
    elif m.agg == "min":
        expr = exp.Min(this=stored)
    elif m.agg == "max":
        expr = exp.Max(this=stored)
    else:
        expr = exp.Sum(this=stored)
    return replace(m, expr=expr, datasets=frozenset({dataset}))
