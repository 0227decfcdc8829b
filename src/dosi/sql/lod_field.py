"""SQL of a branch that reads D-LOD fixed fields (plan/lod_field.py chose the shape; datus-extensions
§3 D-LOD). Each rollup is a derived table

    SELECT <key exprs> AS <key names>, <aggregate> AS <field> FROM <dataset> [context joins]
    WHERE <context> GROUP BY <key exprs>

keys projected as stored (no grain truncation, no D-FORMAT parsing: the view buckets them
outside, once). Shapes:

* rollup: `SELECT dims, measures FROM (rollup) AS f WHERE <dimension filters> GROUP BY dims`,
  every key and fixed value read from `f`;
* detail: the fact's rows LEFT JOINed to each rollup on its keys, NULL-safely (a keyless rollup
  is CROSS JOINed: one row); fixed values read from the rollup aliases;
* grid: that join reduced to one row per (view dims x the aggregated family's keys) first, then
  aggregated, so a pinned value counts once per key per group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.ir.lod_field import lod_tag
from dosi.plan.lod_field import key_rewrite
from dosi.plan.records import Branch, BranchDim, LodRollupSpec, LodShape, TimeFilter
from dosi.sql.util import and_all, clone, join

if TYPE_CHECKING:
    from dosi.ir.model import ModelIr
    from dosi.sql.dialects import Dialect

Lookup = Callable[[str], exp.Expression]
Build = Callable[[Lookup], exp.Expression]

GRID = "g"


class Renderer(Protocol):
    """What the LOD shapes use of `dosi.sql.render.Renderer`."""

    model: ModelIr
    dialect: Dialect

    def dim_expr(self, d: BranchDim) -> exp.Expression: ...
    def group_expr(self, d: BranchDim, selected: exp.Expression) -> exp.Expression: ...
    def from_clause(self, branch: Branch, select: exp.Select) -> exp.Select: ...
    def time_predicates(self, tf: TimeFilter) -> list[exp.Expression]: ...


def lod_grouped(r: Renderer, b: Branch, columns: Sequence[tuple[str, Build]]) -> exp.Select:
    """SELECT dims, `columns` for a branch with an LOD shape (builders as in
    `Renderer.grouped`: each makes its value from a measure lookup)."""
    shape = b.lod
    assert shape is not None
    if shape.mode == "rollup":
        return _two_stage(r, b, shape, columns)
    if shape.mode == "grid":
        return _grid(r, b, shape, columns)
    return _detail(r, b, shape, columns)


def rollup_select(r: Renderer, spec: LodRollupSpec) -> exp.Select:
    """The derived table of one key family over the context layer's rows."""
    sel = exp.Select()
    for name, e in spec.keys:
        sel = sel.select(exp.alias_(clone(e), ident(name), copy=False), copy=False)
    for name, e in spec.values:
        sel = sel.select(exp.alias_(clone(e), ident(name), copy=False), copy=False)
    src = Branch(
        id=spec.alias,
        dataset=spec.dataset,
        axis=None,
        joins=spec.joins,
        dims=(),
        measures=(),
        filters=spec.filters,
        time_filters=spec.time_filters,
    )
    sel = r.from_clause(src, sel)
    if spec.keys:
        sel = sel.group_by(*(clone(e) for _, e in spec.keys), copy=False)
    return sel


def _derived(r: Renderer, spec: LodRollupSpec) -> exp.Expression:
    return exp.alias_(
        exp.Subquery(this=rollup_select(r, spec)), ident(spec.alias), table=True, copy=False
    )


def _two_stage(
    r: Renderer, b: Branch, shape: LodShape, columns: Sequence[tuple[str, Build]]
) -> exp.Select:
    (spec,) = shape.rollups
    sel = exp.Select()
    groups = []
    for d in b.dims:
        dd = replace(d, expr=key_rewrite(clone(d.expr), spec))  # keys read raw from the rollup
        e = r.dim_expr(dd)  # bucketed / D-FORMAT-decoded once, outside the rollup
        sel = sel.select(exp.alias_(e, ident(d.output), copy=False), copy=False)
        groups.append(r.group_expr(dd, e))
    for name, build in columns:
        value = build(lambda n: key_rewrite(clone(r.model.measures[n].expr), spec))
        sel = sel.select(exp.alias_(value, ident(name), copy=False), copy=False)
    sel = sel.from_(_derived(r, spec), copy=False)
    where = and_all([key_rewrite(clone(f), spec) for f in b.filters])
    if where is not None:
        sel = sel.where(where, copy=False)
    if groups:
        sel = sel.group_by(*groups, copy=False)
    return sel


def _values_rewrite(shape: LodShape) -> Callable[[exp.Expression], exp.Expression]:
    """Fixed-field placeholders -> the column of the rollup that computes them."""
    where = {q: (spec.alias, q.split(".", 1)[1]) for spec in shape.rollups for q in spec.fields}

    def rw(e: exp.Expression) -> exp.Expression:
        def repl(n: exp.Expression) -> exp.Expression:
            tag = lod_tag(n) if isinstance(n, exp.Column) else None
            if tag is not None:
                alias, name = where[tag]
                return exp.Column(this=ident(name), table=exp.to_identifier(alias))
            return n

        return e.transform(repl, copy=False)

    return rw


def values_rewrite(shape: LodShape) -> Callable[[exp.Expression], exp.Expression]:
    return _values_rewrite(shape)


def join_rollups(r: Renderer, sel: exp.Select, shape: LodShape) -> exp.Select:
    """Each rollup joined to the rows in scope on its keys, NULL-safely (keyless: CROSS)."""
    for spec in shape.rollups:
        if not spec.keys:
            sel = join(sel, _derived(r, spec), "CROSS")
            continue
        on = and_all(
            [
                exp.NullSafeEQ(
                    this=clone(e), expression=exp.Column(this=ident(k), table=ident(spec.alias))
                )
                for k, e in spec.keys
            ]
        )
        sel = join(sel, _derived(r, spec), "LEFT", on)
    return sel


def _broadcast_from(r: Renderer, b: Branch, shape: LodShape, sel: exp.Select) -> exp.Select:
    """FROM the fact and its joins, each rollup joined on its keys, the filters after them."""
    rw = _values_rewrite(shape)
    sel = r.from_clause(replace(b, filters=(), time_filters=()), sel)
    sel = join_rollups(r, sel, shape)
    preds = [rw(clone(f)) for f in b.filters]
    for tf in b.time_filters:
        preds.extend(r.time_predicates(tf))
    where = and_all(preds)
    if where is not None:
        sel = sel.where(where, copy=False)
    return sel


def _detail(
    r: Renderer, b: Branch, shape: LodShape, columns: Sequence[tuple[str, Build]]
) -> exp.Select:
    rw = _values_rewrite(shape)
    sel = exp.Select()
    groups = []
    for d in b.dims:
        dd = replace(d, expr=rw(clone(d.expr)))
        e = r.dim_expr(dd)
        sel = sel.select(exp.alias_(e, ident(d.output), copy=False), copy=False)
        groups.append(r.group_expr(dd, e))
    for name, build in columns:
        value = build(lambda n: rw(clone(r.model.measures[n].expr)))
        sel = sel.select(exp.alias_(value, ident(name), copy=False), copy=False)
    sel = _broadcast_from(r, b, shape, sel)
    if groups:
        sel = sel.group_by(*groups, copy=False)
    return sel


def _grid(
    r: Renderer, b: Branch, shape: LodShape, columns: Sequence[tuple[str, Build]]
) -> exp.Select:
    """One row per (view dims x the aggregated family's keys), its fixed values beside it;
    the measures aggregate those rows (LOD-PLAN-06/07)."""
    rw = _values_rewrite(shape)
    spec = next(s for s in shape.rollups if s.alias == shape.grid_family)
    inner = exp.Select()
    groups: list[exp.Expression] = []
    for d in b.dims:
        dd = replace(d, expr=rw(clone(d.expr)))
        e = r.dim_expr(dd)
        inner = inner.select(exp.alias_(e, ident(d.output), copy=False), copy=False)
        groups.append(r.group_expr(dd, e))
    grid_cols: dict[str, str] = {}  # qualified fixed field -> grid column
    for i, (_, k_expr) in enumerate(spec.keys):
        key = clone(k_expr)  # the detail row's own key (never NULLed by an unmatched join)
        name = f"lod_key_{i}"
        inner = inner.select(exp.alias_(key, ident(name), copy=False), copy=False)
        groups.append(clone(key))
    for q in spec.fields:
        fname = q.split(".", 1)[1]
        v = exp.Column(this=ident(fname), table=ident(spec.alias))
        name = f"lod_value_{len(grid_cols)}"
        grid_cols[q] = name
        inner = inner.select(exp.alias_(v, ident(name), copy=False), copy=False)
        groups.append(clone(v))
    inner = _broadcast_from(r, b, shape, inner)
    inner = inner.group_by(*groups, copy=False)

    def on_grid(e: exp.Expression) -> exp.Expression:
        def repl(n: exp.Expression) -> exp.Expression:
            tag = lod_tag(n) if isinstance(n, exp.Column) else None
            if tag is not None:
                return exp.Column(this=ident(grid_cols[tag]), table=exp.to_identifier(GRID))
            return n

        return e.transform(repl, copy=False)

    outer = exp.Select()
    outer_groups = []
    for d in b.dims:
        c = exp.Column(this=ident(d.output), table=exp.to_identifier(GRID))
        outer = outer.select(exp.alias_(c, ident(d.output), copy=False), copy=False)
        outer_groups.append(clone(c))
    for name, build in columns:
        value = build(lambda n: on_grid(clone(r.model.measures[n].expr)))
        outer = outer.select(exp.alias_(value, ident(name), copy=False), copy=False)
    outer = outer.from_(
        exp.alias_(exp.Subquery(this=inner), exp.to_identifier(GRID), table=True, copy=False),
        copy=False,
    )
    if outer_groups:
        outer = outer.group_by(*outer_groups, copy=False)
    return outer
