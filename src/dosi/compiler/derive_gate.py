"""D-DERIVE's expression-equivalence gate (datus-extensions D-DERIVE, DRV-TIER-01): on the
flatten tier a derived metric's own `expression` must equal the expansion of its declaration,
so the metric is computed from that expression, exactly as basic mode computes it. Both sides
are compared in one canonical form (`canonical`), which the expansion builds in too.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from sqlglot import exp

from dosi.compiler.derive_expansion import DerivePass, Expansion
from dosi.compiler.measures import double, infer_kind
from dosi.compiler.sqlparse import strip_parens
from dosi.compiler.trees import clone, sql_text
from dosi.ir.model import MeasureIr, MetricIr


def canonical(tree: exp.Expression) -> exp.Expression:
    """Parentheses dropped (the tree holds the precedence), a top-level ratio of two single
    aggregates with its numerator as DOUBLE, as a ratio metric compiles."""
    out = strip_parens(clone(tree))
    for p in list(out.find_all(exp.Paren)):
        inner = p.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        p.replace(inner)
    if infer_kind(out) == "ratio" and not isinstance(out.this, exp.Cast):
        out = exp.Div(
            this=exp.Cast(this=out.this, to=double()),
            expression=out.expression,
        )
    return out


def by_value(tree: exp.Expression) -> exp.Expression:
    """Numeric literals compared by a predicate (`> 10`, `IN (1, 2)`, BETWEEN, a CASE
    condition) in their value's plain form: `10`, `10.0`, `1e1` select the same rows. An
    arithmetic operand keeps its spelling (`x / 10` and `x / 10.0` differ where integer
    division truncates)."""
    out = tree.copy()
    for lit in list(out.find_all(exp.Literal)):
        if not lit.is_number or not isinstance(_operand_parent(lit), exp.Predicate):
            continue
        try:
            value = Decimal(lit.this)
        except InvalidOperation:
            continue
        text = format(value.normalize(), "f") if value != 0 else "0"
        plain = exp.Literal.number(text)
        neg = lit.parent
        while isinstance(neg, exp.Paren):
            neg = neg.parent
        if value == 0 and isinstance(neg, exp.Neg):
            neg.replace(plain)  # `-0` and `-0.0` are the value 0 (issue 20)
        else:
            lit.replace(plain)
    return out


def _operand_parent(node: exp.Expression) -> exp.Expression | None:
    parent = node.parent
    while isinstance(parent, exp.Neg | exp.Paren | exp.Tuple):
        parent = parent.parent
    return parent


def check_gate(p: DerivePass, m: MetricIr, e: Expansion, members: bool = False) -> None:
    """DRV-TIER-01: the flatten-tier expression equals the declaration's expansion; for a
    compose (`members`) each aggregate must also be the members' own (aggregate and owning
    dataset), since the metric computes from its expression: an authored COUNT(*) pinned to
    another dataset than the member's D-DATASET counts other rows."""
    assert e.tree is not None and m.expr_tree is not None
    authored = canonical(m.expr_tree)
    if by_value(authored) != by_value(e.tree):
        raise p.error(
            m.name,
            "derive_expression_mismatch",
            f"the expression of `{m.name}` does not match its derive expansion (authored: "
            f"{_show(authored)}; derived: {_show(e.tree)})",
            hint=f"regenerate the expression from the declaration: {_show(e.tree)}",
        )
    if not members:
        return
    registry = p.scope.registry.measures
    own = {_key(registry[x]): registry[x] for x in m.measures if x in registry}
    declared = {
        _key(registry[x]): registry[x]
        for leaf in e.leaves
        if leaf in p.metrics
        for x in p.metrics[leaf].measures
        if x in registry
    }
    extra = [own[s] for s in own if s not in declared]
    if extra and set(own) != set(declared):
        wrong = extra[0]
        owners = sorted({x.dataset for x in declared.values() if x.agg == wrong.agg}) or sorted(
            {x.dataset for x in declared.values()}
        )
        raise p.error(
            m.name,
            "derive_expression_mismatch",
            f"the expression of `{m.name}` reads `{wrong.expr.sql()}` on dataset "
            f"`{wrong.dataset}`, but its members aggregate on "
            + ", ".join(f"`{d}`" for d in owners)
            + ": equal SQL text, different measures (the members' D-DATASET pins them)",
            hint="write each member's own aggregate with its dataset's columns, or pin the "
            "aggregate to the member's dataset",
        )


def _key(meas: MeasureIr) -> tuple[str, str]:
    """What a measure computes for the gate: its owning dataset and aggregate call (a
    member's measure may carry more in its signature, e.g. D-SEMI's snapshot choice)."""
    return meas.dataset, sql_text(meas.expr)


def _show(tree: exp.Expression) -> str:
    return tree.sql()
