"""Metric decomposition: aggregates become named measures, the rest becomes a formula.

S-MEASURE-1: a measure's default name is a deterministic ASCII stem `<dataset>_<arg>_<agg>`
(e.g. `orders_amount_sum`). Measures are deduplicated by aggregate signature; two different
signatures landing on one name is `measure_name_collision` (D-MEASURE).
"""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal

from sqlglot import exp

from dosi.compiler.sqlparse import strip_parens
from dosi.compiler.trees import clone
from dosi.ir.percentile import quantile_of

_AGG_NAMES: dict[type[exp.Expression], str] = {
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.StddevPop: "stddev_pop",
    exp.StddevSamp: "stddev_samp",
    exp.Stddev: "stddev",
    exp.VariancePop: "var_pop",
    exp.Variance: "var_samp",
    exp.ApproxDistinct: "approx_count_distinct",
    exp.Median: "median",
    exp.PercentileCont: "percentile_cont",
    exp.PercentileDisc: "percentile_disc",
    exp.ApproxQuantile: "approx_quantile",
    exp.CountIf: "count_if",
    exp.AnyValue: "any_value",
}

# Aggregates whose argument values are "measured" (D-DIM inference); COUNT / MIN / MAX only
# mention a column.
MEASURING_AGGS = frozenset(
    {
        "sum",
        "avg",
        "stddev_pop",
        "stddev_samp",
        "stddev",
        "var_pop",
        "var_samp",
        "median",
        "percentile_cont",
        "percentile_disc",
        "approx_quantile",
    }
)


def agg_name(node: exp.AggFunc) -> str:
    if isinstance(node, exp.Count):
        arg = node.this
        if arg is None or isinstance(arg, exp.Star):
            return "count_star"
        if isinstance(arg, exp.Distinct):
            return "count_distinct"
        return "count"
    base = _AGG_NAMES.get(type(node))
    if base is None:
        base = _snake(type(node).__name__)
    if isinstance(node.this, exp.Distinct):
        base += "_distinct"
    return base


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def agg_argument(node: exp.AggFunc) -> exp.Expression | None:
    arg = node.this
    if isinstance(arg, exp.Distinct):
        exprs = arg.expressions
        return exprs[0] if len(exprs) == 1 else exp.Tuple(expressions=exprs)
    if isinstance(arg, exp.Star):
        return None
    return arg


def sanitize(text: str) -> str:
    """ASCII-only, lower snake case; non-ASCII content disappears (hence D-MEASURE)."""
    ascii_only = text.encode("ascii", "ignore").decode()
    out = re.sub(r"[^a-z0-9]+", "_", ascii_only.lower()).strip("_")
    return out


def measure_stem(dataset: str, node: exp.AggFunc) -> str:
    """`<dataset>_<argument>_<agg>`, the argument written without its dataset qualifiers."""
    agg = agg_name(node)
    if isinstance(node, (exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile)):
        agg = f"{_percent_tag(quantile_of(node))}_{agg}"  # p50 and p99 of one column differ
    ds = sanitize(dataset) or "ds"
    if agg == "count_star":
        return f"{ds}_count"
    arg = agg_argument(node)
    if arg is None:
        return f"{ds}_{agg}"
    arg = arg.copy()
    for col in arg.find_all(exp.Column):
        col.set("table", None)
    arg_text = sanitize(arg.sql())
    if len(arg_text) > 48:
        digest = hashlib.sha1(arg_text.encode()).hexdigest()[:8]
        arg_text = f"{arg_text[:40].rstrip('_')}_{digest}"
    return f"{ds}_{arg_text or 'expr'}_{agg}"


def _percent_tag(q: Decimal) -> str:
    """`p99` for 0.99, `p99_9` for 0.999, `p5` for 0.05."""
    text = format((q * 100).normalize(), "f")
    return "p" + text.replace(".", "_")


def is_single_aggregate(node: exp.Expression) -> bool:
    node = strip_parens(node)
    return isinstance(node, exp.AggFunc)


def infer_kind(node: exp.Expression) -> str:
    node = strip_parens(node)
    if isinstance(node, exp.AggFunc):
        return "aggregate"
    if (
        isinstance(node, exp.Div)
        and is_single_aggregate(node.this)
        and is_single_aggregate(node.expression)
    ):
        return "ratio"
    return "expression"


def measured_value_columns(node: exp.Expression) -> list[exp.Column]:
    """Columns whose *values* an aggregate reads: CASE conditions only select rows."""
    out: list[exp.Column] = []
    _measured(node, out)
    return out


def _measured(n: exp.Expression, out: list[exp.Column]) -> None:
    """measured_value_columns' walk: a function, not a recursive closure (a reference cycle
    per call, garbage for the cyclic collector)."""
    if isinstance(n, exp.Column):
        out.append(n)
        return
    if isinstance(n, exp.Case):
        for branch in n.args.get("ifs") or []:
            _measured(branch.args["true"], out)
        default = n.args.get("default")
        if default is not None:
            _measured(default, out)
        return
    if isinstance(n, exp.If):
        _measured(n.args["true"], out)
        if n.args.get("false") is not None:
            _measured(n.args["false"], out)
        return
    for child in n.iter_expressions():
        _measured(child, out)


#: DOUBLE, copied where a numerator is cast (`DataType.build` parses its text each call)
_DOUBLE = exp.DataType.build("DOUBLE")


def double() -> exp.DataType:
    return clone(_DOUBLE)


def safe_division(formula: exp.Expression, owned: bool = False) -> exp.Expression:
    """Every division in a metric formula is non-integer and NULL on a zero denominator.
    `owned`: the caller's own tree, rewritten in place instead of copied first."""

    def fix(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Div):
            num = n.this
            den = n.expression
            return exp.Div(
                this=exp.Cast(this=num, to=double()),
                expression=exp.Nullif(this=den, expression=exp.Literal.number(0)),
            )
        return n

    return formula.transform(fix, copy=not owned)
