"""SQL of the `offset` family (WM "Compilation semantics", "Offset family"): a shifted-key
self-join, not LAG. Each distinct shift joins `base` once more (`p1`, `p2`, ...) on the
partition dims and `t = c.t - shift`; the calculation reads the shifted row's value. An offset
to the period start (1.15) joins on `t = bucket(period, c.t)`: the period's first bucket."""

from __future__ import annotations

from sqlglot import exp

from dosi.ext.window import OffsetWindow, WindowSpec
from dosi.plan.records import WindowMetric
from dosi.sql.calendar import grain_shift
from dosi.sql.util import and_all, clone, col, join, table, table_aliased
from dosi.sql.window.stage import WindowStageSql

_DOUBLE = exp.DataType.build("DOUBLE")


def _double(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=clone(_DOUBLE))


def _safe_div(num: exp.Expression, den: exp.Expression) -> exp.Expression:
    return exp.Div(
        this=_double(num), expression=exp.Nullif(this=den, expression=exp.Literal.number(0))
    )


def _alias(s: WindowStageSql, w: OffsetWindow) -> str:
    key = (w.count, w.granularity, "start" if w.to_period_start is not None else w.direction)
    if key not in s.shift_alias:
        s.shift_alias[key] = f"p{len(s.shift_alias) + 1}"
    return s.shift_alias[key]


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, OffsetWindow)
    alias = _alias(s, spec)
    cur = s.cur(wm.base_column)
    prev = col(wm.base_column, alias)
    calc = spec.calculation
    if calc == "value":
        return prev
    if calc == "delta":
        return exp.Sub(this=cur, expression=prev)
    if calc == "ratio":
        return _safe_div(cur, prev)
    return _safe_div(exp.Paren(this=exp.Sub(this=cur, expression=prev)), prev)


def joins(s: WindowStageSql, sel: exp.Select) -> exp.Select:
    """The self-joins the stage's offsets asked for, partitioned like the offset metrics."""
    if not s.shift_alias:
        return sel
    partition: tuple[str, ...] = ()
    for wm in s.stage.metrics:
        if isinstance(wm.spec, OffsetWindow):  # the offset self-joins partition like this
            partition = wm.partition
    t = s.stage.time_key
    cal = s.r.model.calendar
    assert t is not None
    for (count, gran, direction), alias in s.shift_alias.items():
        signed = -count if direction == "back" else count
        conds: list[exp.Expression] = [
            # partition equality is plain `=`: a NULL dimension has no comparable period
            exp.EQ(this=col(d, alias), expression=s.cur(d))
            for d in partition
        ]
        if direction == "start":  # the first bucket of the period holding this one
            key = s.r.bucket(s.cur(t), gran, None)
        else:
            key = grain_shift(s.dialect, s.cur(t), signed, gran, None, cal)
        conds.append(exp.EQ(this=col(t, alias), expression=key))
        sel = join(
            sel,
            table_aliased(table(s.base), alias),
            "LEFT",
            and_all(conds),
        )
    return sel
