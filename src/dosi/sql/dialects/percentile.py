"""Percentile aggregates per warehouse (issue 21 item 5): the canonical nodes of
dosi.compiler.percentile as each engine computes them, chosen by a dialect's
`percentile_style` fact (None: the engine has no percentile aggregate; the query is refused
with `dialect_unsupported_percentile` before any SQL runs).

The numbers every style must give (the SQL standard's definitions, DuckDB's and PostgreSQL's):
* continuous `p` over the n non-NULL values sorted ascending, v[1..n]: with h = (n - 1) * p,
  v[floor(h) + 1] + (h - floor(h)) * (v[floor(h) + 2] - v[floor(h) + 1]); a DOUBLE everywhere
  (an interpolation is not a value of the column, so it does not keep a DECIMAL's scale);
* discrete `p`: v[max(1, ceil(n * p))], a value of the column, its type kept;
* approximate: the engine's own estimate; an engine without one computes the continuous value.
No rows (or only NULLs): NULL.

Styles: "within_group" (ANSI `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)`), "duckdb"
(`QUANTILE_CONT` / `QUANTILE_DISC` / `APPROX_QUANTILE`), "clickhouse"
(`quantileExactInclusive`, an exact rank pick, `quantile`), "spark" (`percentile`, an exact rank
pick, `percentile_approx`), "datafusion" (exact rank picks over the sorted `array_agg`, NULLs
sorted last; its own `percentile_cont` is off in the sixth digit; `approx_percentile_cont` for
the estimate).
Rank arithmetic is on integers: the fraction is the literal p = num / den, so
ceil(n * p) = (num * n + den - 1) div den, never a float that lands beside an integer.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from sqlglot import exp

_DOUBLE = exp.DataType.build("DOUBLE")
_BIGINT = exp.DataType.build("BIGINT")
Method = str  # "cont" | "disc" | "approx"


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _num(value: int | Decimal) -> exp.Literal:
    return exp.Literal.number(str(value))


def _double(value: exp.Expression) -> exp.Expression:
    return exp.Cast(this=value, to=_DOUBLE.copy())


def _ratio(q: Decimal) -> tuple[int, int]:
    n, d = q.as_integer_ratio()
    return n, d


def _within_group(value: exp.Expression, q: Decimal, method: Method) -> exp.Expression:
    func = exp.PercentileDisc if method == "disc" else exp.PercentileCont
    arg = value if method == "disc" else _double(value)
    order = exp.Order(expressions=[exp.Ordered(this=arg, desc=False, nulls_first=False)])
    return exp.WithinGroup(this=func(this=_num(q)), expression=order)


def _duckdb(value: exp.Expression, q: Decimal, method: Method) -> exp.Expression:
    if method == "disc":
        return exp.PercentileDisc(this=value, expression=_num(q))
    if method == "approx":
        return exp.ApproxQuantile(this=_double(value), quantile=_num(q))
    return exp.PercentileCont(this=_double(value), expression=_num(q))


def _ceil_rank(count: exp.Expression, q: Decimal) -> exp.Expression:
    """max(1, ceil(count * q)) in integer arithmetic."""
    num, den = _ratio(q)
    scaled = exp.Add(this=exp.Mul(this=_num(num), expression=count), expression=_num(den - 1))
    rank = exp.IntDiv(this=exp.Paren(this=scaled), expression=_num(den))
    return exp.Greatest(this=_num(1), expressions=[rank])


def _clickhouse(value: exp.Expression, q: Decimal, method: Method) -> exp.Expression:
    if method == "disc":
        count = exp.Count(this=value.copy())
        ranked = _fn("arraySort", _fn("groupArray", value))
        pick = _fn("arrayElement", ranked, _ceil_rank(count, q))
        empty = exp.EQ(this=count.copy(), expression=_num(0))
        return exp.If(this=empty, true=exp.Null(), false=pick)
    name = "quantile" if method == "approx" else "quantileExactInclusive"
    # sqlglot writes ParameterizedAgg as name(expressions)(params): name(q)(value)
    return exp.ParameterizedAgg(this=name, expressions=[_num(q)], params=[_fn("toFloat64", value)])


def _sorted_pick(
    arr: Callable[[], exp.Expression],
    count: exp.Expression,
    q: Decimal,
    method: Method,
    element: str,
    int_index: bool = False,
) -> exp.Expression:
    """v[rank] of a sorted array built by `arr()` (1-based `element`), or the interpolation.
    `int_index`: the engine indexes by a 32-bit INT (Spark), not by the BIGINT a count is."""

    def at(index: exp.Expression) -> exp.Expression:
        if int_index:
            index = exp.Cast(this=index, to=exp.DataType.build("INT"))
        return _fn(element, arr(), index)

    if method == "disc":
        return at(_ceil_rank(count, q))
    num, den = _ratio(q)
    h = exp.Mul(this=_num(num), expression=exp.Paren(this=exp.Sub(this=count, expression=_num(1))))
    lo = exp.IntDiv(this=exp.Paren(this=h), expression=_num(den))
    rest = exp.Mod(this=exp.Paren(this=h.copy()), expression=_num(den))
    # the elements, not the array, are cast: one sorted array serves every percentile of x
    first = _double(at(exp.Add(this=lo, expression=_num(1))))
    second = _double(at(exp.Add(this=lo.copy(), expression=_num(2))))
    step = exp.Div(
        this=exp.Mul(
            this=exp.Paren(this=exp.Sub(this=second, expression=first.copy())),
            expression=_double(rest.copy()),
        ),
        expression=_num(den),
    )
    exact = exp.EQ(this=rest, expression=_num(0))
    return exp.Case(
        ifs=[exp.If(this=exact, true=first)], default=exp.Add(this=first.copy(), expression=step)
    )


def _spark(value: exp.Expression, q: Decimal, method: Method) -> exp.Expression:
    if method == "approx":
        return exp.ApproxQuantile(this=_double(value), quantile=_num(q))
    if method == "cont":
        return _fn("percentile", _double(value), _num(q))
    count = exp.Count(this=value.copy())
    return _sorted_pick(
        lambda: _fn("array_sort", _fn("collect_list", value.copy())),
        count,
        q,
        method,
        "try_element_at",  # an empty group: NULL (element_at raises under ANSI mode)
        int_index=True,
    )


def _datafusion(value: exp.Expression, q: Decimal, method: Method) -> exp.Expression:
    if method == "approx":
        return _fn("approx_percentile_cont", _double(value), _num(q))

    def arr() -> exp.Expression:  # NULLs sorted last: ranks 1..count are the values
        agg = _fn("array_agg", value.copy())
        return _fn("array_sort", agg, exp.Literal.string("ASC"), exp.Literal.string("NULLS LAST"))

    return _sorted_pick(arr, exp.Count(this=value.copy()), q, method, "array_element")


STYLES: dict[str, Callable[[exp.Expression, Decimal, Method], exp.Expression]] = {
    "within_group": _within_group,
    "duckdb": _duckdb,
    "clickhouse": _clickhouse,
    "spark": _spark,
    "datafusion": _datafusion,
}
