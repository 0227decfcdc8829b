"""Small sqlglot builders every SQL module shares (columns, conjunctions, numbers)."""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

from dosi.compiler.fields import ident

E = TypeVar("E", bound=exp.Expression)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def and_all(preds: list[exp.Expression]) -> exp.Expression | None:
    out: exp.Expression | None = None
    for p in preds:
        p = exp.Paren(this=p) if isinstance(p, exp.Or) else p
        out = p if out is None else exp.And(this=out, expression=p)
    return out


def number(v: float | int) -> exp.Expression:
    if isinstance(v, float) and v.is_integer() is False:
        return exp.Literal.number(repr(v))
    lit = exp.Literal.number(str(v))
    return exp.Neg(this=exp.Literal.number(str(-v))) if v < 0 else lit


# join type -> (side, kind), as sqlglot's own parser spells them; built directly, so a render
# never parses a join type string (compile time: docs/performance.md)
_JOIN_TYPES: dict[str, tuple[str | None, str | None]] = {
    "LEFT": ("LEFT", None),
    "INNER": (None, "INNER"),
    "FULL OUTER": ("FULL", "OUTER"),
    "CROSS": (None, "CROSS"),
}


def table(name: str) -> exp.Table:
    """A CTE or table reference by bare name (no parsing)."""
    return exp.Table(this=exp.Identifier(this=name, quoted=False))


def aliased(e: exp.Expression, name: str) -> exp.Expression:
    """`e AS name`, as `exp.alias_(e, ident(name), copy=False)` builds it, without alias_'s
    deep copy of the fresh identifier (compile time: docs/performance.md)."""
    if "alias" in e.arg_types and not isinstance(e, exp.Window):
        e.set("alias", ident(name))
        return e
    return exp.Alias(this=e, alias=ident(name))


def table_aliased(e: exp.Expression, name: str) -> exp.Expression:
    """`e AS name` for a table or subquery (`exp.alias_(..., table=True)`), in place."""
    e.set("alias", exp.TableAlias(this=ident(name)))
    return e


def cte_name(name: str) -> exp.TableAlias | str:
    """A CTE name for `Select.with_`, built rather than parsed where the plain name spells
    the same tree the parser would (compile time: docs/performance.md)."""
    if name.isidentifier() and name.isascii():
        return exp.TableAlias(this=exp.Identifier(this=name, quoted=False))
    return name


def join(
    sel: exp.Select,
    source: exp.Expression,
    join_type: str,
    on: exp.Expression | None = None,
) -> exp.Select:
    """`sel` JOIN `source` [ON on], in place."""
    side, kind = _JOIN_TYPES[join_type]
    j = exp.Join(this=source)
    if side:
        j.set("side", side)
    if kind:
        j.set("kind", kind)
    if on is not None:
        j.set("on", on)
    sel.append("joins", j)
    return sel


def clone(e: E) -> E:
    """A copy of an IR expression to build SQL from (IR trees are shared, never edited).

    sqlglot's deepcopy also deep-copies each node's `meta` dict (parser positions, dosi's
    field tag) through `copy.deepcopy`, most of a compile's time; their values are scalars,
    so a dict copy is enough (compile time: docs/performance.md)."""
    root = e.__class__()
    stack: list[tuple[exp.Expression, exp.Expression]] = [(e, root)]
    push, pop = stack.append, stack.pop
    while stack:
        node, out = pop()
        if node.comments is not None:
            out.comments = list(node.comments)
        if node._type is not None:
            out._type = node._type.copy()
        if node._meta is not None:
            out._meta = dict(node._meta)
        args = out.args
        # children are linked as `set` / `append` link them (parent, arg_key, index), directly:
        # the copy is fresh, so there is no hash to reset and no None to drop
        for k, vs in node.args.items():
            if isinstance(vs, exp.Expression):
                child = vs.__class__()
                child.parent, child.arg_key = out, k
                push((vs, child))
                args[k] = child
            elif type(vs) is list:
                items: list[object] = []
                for i, v in enumerate(vs):
                    if isinstance(v, exp.Expression):
                        child = v.__class__()
                        child.parent, child.arg_key, child.index = out, k, i
                        push((v, child))
                        items.append(child)
                    else:
                        items.append(v)
                args[k] = items
            else:
                args[k] = vs
    return root
