"""SQL of the `value` family (WM "Compilation semantics", "Value family"): FIRST_VALUE /
LAST_VALUE / NTH_VALUE over the whole ordered partition (ROWS UNBOUNDED both ways), with
IGNORE NULLS under 1.14 `ignore_nulls`."""

from __future__ import annotations

from sqlglot import exp

from dosi.ext.window import ValueWindow, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.window.stage import WindowStageSql


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, ValueWindow)
    v = s.cur(wm.base_column)
    if spec.function == "first_value":
        func: exp.Expression = exp.FirstValue(this=v)
    elif spec.function == "last_value":
        func = exp.LastValue(this=v)
    else:
        func = exp.NthValue(this=v, offset=exp.Literal.number(spec.n or 1))
    if spec.ignore_nulls:  # 1.14; the dialect gate admits it only where the engine has it
        func = exp.IgnoreNulls(this=func)
    order = s.order_keys(wm, spec.order.by, spec.order.direction, spec.order.nulls)
    frame = exp.WindowSpec(
        kind="ROWS",
        start="UNBOUNDED",
        start_side="PRECEDING",
        end="UNBOUNDED",
        end_side="FOLLOWING",
    )
    return s.window(func, [s.cur(p) for p in wm.partition], order, frame)
