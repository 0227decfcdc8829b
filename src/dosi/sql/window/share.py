"""SQL of the `share` family: the row's value over its partition's total,
`CAST(v AS DOUBLE) / NULLIF(SUM(v) OVER (PARTITION BY ...), 0)` (NULL for a zero or NULL
total). The total reads the masked value, so buckets loaded only for another metric's lookback
never join it; it is computed before the metric filter and the limit (HAVING / LIMIT apply to
the windowed rows), so neither changes a share."""

from __future__ import annotations

from sqlglot import exp

from dosi.ext.window import ShareWindow, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.window.stage import WindowStageSql

_DOUBLE = exp.DataType.build("DOUBLE")


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, ShareWindow)
    total = s.window(
        exp.Sum(this=s.masked(wm, s.cur(wm.base_column))),
        [s.cur(p) for p in wm.partition],
        None,
        None,
    )
    return exp.Div(
        this=exp.Cast(this=s.cur(wm.base_column), to=_DOUBLE.copy()),
        expression=exp.Nullif(this=total, expression=exp.Literal.number(0)),
    )
