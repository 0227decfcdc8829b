"""The percentile family's canonical aggregate nodes (built by dosi.compiler.percentile,
rendered by dosi.sql.dialects.percentile): what a node computes, read back from the tree.

`PercentileCont(this=x, expression=p)` continuous, `PercentileDisc(this=x, expression=p)`
discrete, `ApproxQuantile(this=x, quantile=p)` approximate, `Median(this=x)` the continuous
0.5. None of them rolls up from partial aggregates (non-additive)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from sqlglot import exp

#: measure `agg` names of the family (dosi.compiler.measures.agg_name)
PERCENTILE_AGGS = frozenset({"percentile_cont", "percentile_disc", "approx_quantile", "median"})
PERCENTILE_NODES: tuple[type[exp.Expression], ...] = (
    exp.PercentileCont,
    exp.PercentileDisc,
    exp.ApproxQuantile,
    exp.Median,
)


def fraction(q: exp.Expression | None) -> Decimal | None:
    """The literal fraction 0..1 a node ranks at; None when it is anything else."""
    text = q.this if isinstance(q, exp.Literal) and not q.is_string else None
    try:
        value = Decimal(str(text)) if text is not None else None
    except InvalidOperation:
        return None
    return value if value is not None and 0 <= value <= 1 else None


def quantile_of(node: exp.Expression) -> Decimal:
    """The canonical node's fraction (0.5 for MEDIAN)."""
    if isinstance(node, exp.Median):
        return Decimal("0.5")
    q = node.args.get("quantile") if isinstance(node, exp.ApproxQuantile) else node.expression
    value = fraction(q)
    assert value is not None, node.sql()  # the compiler checked it
    return value


def method_of(node: exp.Expression) -> str:
    """ "cont", "disc" or "approx"."""
    if isinstance(node, exp.PercentileDisc):
        return "disc"
    if isinstance(node, exp.ApproxQuantile):
        return "approx"
    return "cont"


def written(tree: exp.Expression) -> str:
    """The tree's SQL with each canonical percentile node in its ANSI spelling
    (`PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY x)`, `APPROX_QUANTILE(x, 0.9)`): what
    lineage and messages show, never the internal argument order."""

    def one(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, PERCENTILE_NODES) or isinstance(node, exp.Median):
            return node
        q = exp.Literal.number(str(quantile_of(node)))
        if isinstance(node, exp.ApproxQuantile):
            return exp.Anonymous(this="APPROX_QUANTILE", expressions=[node.this.copy(), q])
        order = exp.Order(expressions=[exp.Ordered(this=node.this.copy(), nulls_first=True)])
        return exp.WithinGroup(this=type(node)(this=q), expression=order)

    if not any(True for _ in tree.find_all(*PERCENTILE_NODES)):
        return tree.sql()
    return tree.transform(one).sql()
