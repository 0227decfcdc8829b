"""D-DERIVE's expression-equivalence gate (datus-extensions D-DERIVE, DRV-TIER-01): on the
flatten tier a derived metric's own `expression` must equal the expansion of its declaration,
so the metric is computed from that expression, exactly as basic mode computes it. Both sides
are compared in one canonical form (`canonical`), which the expansion builds in too.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.derive_expansion import DerivePass, Expansion
from dosi.compiler.measures import infer_kind
from dosi.compiler.sqlparse import strip_parens
from dosi.ir.model import MetricIr


def canonical(tree: exp.Expression) -> exp.Expression:
    """Parentheses dropped (the tree holds the precedence), a top-level ratio of two single
    aggregates with its numerator as DOUBLE, as a ratio metric compiles."""
    out = strip_parens(tree.copy())
    for p in list(out.find_all(exp.Paren)):
        inner = p.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        p.replace(inner)
    if infer_kind(out) == "ratio" and not isinstance(out.this, exp.Cast):
        out = exp.Div(
            this=exp.Cast(this=out.this, to=exp.DataType.build("DOUBLE")),
            expression=out.expression,
        )
    return out


def check_gate(p: DerivePass, m: MetricIr, e: Expansion) -> None:
    """DRV-TIER-01: the flatten-tier expression equals the declaration's expansion."""
    assert e.tree is not None and m.expr_tree is not None
    authored = canonical(m.expr_tree)
    if authored != e.tree:
        raise p.error(
            m.name,
            "derive_expression_mismatch",
            f"the expression of `{m.name}` does not match its derive expansion (authored: "
            f"{_show(authored)}; derived: {_show(e.tree)})",
            hint=f"regenerate the expression from the declaration: {_show(e.tree)}",
        )


def _show(tree: exp.Expression) -> str:
    return tree.sql()


