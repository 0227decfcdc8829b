"""Small sqlglot builders every SQL module shares (columns, conjunctions, numbers)."""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.compiler.trees import clone


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


__all__ = [
    "aliased",
    "and_all",
    "clone",
    "col",
    "cte_name",
    "join",
    "number",
    "table",
    "table_aliased",
]
