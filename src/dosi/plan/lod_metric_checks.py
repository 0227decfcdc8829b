"""The D-LOD metric rules a query must pass before it is planned (datus-extensions §3
D-LOD "not yet"; CHECKLIST LOD-NI-*, LOD-FXM-06): each a structured error naming what would
lift it. Codes follow the reference engine where the spec's table is coarser: a fixed key or
an excluded dimension the view does not carry is `lod_dimension_not_grouped`.
"""

from __future__ import annotations

from collections.abc import Callable

from dosi.errors import QueryError
from dosi.ir.conform import reachable_fields, same_dimension
from dosi.ir.lod_field import lod_refs
from dosi.ir.model import MetricIr, ModelIr
from dosi.query.resolve import ResolvedDim, ResolvedQuery

NOT_GROUPED = "lod_dimension_not_grouped"


def lod_field_read(model: ModelIr, rq: ResolvedQuery, plain: list[MetricIr]) -> str | None:
    """The first D-LOD field the query reads: a group-by item, a row filter, or a plain
    metric's measure (all carry the field's placeholder column, dosi.ir.lod_field)."""
    exprs = [d.field.expr for d in rq.dims if d.field is not None]
    if rq.where is not None:
        exprs.append(rq.where.expr)
    exprs.extend(model.measures[n].expr for m in plain for n in m.measures)
    for e in exprs:
        refs = lod_refs(e)
        if refs:
            return refs[0]
    return None


def check_common(
    model: ModelIr, rq: ResolvedQuery, lods: list[MetricIr], plain: list[MetricIr]
) -> None:
    kinds = {m.lod.kind for m in lods if m.lod is not None}
    names = [m.name for m in lods]
    windowed = [m.name for m in [*lods, *plain] if m.window is not None]
    if windowed:
        raise QueryError(
            "not_implemented",
            f"window metric `{windowed[0]}` beside level-of-detail metric `{names[0]}`: "
            + (
                "the outer stage reads only the finer include grouping, with no time series "
                "left for a window"
                if "include" in kinds
                else "the attachment reads one aggregate at the view grain, not the window "
                "stage's series"
            )
            + " (D-LOD not-yet table)",
            metrics=[windowed[0], names[0]],
            hint="query the window metric and the level-of-detail metric separately",
        )
    field = lod_field_read(model, rq, plain)
    if field is not None:  # LOD-NI-04 / LOD-NI-10
        raise QueryError(
            "not_implemented",
            f"metric `{names[0]}` is a level-of-detail derivation and this query also reads "
            f"the D-LOD field `{field}`: the field's rollup and the metric's grain relative "
            "to the view would have to nest (D-LOD not-yet table)",
            metrics=[names[0]],
            hint=f"query `{names[0]}` without `{field}`, or the field's metrics separately",
        )
    if any(d.window is not None for d in rq.dims):
        raise QueryError(
            "not_implemented",
            f"level-of-detail metric `{names[0]}` grouped by a streaming window: the window "
            "buckets are not a grouping a level of detail is relative to",
            metrics=[names[0]],
            hint="group by metric_time with a grain instead",
        )
    if "include" in kinds and len(kinds) > 1:
        inc = next(m.name for m in lods if m.lod is not None and m.lod.kind == "include")
        other = next(m for m in lods if m.lod is not None and m.lod.kind != "include")
        assert other.lod is not None
        raise QueryError(
            "not_implemented",
            f"metric `{inc}` includes a level of detail and `{other.name}` is "
            f"{other.lod.kind}: they pull the view's grouping in opposite directions (an "
            "include stage reads only its finer grouping)",
            metrics=[inc, other.name],
            hint="query them separately",
        )


def view_dim_for(model: ModelIr, rq: ResolvedQuery, key: str) -> ResolvedDim | None:
    """The view dim a fixed key (or an include dim) is: a field grouped without a grain,
    that field or a conformed spelling of it (D-CONFORM: one dimension, two facts)."""
    for d in rq.dims:
        if d.field is None or d.grain is not None or d.window is not None:
            continue
        if same_dimension(model, key, d.field.qualified):
            return d
    return None


def excluded_dims(model: ModelIr, rq: ResolvedQuery, m: MetricIr) -> list[ResolvedDim]:
    """The view dims an exclude metric keeps: a dim is excluded whatever its grain, and
    metric_time when it is the base's axis; no dims: every view dim is -- the grand total
    (LOD-REL-08). A dim the view does not carry is lod_dimension_not_grouped."""
    lod = m.lod
    assert lod is not None
    axis = _axis(model, model.metrics[lod.base])
    hit = {q: [d for d in rq.dims if _same(model, _names(d, axis), q)] for q in lod.dims}
    for q, ds in hit.items():
        if not ds:
            raise not_grouped(m, q, rq)
    dropped = {id(d) for ds in hit.values() for d in ds}
    return [d for d in rq.dims if lod.dims and id(d) not in dropped]


def _axis(model: ModelIr, base: MetricIr) -> str | None:
    """The field metric_time means for the base: its D-TIME axis, else its dataset's."""
    if base.time_axis is not None:
        return base.time_axis
    ds = next(iter(base.datasets), None)
    own = model.datasets[ds].primary_time if ds is not None else None
    return f"{ds}.{own}" if own is not None else None


def _same(model: ModelIr, name: str | None, key: str) -> bool:
    return name is not None and same_dimension(model, name, key)


def _names(d: ResolvedDim, axis: str | None) -> str | None:
    """The field a view dim groups by, at any grain (metric_time: the base's axis)."""
    if d.window is not None:
        return None
    return d.field.qualified if d.field is not None else axis


def not_grouped(m: MetricIr, key: str, rq: ResolvedQuery) -> QueryError:
    lod = m.lod
    assert lod is not None
    by = [*(d.spelling for d in rq.dims)]
    retry = {"metrics": list(rq.query.metrics), "group_by": [*by, key]}
    if lod.kind == "exclude":
        return QueryError(
            NOT_GROUPED,
            f"metric `{m.name}` excludes `{key}`, which the query does not group by: "
            "excluding a dimension the view does not carry removes nothing",
            metrics=[m.name],
            candidates=[key],
            hint=f"group by `{key}` (without a grain), or query the base `{lod.base}`",
            suggested_retry=retry,
        )
    return QueryError(
        NOT_GROUPED,
        f"metric `{m.name}` is fixed by `{key}`, which the query does not group by (without "
        "a grain): a fixed value attaches to a view row only when each of its keys is a view "
        "dimension; re-aggregating FIXED values across keys is the field carrier's shape",
        metrics=[m.name],
        candidates=[key],
        hint=f"group by `{key}`, or declare a fixed field (lod on a field of the dataset) and "
        "aggregate it with an ordinary metric",
        suggested_retry=retry,
    )


def check_lod_compose_conformed(
    model: ModelIr, rq: ResolvedQuery, reach: Callable[[str, str], bool]
) -> None:
    """DRV-CMP-06 for a compose over D-LOD members (LOD-REL-10): a group-by field some member
    cannot reach many-to-one (nor through a conformed spelling) is `unconformed_dimension`
    naming those members, before the D-LOD shape rules and the join paths (the reference
    engine's order; a D-DERIVE compose is checked in dosi.query.derive)."""
    for m in rq.planned_metrics:
        if m.lod is None or m.lod.kind != "compose":
            continue
        for dim in rq.dims:
            f = dim.field
            if f is None:
                continue
            missing = [
                name
                for name in m.lod.members
                if not any(
                    f.qualified in reachable_fields(model, reach, d)
                    for d in model.metrics[name].datasets
                )
            ]
            if missing:
                raise QueryError(
                    "unconformed_dimension",
                    f'dimension "{f.qualified}" is not conformed for derived metric "{m.name}": '
                    f"member(s) {', '.join(missing)} have no many-to-one path to `{f.dataset}`",
                    metrics=[m.name],
                    hint="group by a dimension every member reaches, or query the members "
                    "separately",
                )
