"""Small sqlglot builders every SQL module shares (columns, conjunctions, numbers)."""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident


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
# never parses a join type string (compile time: PERFORMANCE.md)
_JOIN_TYPES: dict[str, tuple[str | None, str | None]] = {
    "LEFT": ("LEFT", None),
    "INNER": (None, "INNER"),
    "FULL OUTER": ("FULL", "OUTER"),
    "CROSS": (None, "CROSS"),
}


def table(name: str) -> exp.Table:
    """A CTE or table reference by bare name (no parsing)."""
    return exp.Table(this=exp.Identifier(this=name, quoted=False))


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
