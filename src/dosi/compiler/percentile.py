"""Percentile and median aggregates in a metric expression (issue 21 item 5): every spelling
becomes one canonical aggregate node that holds its value column, so measure splitting,
ownership and the planner's additivity rules see a single aggregate.

Accepted (ANSI, as a model writes them):
* `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)`: continuous (linear interpolation between the
  two nearest ranks); DESC is the same as `1 - p` ascending;
* `PERCENTILE_DISC(p) WITHIN GROUP (ORDER BY x)`: the first value whose cumulative share of the
  non-NULL rows reaches `p` (ascending only);
* `MEDIAN(x)`: `PERCENTILE_CONT(0.5)`, kept as its own node;
* `APPROX_QUANTILE(x, p)` / `APPROX_PERCENTILE(x, p)`: the engine's approximation (an engine
  without one computes the exact continuous value).

Canonical nodes (DuckDB's argument order, value first): `PercentileCont(this=x, expression=p)`,
`PercentileDisc(this=x, expression=p)`, `ApproxQuantile(this=x, quantile=p)`, `Median(this=x)`.
Each dialect renders them (dosi.sql.percentile); none of them rolls up, so the planner never
pre-aggregates them (its allow-lists of additive aggregates do not name them).
"""

from __future__ import annotations

from decimal import Decimal

from sqlglot import exp

from dosi.ir.percentile import PERCENTILE_NODES, fraction

_APPROX_NAMES = frozenset({"APPROX_PERCENTILE", "APPROX_QUANTILE", "PERCENTILE_APPROX"})


class PercentileError(ValueError):
    """A percentile spelled in a way dosi cannot compute; the message names the fix."""


def normalize_percentiles(tree: exp.Expression) -> exp.Expression:
    """The tree with every percentile spelling in canonical form (PercentileError if one
    cannot be read)."""
    if not _mentions_percentile(tree):
        return tree
    out = tree.transform(_canonical)
    for node in out.find_all(exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile):
        _check(node)
    return out


def _mentions_percentile(tree: exp.Expression) -> bool:
    for n in tree.walk():
        if isinstance(n, PERCENTILE_NODES):
            return True
        if isinstance(n, exp.Anonymous) and str(n.this).upper() in _APPROX_NAMES:
            return True
    return False


def _canonical(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.WithinGroup) and isinstance(
        node.this, (exp.PercentileCont, exp.PercentileDisc)
    ):
        return _within_group(node)
    if isinstance(node, exp.Anonymous) and str(node.this).upper() in _APPROX_NAMES:
        args = node.expressions
        if len(args) != 2:
            raise PercentileError(
                f"`{node.sql()}` takes two arguments: the value and the fraction, "
                "e.g. APPROX_PERCENTILE(orders.amount, 0.9)"
            )
        return exp.ApproxQuantile(this=args[0], quantile=args[1])
    if isinstance(node, exp.ApproxQuantile):
        extra = [k for k in ("accuracy", "weight", "error_tolerance") if node.args.get(k)]
        if extra:
            raise PercentileError(
                f"`{node.sql()}` carries {', '.join(extra)}; write APPROX_QUANTILE(value, "
                "fraction): each engine uses its own accuracy"
            )
    return node


def _within_group(node: exp.WithinGroup) -> exp.Expression:
    func = node.this
    name = "PERCENTILE_CONT" if isinstance(func, exp.PercentileCont) else "PERCENTILE_DISC"
    order = node.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    if func.expression is not None or len(keys) != 1:
        raise PercentileError(
            f"`{node.sql()}`: write {name}(fraction) WITHIN GROUP (ORDER BY one value)"
        )
    (key,) = keys
    value = key.this if isinstance(key, exp.Ordered) else key
    p = func.this
    if isinstance(key, exp.Ordered) and key.args.get("desc"):
        if isinstance(func, exp.PercentileDisc):
            raise PercentileError(
                f"`{node.sql()}` orders descending; write PERCENTILE_DISC over the ascending "
                "order (the discrete value of a descending order is not 1 - p ascending)"
            )
        p = exp.Literal.number(str(Decimal(1) - _fraction(p)))  # continuous: exact mirror
    return type(func)(this=value, expression=p)


def _check(node: exp.Expression) -> None:
    q = node.args.get("quantile") if isinstance(node, exp.ApproxQuantile) else node.expression
    _fraction(q)  # raises on anything but a literal in [0, 1]
    if node.this is None or isinstance(node.this, exp.Literal):
        raise PercentileError(f"`{node.sql()}` needs a value to rank, e.g. a field")


def _fraction(q: exp.Expression | None) -> Decimal:
    value = fraction(q)
    if value is None:
        shown = q.sql() if q is not None else "nothing"
        raise PercentileError(
            f"a percentile's fraction must be a number from 0 to 1 (0.9 for the 90th "
            f"percentile), not {shown}"
        )
    return value
