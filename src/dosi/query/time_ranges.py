"""`time_ranges`: several tagged time ranges in one query, one `<metric>__<tag>` column each.

CORE-Q-11: each tag is a per-tag gate folded into every aggregate of the metric (conditional
aggregation: `SUM(CASE WHEN <gate> THEN x END)`, `COUNT(*)` -> `COUNT(CASE WHEN <gate> THEN 1
END)`, `COUNT(DISTINCT CASE ...)`), and the gates are OR-ed into the scan predicate of each branch
(`ResolvedQuery.range_scans`, read by the planner) so rows in no range are never read. Like `time_range` it is a context filter. The gated measures and the
tagged metrics are IR added to a copy of the model, so the planner plans them as any measure:
one scan, one aggregate, no renderer special case.

Restrictions (as the reference engine has them): not combinable with `time_range`
(`unsupported_filter`, checked in `dosi.query.spec`); window metrics are `not_implemented`;
the tags gate one column per metric: their shared `dimension`, else each metric's own axis, so
two fact datasets are each gated on their own date and the OR filters each branch's scan
(`time_range_needs_dimension` when tags name different dimensions); a metric is spread over
one column per tag, so a where_sql or order_by naming it is rejected (`unsupported_filter` /
`unknown_order_key`; the reference orders by a weight column instead).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.lod_field import model_lod_info
from dosi.ir.model import FieldIr, MeasureIr, MetricIr, ModelIr
from dosi.query.params import Expansion, OutputColumn
from dosi.query.resolve import ResolvedQuery, find_field, grouped_time_field, resolve_where
from dosi.query.spec import Query

When = dt.date | dt.datetime
# (time field, start, end) -> the predicates a range filter on it renders to (the dialect's)
RangePredicates = Callable[[FieldIr, When | None, When | None], list[exp.Expression]]


@dataclass(frozen=True)
class RangeScan:
    """Per gated measure, the OR of every tag's gate on its time field: the scan predicate of
    the branch that computes it (each fact dataset on its own axis, so a compose over two
    facts gates each member on its own date)."""

    by_measure: dict[str, tuple[exp.Expression, FieldIr]]


def expand_time_ranges(
    expanded: Expansion, predicates: RangePredicates
) -> tuple[Expansion, RangeScan | None]:
    query = expanded.query
    if not query.time_ranges:
        return expanded, None
    model = expanded.model
    metrics = [_metric(model, name) for name in query.metrics]
    _refuse_lod(model, query, metrics)
    fields = _gate_fields(model, query, metrics)
    new_metrics: dict[str, MetricIr] = {}
    new_measures: dict[str, MeasureIr] = {}
    by_measure: dict[str, tuple[exp.Expression, FieldIr]] = {}
    columns: list[OutputColumn] = []
    by_column = {c.column: c for c in expanded.outputs}
    gate_cache: dict[str, tuple[dict[str, exp.Expression], exp.Expression]] = {}

    def gates_on(field: FieldIr) -> tuple[dict[str, exp.Expression], exp.Expression]:
        got = gate_cache.get(field.qualified)
        if got is None:
            gates = {r.tag: _and(predicates(field, r.start, r.end)) for r in query.time_ranges}
            scan = exp.or_(*(exp.paren(g.copy(), copy=False) for g in gates.values()))
            got = gate_cache[field.qualified] = (gates, scan)
        return got

    for m in metrics:
        shared = fields.get(m.name)
        for tag in (r.tag for r in query.time_ranges):
            name = f"{m.name}__{tag}"
            renames = {}
            for meas_name in m.measures:
                base = model.measures[meas_name]
                # D-TIME: a member on another fact is gated on its own dataset's axis
                field = shared if shared is not None else _measure_axis(model, m, base)
                gates, scan = gates_on(field)
                gate = gates[tag]
                gated = f"{meas_name}__{tag}"
                signature = f"{base.signature}|range:{tag}@{field.qualified}"
                if gated in new_measures and new_measures[gated].signature != signature:
                    gated = f"{meas_name}__{tag}__{m.name}"  # one measure, two time axes
                renames[meas_name] = gated
                if gated not in new_measures:
                    new_measures[gated] = replace(
                        base,
                        name=gated,
                        expr=gate_aggregate(base.expr, gate),
                        signature=signature,
                        datasets=base.datasets | {field.dataset},
                    )
                by_measure[gated] = (scan, field)
            new_metrics[name] = replace(
                m,
                name=name,
                formula=_rename(m.formula, renames),
                measures=tuple(renames[x] for x in m.measures),
            )
            src = by_column.get(m.name, OutputColumn(m.name, m.name))
            columns.append(replace(src, column=name))
    tags = [r.tag for r in query.time_ranges]
    for name in (*new_metrics, *new_measures):
        if name in model.metrics or name in model.measures:
            raise QueryError(
                "duplicate_output_name",
                f"the tagged column `{name}` has the name of a model metric or measure",
                hint="pick another tag",
            )
    for o in query.order_by:
        if o.key in query.metrics:
            raise QueryError(
                "unknown_order_key",
                f"order_by key `{o.key}` names a metric that has one column per time range",
                candidates=[f"{o.key}__{t}" for t in tags],
                hint="order by a group_by item, or query one time range with time_range",
            )
    new_model = replace(
        model,
        metrics={**model.metrics, **new_metrics},
        measures={**model.measures, **new_measures},
    )
    new_query = replace(query, metrics=tuple(new_metrics), time_ranges=())
    return Expansion(new_model, new_query, tuple(columns)), RangeScan(by_measure)


def restrict_to_ranges(rq: ResolvedQuery, scan: RangeScan) -> ResolvedQuery:
    """AND the OR of the gates into the resolved row filter (the scan predicate); a where_sql
    condition on a metric cannot say which tag's column it means."""
    if rq.result_filter is not None:
        names = [m.name for m in rq.result_filter.metrics]
        raise QueryError(
            "unsupported_filter",
            f'metric "{names[0]}" has one column per time range; a where_sql condition on it '
            "cannot name the range it filters",
            metrics=names,
            hint="filter on dataset fields, or query one range with time_range",
        )
    return replace(rq, range_scans=dict(scan.by_measure))


def _metric(model: ModelIr, name: str) -> MetricIr:
    m = model.metrics.get(name)
    if m is None:  # resolve_query reports it with candidates
        raise QueryError("unknown_metric", f"unknown metric `{name}`", metrics=[name])
    if m.window is not None:
        raise QueryError(
            "not_implemented",
            f'metric "{name}" is a window metric; multi-range (time_ranges) queries support '
            "plain metrics only",
            metrics=[name],
            hint="query each window separately via time_range",
        )
    return m


def _refuse_lod(model: ModelIr, query: Query, metrics: list[MetricIr]) -> None:
    """LOD-NI-06/08/09: a D-LOD metric (include / exclude / fixed, or a compose over one) or a
    query reading a D-LOD field has no tagged form (each tag would need its own rollup or
    side stage), decided here, before the tags are folded into the measures."""
    lods = [m.name for m in metrics if m.lod is not None]
    if lods:
        raise QueryError(
            "not_implemented",
            f"level-of-detail metric `{lods[0]}` under time_ranges: each tagged range would "
            "need its own inner grouping or side branch, and a LOD stage reads one (D-LOD "
            "not-yet table)",
            metrics=lods,
            hint="query one range at a time with time_range",
        )
    info = model_lod_info(model)
    if info is None:
        return
    read = [m.name for m in metrics if any(x in info.measures for x in m.measures)]
    fields = [
        f.qualified
        for g in query.group_by
        if g.field != "metric_time"
        for f in (find_field(model, query, g.field),)
        if f.qualified in info.fields
    ]
    if query.where_sql:
        try:
            where = resolve_where(model, query.where_sql)
        except QueryError:
            where = None  # resolve_query reports it (a metric condition, a typo, ...)
        if where is not None:
            fields += [f.qualified for f in where.fields if f.qualified in info.fields]
    if read or fields:
        what = (
            f"metric `{read[0]}` reads a D-LOD field" if read else f"`{fields[0]}` is a D-LOD field"
        )
        raise QueryError(
            "not_implemented",
            f"multi-range (time_ranges) queries support plain metrics only; {what} (its "
            "rollup and the tagged aggregates are different stage stacks)",
            metrics=read,
            hint="query each range with time_range instead",
        )


def _gate_fields(model: ModelIr, query: Query, metrics: list[MetricIr]) -> dict[str, FieldIr]:
    """metric -> the time column its tags gate: the ranges' one `dimension`, else the one time
    field the query groups by (CORE-Q-07, as time_range); a metric missing from the result is
    gated per measure on its own axis (each fact dataset on its own time axis);
    time_range_needs_dimension when the tags name different dimensions."""
    dims = {r.dimension for r in query.time_ranges}
    if len(dims) > 1:
        raise QueryError(
            "time_range_needs_dimension",
            "all tagged time ranges must target the same dimension",
            hint="set the same `dimension` (or none) on every tagged range",
        )
    dim = dims.pop()
    if dim is not None and dim != "metric_time":
        ds, _, fname = dim.partition(".")
        f = model.datasets.get(ds).fields.get(fname) if ds in model.datasets else None
        if f is None or not f.is_time:
            times = [
                x.qualified for d in model.datasets.values() for x in d.fields.values() if x.is_time
            ]
            raise QueryError(
                "time_range_needs_dimension",
                f"time_ranges dimension `{dim}` is not a time field of the model",
                candidates=times,
                hint='name a time field as "dataset.field"',
            )
        return {m.name: f for m in metrics}
    grouped = grouped_time_field(model, query) if dim is None else None
    if grouped is not None:
        return {m.name: grouped for m in metrics}
    for m in metrics:  # every member must have an axis: refused before any gating
        for name in m.measures:
            _measure_axis(model, m, model.measures[name])
    return {}


def _measure_axis(model: ModelIr, m: MetricIr, measure: MeasureIr) -> FieldIr:
    """The metric's D-TIME axis, else the measure's dataset primary time, else the first
    member's with one (a COUNT of a dimension table reads its fact's axis)."""
    if m.time_axis is not None:
        return model.field(m.time_axis)
    own = model.datasets[measure.dataset]
    if own.primary_time is not None:
        return own.fields[own.primary_time]
    for name in m.measures:
        ds = model.datasets[model.measures[name].dataset]
        if ds.primary_time is not None:
            return ds.fields[ds.primary_time]
    times = [x.qualified for d in model.datasets.values() for x in d.fields.values() if x.is_time]
    raise QueryError(
        "no_primary_time_dimension",
        f"metric `{m.name}` has no primary time dimension, so a tagged range without "
        "`dimension` has no column to gate",
        metrics=[m.name],
        candidates=times,
        hint='name the time field: {"tag": ..., "dimension": "dataset.field", ...}',
    )


def gate_aggregate(agg: exp.Expression, gate: exp.Expression) -> exp.Expression:
    """The aggregate with its argument under `CASE WHEN gate THEN arg END` (a COUNT(*) counts
    THEN 1): rows outside the range reach the aggregate as NULL, which every aggregate skips."""
    out = agg.copy()
    call = out if isinstance(out, exp.AggFunc) else out.find(exp.AggFunc)
    if call is None:  # pragma: no cover - a measure is an aggregate call
        raise AssertionError(f"measure `{agg.sql()}` has no aggregate")
    arg = call.this
    if isinstance(arg, exp.Distinct):
        arg.set("expressions", [_case(gate, e) for e in arg.expressions])
    elif isinstance(arg, exp.Star) or arg is None:
        call.set("this", _case(gate, exp.Literal.number(1)))
    else:
        call.set("this", _case(gate, arg))
    return out


def _case(gate: exp.Expression, value: exp.Expression) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=gate.copy(), true=value)])


def _rename(formula: exp.Expression, renames: dict[str, str]) -> exp.Expression:
    def repl(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name in renames:
            return exp.column(renames[n.name])
        return n

    return formula.copy().transform(repl, copy=False)


def _and(parts: list[exp.Expression]) -> exp.Expression:
    if not parts:
        return exp.true()
    return exp.and_(*parts, copy=False) if len(parts) > 1 else parts[0]
