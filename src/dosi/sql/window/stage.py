"""What every window family's SQL renderer works with: the window stage being rendered, its
rows `base AS c`, and the shared builders (order keys, OVER clauses, range masks).

window-metrics-extension.md, "Compilation semantics": the stage reads the grouped aggregate
(the CTE `base`) as `c`; each family renders one expression per window metric over it
(`dosi.sql.window.<family>`), and offsets add calendar-shifted self-joins of `base`.
"""

from __future__ import annotations

import copy

from sqlglot import exp

from dosi.plan.nodes import Window
from dosi.plan.records import WindowMetric
from dosi.sql.render import Renderer
from dosi.sql.util import and_all, clone, col

BASE, WIN, CUR = "base", "win", "c"


class WindowStageSql:
    """One window stage being rendered: the renderer, the stage node, the CTE it reads, and
    the offset self-joins its metrics asked for (shift -> alias, in order of first use)."""

    def __init__(self, r: Renderer, stage: Window, base: str) -> None:
        self.r = r
        self.stage = stage
        self.base = base
        self.dialect = r.dialect
        self.shift_alias: dict[tuple[int, str, str], str] = {}
        self.alias = CUR

    def at(self, alias: str) -> WindowStageSql:
        """The same stage read through another alias (a family's pre-stage over `base`)."""
        other = copy.copy(self)
        other.alias = alias
        return other

    def cur(self, name: str) -> exp.Column:
        return col(name, self.alias)

    def order_keys(
        self, wm: WindowMetric, by: str, direction: str, nulls: str | None
    ) -> list[exp.Ordered]:
        desc = direction == "desc"
        target = self.cur(self.stage.time_key) if by == "time" else self.cur(wm.base_column)  # type: ignore[arg-type]
        # WIN-19-03: an omitted `order.nulls` is the warehouse's own default; the dimension
        # tie-breakers are dosi's and sort NULLs last on every dialect, so ties resolve alike
        keys = self.dialect.ordered(target, desc, nulls)
        for d in wm.tiebreak:
            keys.extend(self.dialect.ordered(self.cur(d), False, "last"))
        return keys

    def window(
        self,
        func: exp.Expression,
        partition: list[exp.Expression],
        order: list[exp.Ordered] | None,
        spec: exp.WindowSpec | None,
    ) -> exp.Window:
        w = exp.Window(this=func)
        if partition:
            w.set("partition_by", partition)
        if order:
            w.set("order", exp.Order(expressions=order))
        if spec is not None:
            w.set("spec", spec)
        return w

    def masked(self, wm: WindowMetric, value: exp.Expression) -> exp.Expression:
        """`value` only for buckets the frame may read (see WindowMetric.mask_before)."""
        after = wm.mask_after
        if wm.mask_before is None and after is None:
            return value
        t = self.cur(self.stage.time_key)  # type: ignore[arg-type]
        preds: list[exp.Expression] = []
        if wm.mask_before is not None:
            low = self.dialect.time_literal(wm.mask_before, None)
            preds.append(exp.GTE(this=t, expression=low))
        if after is not None:
            high = self.dialect.time_literal(after, None)
            preds.append(exp.LT(this=clone(t), expression=high))
        keep = and_all(preds)
        return exp.Case(ifs=[exp.If(this=keep, true=value)])

    def frame_count(self, wm: WindowMetric) -> exp.Expression:
        if wm.mask_before is None and wm.mask_after is None:
            return exp.Count(this=exp.Star())
        return exp.Count(this=self.masked(wm, exp.Literal.number(1)))
