"""Window stage -> SQL (window-metrics-extension.md, "Compilation semantics").

    WITH base AS (<the grouped aggregate: dims + base measures>),
         win  AS (SELECT c.*, <offset calculations>, <window functions>
                  FROM base AS c LEFT JOIN base AS p1 ON <partition> AND p1.t = c.t - shift)
    SELECT <outputs> FROM win WHERE <trim> ORDER BY ... LIMIT ...

The trim sits outside the windowed SELECT: WHERE runs before window functions, so an inner trim
would delete the lookback rows the accumulation needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from dosi.ext import FrameWindow, OffsetWindow, RankWindow, ValueWindow
from dosi.plan.nodes import Trim, Window
from dosi.plan.records import WindowMetric
from dosi.sql.render import Renderer
from dosi.sql.util import aliased, and_all, clone, col, join, table, table_aliased

_AGGS: dict[str, type[exp.Expression]] = {
    "sum": exp.Sum,
    "avg": exp.Avg,
    "min": exp.Min,
    "max": exp.Max,
    "stddev_pop": exp.StddevPop,
    "stddev_samp": exp.StddevSamp,
    "var_pop": exp.VariancePop,
    "var_samp": exp.Variance,
}
_TWO_ARG: dict[str, type[exp.Expression]] = {
    "covar_pop": exp.CovarPop,
    "covar_samp": exp.CovarSamp,
    "corr": exp.Corr,
}
_RANKS: dict[str, type[exp.Expression]] = {
    "row_number": exp.RowNumber,
    "rank": exp.Rank,
    "dense_rank": exp.DenseRank,
    "percent_rank": exp.PercentRank,
    "cume_dist": exp.CumeDist,
}
_DOUBLE = exp.DataType.build("DOUBLE")

BASE, WIN, CUR = "base", "win", "c"


def _double(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=clone(_DOUBLE))


def _safe_div(num: exp.Expression, den: exp.Expression) -> exp.Expression:
    return exp.Div(
        this=_double(num), expression=exp.Nullif(this=den, expression=exp.Literal.number(0))
    )


class _StageRenderer:
    def __init__(self, r: Renderer, stage: Window, base: str) -> None:
        self.r = r
        self.stage = stage
        self.base = base
        self.dialect = r.dialect
        self.shift_alias: dict[tuple[int, str, str], str] = {}

    def cur(self, name: str) -> exp.Column:
        return col(name, CUR)

    # -- offsets -------------------------------------------------------------------------------
    def offset_alias(self, w: OffsetWindow) -> str:
        key = (w.count, w.granularity, w.direction)
        if key not in self.shift_alias:
            self.shift_alias[key] = f"p{len(self.shift_alias) + 1}"
        return self.shift_alias[key]

    def offset_expr(self, wm: WindowMetric, w: OffsetWindow) -> exp.Expression:
        alias = self.offset_alias(w)
        cur = self.cur(wm.base_column)
        prev = col(wm.base_column, alias)
        calc = w.calculation
        if calc == "value":
            return prev
        if calc == "delta":
            return exp.Sub(this=cur, expression=prev)
        if calc == "ratio":
            return _safe_div(cur, prev)
        return _safe_div(exp.Paren(this=exp.Sub(this=cur, expression=prev)), prev)

    def offset_joins(self, sel: exp.Select, partition: tuple[str, ...]) -> exp.Select:
        t = self.stage.time_key
        assert t is not None
        for (count, gran, direction), alias in self.shift_alias.items():
            signed = -count if direction == "back" else count
            conds: list[exp.Expression] = [
                # partition equality is plain `=`: a NULL dimension has no comparable period
                exp.EQ(this=col(d, alias), expression=self.cur(d))
                for d in partition
            ]
            conds.append(
                exp.EQ(
                    this=col(t, alias),
                    expression=self.dialect.shift(self.cur(t), signed, gran),
                )
            )
            sel = join(
                sel,
                table_aliased(table(self.base), alias),
                "LEFT",
                and_all(conds),
            )
        return sel

    # -- ordered windows ----------------------------------------------------------------------
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

    def frame_expr(self, wm: WindowMetric, w: FrameWindow) -> exp.Expression:
        v = self.masked(wm, self.cur(wm.base_column))
        if w.function == "count":
            return self.framed(wm, w, self.frame_count(wm))
        if w.function not in _TWO_ARG:
            return self.framed(wm, w, _AGGS[w.function](this=v))
        assert wm.second_column is not None
        second = self.masked(wm, self.cur(wm.second_column))
        out = self.framed(wm, w, _TWO_ARG[w.function](this=second, expression=v))
        if w.function != "corr":
            return out

        # CORR is undefined when either series has no variance in the frame: NULL, as the SQL
        # standard and PostgreSQL say (DuckDB alone returns NaN).
        def paired(x: exp.Expression, other: exp.Expression) -> exp.Expression:
            present = exp.Not(this=exp.Is(this=clone(other), expression=exp.Null()))
            return exp.Case(ifs=[exp.If(this=present, true=clone(x))])

        varies = [
            exp.GT(
                this=self.framed(wm, w, exp.VariancePop(this=paired(x, other))),
                expression=exp.Literal.number(0),
            )
            for x, other in ((v, second), (second, v))
        ]
        return exp.Case(ifs=[exp.If(this=exp.And(this=varies[0], expression=varies[1]), true=out)])

    def framed(self, wm: WindowMetric, w: FrameWindow, func: exp.Expression) -> exp.Expression:
        """`func` OVER the metric's frame (partition, reset key, order, ROWS/RANGE bounds)."""
        partition: list[exp.Expression] = [self.cur(p) for p in wm.partition]
        if w.scope == "partition":
            return self.window(func, partition, None, None)
        if w.reset is not None:
            partition.append(self.dialect.bucket(self.cur(self.stage.time_key), w.reset))  # type: ignore[arg-type]
        order = self.order_keys(wm, w.order.by, w.order.direction, w.order.nulls)
        start: str | exp.Expression = (
            "UNBOUNDED" if w.preceding is None else exp.Literal.number(w.preceding)
        )
        spec = exp.WindowSpec(
            kind="RANGE" if w.units == "range" else "ROWS",
            start=start,
            start_side="PRECEDING",
            end="CURRENT ROW",
        )
        out: exp.Expression = self.window(func, partition, order, spec)
        if w.require_full_window and w.preceding is not None:
            count = self.window(
                self.frame_count(wm),
                [clone(p) for p in partition],
                [clone(o) for o in order],
                clone(spec),
            )
            full = exp.GTE(this=count, expression=exp.Literal.number(w.preceding + 1))
            out = exp.Case(ifs=[exp.If(this=full, true=out)])
        return out

    def rank_expr(self, wm: WindowMetric, w: RankWindow) -> exp.Expression:
        if w.function == "ntile":
            func: exp.Expression = exp.Ntile(this=exp.Literal.number(w.buckets or 1))
        else:
            func = _RANKS[w.function]()
        order = self.order_keys(wm, w.order.by, w.order.direction, w.order.nulls)
        return self.window(func, [self.cur(p) for p in wm.partition], order, None)

    def value_expr(self, wm: WindowMetric, w: ValueWindow) -> exp.Expression:
        v = self.cur(wm.base_column)
        if w.function == "first_value":
            func: exp.Expression = exp.FirstValue(this=v)
        elif w.function == "last_value":
            func = exp.LastValue(this=v)
        else:
            func = exp.NthValue(this=v, offset=exp.Literal.number(w.n or 1))
        order = self.order_keys(wm, w.order.by, w.order.direction, w.order.nulls)
        spec = exp.WindowSpec(
            kind="ROWS",
            start="UNBOUNDED",
            start_side="PRECEDING",
            end="UNBOUNDED",
            end_side="FOLLOWING",
        )
        return self.window(func, [self.cur(p) for p in wm.partition], order, spec)

    def metric_expr(self, wm: WindowMetric) -> exp.Expression:
        """The window family's renderer, looked up by the spec's type (one table)."""
        return FAMILY_SQL[type(wm.spec)](self, wm, wm.spec)

    # -- the statement -------------------------------------------------------------------------
    def render(self) -> exp.Select:
        """The `win` CTE body: dims, carried metrics and window metrics over `base AS c`."""
        r, stage = self.r, self.stage
        win = exp.Select()
        for d in stage.dims:
            win = win.select(aliased(self.cur(d), d), copy=False)
        for name in stage.passed:
            win = win.select(aliased(self.cur(name), name), copy=False)
        for m in stage.carried:
            e = r.substitute(m.formula, lambda n: self.cur(n))
            win = win.select(aliased(r.fill(e, m), m.name), copy=False)
        offset_partition: tuple[str, ...] = ()
        for wm in stage.metrics:
            win = win.select(aliased(self.metric_expr(wm), wm.name), copy=False)
            if wm.spec.shift is not None:  # the offset self-joins partition like this
                offset_partition = wm.partition
        win = win.from_(table_aliased(table(self.base), CUR), copy=False)
        if self.shift_alias:
            win = self.offset_joins(win, offset_partition)
        return win


# window family (dosi.ext spec type) -> its renderer: the one dispatch point for SQL
FAMILY_SQL: dict[type, Callable[[_StageRenderer, WindowMetric, Any], exp.Expression]] = {
    OffsetWindow: _StageRenderer.offset_expr,
    FrameWindow: _StageRenderer.frame_expr,
    RankWindow: _StageRenderer.rank_expr,
    ValueWindow: _StageRenderer.value_expr,
}


def render_window(r: Renderer, stage: Window, base: str = BASE) -> exp.Select:
    """The window stage's SELECT over the CTE `base` (the stage's aggregate)."""
    return _StageRenderer(r, stage, base).render()


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
    return preds
