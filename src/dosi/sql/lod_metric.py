"""SQL for the D-LOD metric stages (plan/nodes/lod_include.py, plan/nodes/lod_attach.py).

Every sub-plan (view, sides, include rows) renders to its own SELECT, possibly with CTEs (a
merge); those CTEs are lifted to the statement with a per-stage prefix, so the statement has
one flat WITH list whatever the dialect allows inside a subquery.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.plan.nodes import LodAttach, LodInclude
from dosi.sql.render import Renderer
from dosi.sql.util import and_all, clone, col, join, number, table

VIEW = "lod_view"
INNER = "lod_rows"

_AGGS: dict[str, type[exp.Expression]] = {
    "sum": exp.Sum,
    "avg": exp.Avg,
    "min": exp.Min,
    "max": exp.Max,
    "count": exp.Count,
}


def lift_prefixed(sel: exp.Select, prefix: str) -> list[tuple[str, exp.Select]]:
    """Take `sel`'s CTEs off it, renamed `<prefix>_<name>` everywhere they are read."""
    ctes = sel.args.get("with_")
    sel.set("with_", None)
    if ctes is None:
        return []
    pairs = [(c.alias, c.this) for c in ctes.expressions]
    names = {n: f"{prefix}_{n}" for n, _ in pairs}

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Table) and not node.args.get("db") and node.name in names:
            alias = node.alias
            out = table(names[node.name])
            if alias:
                out.set("alias", exp.TableAlias(this=ident(alias)))
            return out
        if isinstance(node, exp.Column) and node.table in names and not node.args.get("db"):
            return col(node.name, names[node.table])
        return node

    out = [(names[n], body.transform(rename, copy=False)) for n, body in pairs]
    sel.transform(rename, copy=False)
    return out


def attach_sql(node: LodAttach, view: exp.Select, sides: list[exp.Select]) -> exp.Select:
    """The view rows with each side's value: LEFT JOIN on the shared dims (NULL-safe), a CROSS
    JOIN when a side shares none (LOD-REL-08, LOD-FXM-02/03)."""
    ctes = [*lift_prefixed(view, VIEW), (VIEW, view)]
    sel = exp.Select()
    for d in node.dims:
        sel = sel.select(exp.alias_(col(d, VIEW), ident(d), copy=False), copy=False)
    side_of = {s.name: (f"lod_s{i}", s) for i, s in enumerate(node.sides)}

    def ref(n: exp.Expression) -> exp.Expression:
        if not isinstance(n, exp.Column) or n.table:
            return n
        if n.name in side_of:
            alias, s = side_of[n.name]
            return col(s.column, alias)
        return col(n.name, VIEW)

    for name, formula in node.columns:
        value = clone(formula).transform(ref, copy=False)
        sel = sel.select(exp.alias_(value, ident(name), copy=False), copy=False)
    sel = sel.from_(table(VIEW), copy=False)
    for (alias, s), body in zip(side_of.values(), sides, strict=True):
        ctes.extend(lift_prefixed(body, alias))
        ctes.append((alias, body))
        if s.on:
            on = and_all(
                [exp.NullSafeEQ(this=col(d, VIEW), expression=col(d, alias)) for d in s.on]
            )
            sel = join(sel, table(alias), "LEFT", on)
        else:
            sel = join(sel, table(alias), "CROSS")
    for name, body in ctes:
        sel = sel.with_(name, as_=body, copy=False)
    return sel


def include_sql(
    r: Renderer, node: LodInclude, inner: exp.Select, beside: exp.Select | None
) -> exp.Select:
    """The finer rows folded per view row by each metric's outer aggregate (LOD-REL-02);
    other datasets' metrics merged beside on the view dims (NULL-safe, S-FAN-3)."""
    folded = _folded(node, inner)
    if beside is None:
        return folded
    inputs = [*lift_prefixed(folded, "lod_inc"), ("lod_inc", folded)]
    inputs += [*lift_prefixed(beside, VIEW), (VIEW, beside)]
    taken = {m.name: "lod_inc" for m in node.metrics}
    taken.update({n: VIEW for n in node.beside_metrics})
    sel = r.merged(
        node.dims,
        inputs,
        (),
        node.strategy == "union_keys",
        ids=["lod_inc", VIEW],
        taken=tuple((n, taken[n]) for n in node.columns),
    )
    fills = dict(node.beside_fill)
    for proj in sel.expressions:
        if isinstance(proj, exp.Alias) and proj.alias in fills:
            value = number(fills[proj.alias])
            proj.set("this", exp.Coalesce(this=proj.this, expressions=[value]))
    return sel


def _folded(node: LodInclude, inner: exp.Select) -> exp.Select:
    ctes = [*lift_prefixed(inner, INNER), (INNER, inner)]
    sel = exp.Select()
    for d in node.dims:
        sel = sel.select(exp.alias_(col(d, INNER), ident(d), copy=False), copy=False)
    for m in node.metrics:
        agg = _AGGS[m.outer](this=col(m.column, INNER))
        sel = sel.select(exp.alias_(agg, ident(m.name), copy=False), copy=False)
    sel = sel.from_(table(INNER), copy=False)
    if node.dims:
        sel = sel.group_by(*(col(d, INNER) for d in node.dims), copy=False)
    for name, body in ctes:
        sel = sel.with_(name, as_=body, copy=False)
    return sel
