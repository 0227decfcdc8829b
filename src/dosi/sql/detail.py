"""Detail rows (`select`) -> one flat SELECT: `from` joined many-to-one, no GROUP BY.

The join path of each projected or filtered dataset comes from the same relationship graph as
the metric plane; a dataset on the many side of `from` would repeat `from` rows, so it is
`detail_fanout` (the reference engine's code) with the finer `from` as the retry.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.errors import QueryError
from dosi.ir.model import ModelIr, RelationshipIr
from dosi.plan.joins import JoinGraph, join_order
from dosi.plan.lod_field import detail_lod_shape
from dosi.plan.records import LodShape, TimeFilter
from dosi.plan.time_format import branch_dim, time_filter
from dosi.plan.validity import version_time
from dosi.query.detail import ResolvedDetail
from dosi.query.time_format import check_bounds
from dosi.sql.dialects import Dialect
from dosi.sql.lod_field import join_rollups, values_rewrite
from dosi.sql.metric_time_filter import render_metric_time
from dosi.sql.render import Renderer
from dosi.sql.util import and_all, col
from dosi.sql.validity import join_condition


def detail_joins(model: ModelIr, graph: JoinGraph, rd: ResolvedDetail) -> list[RelationshipIr]:
    src = rd.query.dataset
    needed: list[str] = []
    for f in rd.fields:
        needed.append(f.field.dataset)
    for w in rd.where:
        needed.extend(f.dataset for f in w.fields)
    if rd.time_field is not None:
        needed.append(rd.time_field.dataset)
    paths = []
    for target in dict.fromkeys(needed):
        try:
            paths.append(graph.path(src, target, f"detail rows of `{src}`"))
        except QueryError as err:
            if err.code != "fan_out_risk":
                raise
            raise QueryError(
                "detail_fanout",
                f"dataset `{target}` is on the many side of `{src}`: one `{src}` row would "
                "expand into several output rows",
                candidates=[target],
                hint=f'query at the finer grain instead: "from": "{target}", and project the '
                f"`{src}` fields you need",
            ) from None
    return join_order(paths)


def render_detail(
    model: ModelIr, graph: JoinGraph, rd: ResolvedDetail, dialect: Dialect, limit: int | None
) -> exp.Select:
    r = Renderer(model, dialect)
    ds = model.datasets[rd.query.dataset]
    shape = _lod_shape(model, graph, rd)  # D-LOD fixed fields broadcast to the rows
    rw = values_rewrite(shape) if shape is not None else (lambda e: e)
    cols = []
    for f in rd.fields:
        e = rw(f.field.expr.copy())
        if f.field.encoded:  # D-FORMAT: a detail row shows the decoded date (CORE-Q-17)
            e = r.decoded(branch_dim(f.output, f.field, f.grain), e)
        elif f.grain is not None:
            e = r.bucket(e, f.grain, None)
        cols.append(exp.alias_(e, ident(f.output)))
    sel = exp.select(*cols)
    if rd.query.distinct:
        sel = sel.distinct()
    sel = sel.from_(exp.alias_(ds.source.copy(), ident(ds.name), table=True), copy=False)
    rels = detail_joins(model, graph, rd)
    at = version_time(model, ds.name, None, rels)  # D-VALIDITY: the row's version
    for rel in rels:
        target = model.datasets[rel.to_dataset]
        on = join_condition(model, rel, at)
        sel = sel.join(
            exp.alias_(target.source.copy(), ident(target.name), table=True),
            on=on,
            join_type=rel.join_type.upper(),
            copy=False,
        )
    if shape is not None:
        sel = join_rollups(r, sel, shape)
    # a grained field in the filter (`orders.order_date:month`) compares the bucket
    preds = [render_metric_time(rw(w.expr.copy()), dialect, r.bucket) for w in rd.where]
    if rd.time_field is not None and rd.query.time_range is not None:
        tr = rd.query.time_range
        check_bounds(rd.time_field, tr)  # D-FORMAT: aligned dates on an encoded field
        preds.extend(r.time_predicates(time_filter(rd.time_field, tr.start, tr.end)))
    where = and_all(preds)
    if where is not None:
        sel = sel.where(where, copy=False)
    keys = []
    for key, desc, nulls in rd.order:
        keys.extend(dialect.ordered(col(key), desc, nulls or "last"))
    if keys:
        sel = sel.order_by(*keys, copy=False)
    if limit is not None:
        sel = sel.limit(limit, copy=False)
    return sel


def _time_filter(rd: ResolvedDetail) -> TimeFilter | None:
    tr = rd.query.time_range
    if rd.time_field is None or tr is None:
        return None
    return time_filter(rd.time_field, tr.start, tr.end)


def _lod_shape(model: ModelIr, graph: JoinGraph, rd: ResolvedDetail) -> LodShape | None:
    exprs = [f.field.expr for f in rd.fields] + [w.expr for w in rd.where]
    tf = _time_filter(rd)
    context = None
    if rd.query.context_filter is not None and rd.where:
        context = rd.where[-1].expr  # parse_detail appends context_filter last
    return detail_lod_shape(model, graph, rd.query.dataset, exprs, (tf,) if tf else (), context)


def explain_detail(model: ModelIr, graph: JoinGraph, rd: ResolvedDetail) -> str:
    """The detail plan as an indented tree (no Aggregate node: there is no rollup stage)."""
    q = rd.query
    lines = [f"OrderLimit[order={[k for k, _, _ in rd.order]} limit={q.limit}]"]
    lines.append("  Project[" + ", ".join(f.output for f in rd.fields) + "]")
    depth = 2
    if rd.where or rd.time_field is not None:
        lines.append("    Filter")
        depth = 3
    shape = _lod_shape(model, graph, rd)
    if shape is not None:  # D-LOD: each row joined to its key's rollup row
        for spec in shape.rollups:
            lines.append("  " * depth + f"LodBroadcast[{spec.describe()}]")
            depth += 1
    for rel in reversed(detail_joins(model, graph, rd)):
        lines.append("  " * depth + f"JoinRelated[{rel.name} -> {rel.to_dataset}, {rel.join_type}]")
        depth += 1
    lines.append("  " * depth + f"ReadDataset[{q.dataset}]")
    return "\n".join(lines) + "\n"
