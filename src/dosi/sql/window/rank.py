"""SQL of the `rank` family (WM "Compilation semantics", "Rank family"): the ranking function
OVER the metric's partition, ordered by value or time with the dims breaking ties."""

from __future__ import annotations

from sqlglot import exp

from dosi.ext.window import RankWindow, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.window.stage import WindowStageSql

_RANKS: dict[str, type[exp.Expression]] = {
    "row_number": exp.RowNumber,
    "rank": exp.Rank,
    "dense_rank": exp.DenseRank,
    "percent_rank": exp.PercentRank,
    "cume_dist": exp.CumeDist,
}


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, RankWindow)
    if spec.function == "ntile":
        func: exp.Expression = exp.Ntile(this=exp.Literal.number(spec.buckets or 1))
    else:
        func = _RANKS[spec.function]()
    order = s.order_keys(wm, spec.order.by, spec.order.direction, spec.order.nulls)
    return s.window(func, [s.cur(p) for p in wm.partition], order, None)
