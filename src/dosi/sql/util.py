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
