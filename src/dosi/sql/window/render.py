"""Window stage -> SQL (window-metrics-extension.md, "Compilation semantics").

    WITH base AS (<the grouped aggregate: dims + base measures>),
         win  AS (SELECT c.*, <offset calculations>, <window functions>
                  FROM base AS c LEFT JOIN base AS p1 ON <partition> AND p1.t = c.t - shift)
    SELECT <outputs> FROM win WHERE <trim> ORDER BY ... LIMIT ...

The trim sits outside the windowed SELECT: WHERE runs before window functions, so an inner trim
would delete the lookback rows the accumulation needs. Each window metric is drawn by its
family's renderer (`dosi.sql.window.families`).
"""

from __future__ import annotations

from sqlglot import exp

from dosi.plan.nodes import Trim, Window
from dosi.sql.render import Renderer
from dosi.sql.util import aliased, clone, col, table, table_aliased
from dosi.sql.window.families import FAMILY_SQL
from dosi.sql.window.stage import BASE, CUR, WindowStageSql


def render_window(r: Renderer, stage: Window, base: str = BASE) -> exp.Select:
    """The window stage's SELECT over the CTE `base` (the stage's aggregate): the `win` CTE
    body, dims, carried metrics and window metrics over `base AS c`."""
    s = WindowStageSql(r, stage, base)
    win = exp.Select()
    for d in stage.dims:
        win = win.select(aliased(s.cur(d), d), copy=False)
    for name in stage.passed:
        win = win.select(aliased(s.cur(name), name), copy=False)
    for m in stage.carried:
        e = r.substitute(m.formula, lambda n: s.cur(n))
        win = win.select(aliased(r.fill(e, m), m.name), copy=False)
    for wm in stage.metrics:
        expr = FAMILY_SQL[wm.spec.family].render(s, wm, wm.spec)
        win = win.select(aliased(expr, wm.name), copy=False)
    source: exp.Expression = table(base)
    for family in dict.fromkeys(wm.spec.family for wm in stage.metrics):
        pre = FAMILY_SQL[family].source
        if pre is not None:  # columns over `base` the family's window functions read
            source = exp.Subquery(this=pre(s, source))
    win = win.from_(table_aliased(source, CUR), copy=False)
    for family in dict.fromkeys(wm.spec.family for wm in stage.metrics):
        joins = FAMILY_SQL[family].joins
        if joins is not None:
            win = joins(s, win)
    return win


def trim_predicates(r: Renderer, trim: Trim) -> list[exp.Expression]:
    """time_key in [start, end) on the windowed rows (outside the windowed SELECT)."""
    t = col(trim.time_key)
    preds: list[exp.Expression] = []
    if trim.bounds.start is not None:
        preds.append(exp.GTE(this=t, expression=r.dialect.time_literal(trim.bounds.start, None)))
    if trim.bounds.end is not None:
        preds.append(
            exp.LT(this=clone(t), expression=r.dialect.time_literal(trim.bounds.end, None))
        )
    if trim.present is not None:  # a densified series: the rows a spine filled dropped
        data = exp.EQ(this=col(trim.present), expression=exp.Literal.number(1))
        keeps: list[exp.Expression] = [data] if trim.with_data or not trim.covering else []
        for c in trim.covering:  # densify `covered`: or a window metric has a value
            keeps.append(exp.Not(this=exp.Is(this=col(c), expression=exp.Null())))
        keep = keeps[0]
        for k in keeps[1:]:
            keep = exp.Or(this=keep, expression=k)
        preds.append(exp.Paren(this=keep) if len(keeps) > 1 else keep)
    return preds
