"""SQL of a D-SEMI branch (plan/semi_additive.py chose the period): the branch's rows joined to
the snapshot each period keeps.

    ... FROM fact JOIN ... INNER JOIN (
        SELECT <period> AS __sa_period, <grouping> AS __sa_g0, MAX(<time>) AS __sa_time
        FROM fact JOIN ... WHERE <the branch's filters> GROUP BY <period>, <grouping>
    ) AS __snapshot ON <time> = __snapshot.__sa_time AND <grouping> IS NOT DISTINCT FROM
    __snapshot.__sa_g0 WHERE <the branch's filters>

`first` takes MIN; `min` / `max` rank each period's snapshot times by the measure's value at
that time (the latest time wins a tie) and keep the first. The time equality carries the
period (a snapshot time lies in one period), so the period is never a join key. A row whose
time is NULL is no snapshot: it never matches.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from dosi.plan.records import Branch, BranchDim, SemiAdditivePlan
from dosi.sql.util import aliased, and_all, clone, col, join, table_aliased

if TYPE_CHECKING:
    from dosi.ir.model import ModelIr
    from dosi.sql.dialects import Dialect

SNAPSHOT = "__snapshot"
TIME = "__sa_time"
PERIOD = "__sa_period"
VALUE = "__sa_value"
RANK = "__sa_rank"


class Renderer(Protocol):
    """What the snapshot join uses of `dosi.sql.render.Renderer`."""

    model: ModelIr
    dialect: Dialect

    def dim_expr(self, d: BranchDim) -> exp.Expression: ...
    def from_clause(self, branch: Branch, select: exp.Select) -> exp.Select: ...


def _group(i: int) -> str:
    return f"__sa_g{i}"


def snapshot_join(r: Renderer, b: Branch, select: exp.Select) -> exp.Select:
    """`select` (FROM the branch's tables) INNER JOINed to the snapshots it keeps."""
    plan = b.semi_additive
    assert plan is not None
    derived = snapshot_table(r, plan, replace(b, semi_additive=None))
    conds: list[exp.Expression] = [
        exp.EQ(this=r.dim_expr(plan.snapshot), expression=col(TIME, SNAPSHOT))
    ]
    conds.extend(
        exp.NullSafeEQ(this=clone(g), expression=col(_group(i), SNAPSHOT))
        for i, g in enumerate(plan.groupings)
    )
    source = table_aliased(exp.Subquery(this=derived), SNAPSHOT)
    select = join(select, source, "INNER", and_all(conds))
    if plan.kept is not None:  # empty_buckets: drop, among the picked rows only
        select = select.where(clone(plan.kept), copy=False)
    return select


def snapshot_table(r: Renderer, plan: SemiAdditivePlan, b: Branch) -> exp.Select:
    """One row per (period, window grouping): the snapshot time it keeps."""
    keys: list[tuple[str, exp.Expression]] = []
    if plan.period is not None:
        keys.append((PERIOD, r.dim_expr(plan.period)))
    keys.extend((_group(i), clone(g)) for i, g in enumerate(plan.groupings))
    time = r.dim_expr(plan.snapshot)
    if plan.value_measure is None:
        agg = exp.Max if plan.ir.snapshot == "last" else exp.Min
        sel = exp.Select()
        for name, e in keys:
            sel = sel.select(aliased(e, name), copy=False)
        sel = sel.select(aliased(agg(this=time), TIME), copy=False)
        sel = r.from_clause(b, sel)
        if keys:
            sel = sel.group_by(*(clone(e) for _, e in keys), copy=False)
        return sel
    # by value: the measure at each snapshot time, ranked within the period
    values = exp.Select()
    for name, e in keys:
        values = values.select(aliased(clone(e), name), copy=False)
    values = values.select(aliased(clone(time), TIME), copy=False)
    measure = clone(r.model.measures[plan.value_measure].expr)
    values = values.select(aliased(measure, VALUE), copy=False)
    values = r.from_clause(b, values)
    values = values.group_by(*(clone(e) for _, e in keys), clone(time), copy=False)
    order = [
        *r.dialect.ordered(col(VALUE), plan.ir.snapshot == "max", "last"),
        *r.dialect.ordered(col(TIME), True, "last"),
    ]
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[col(name) for name, _ in keys] or None,
        order=exp.Order(expressions=order),
    )
    ranked = exp.Select().select(*(col(name) for name, _ in keys), col(TIME), copy=False)
    ranked = ranked.select(aliased(rank, RANK), copy=False)
    ranked = ranked.from_(table_aliased(exp.Subquery(this=values), "__sa_values"), copy=False)
    out = exp.Select().select(*(col(name) for name, _ in keys), col(TIME), copy=False)
    out = out.from_(table_aliased(exp.Subquery(this=ranked), "__sa_ranked"), copy=False)
    return out.where(exp.EQ(this=col(RANK), expression=exp.Literal.number(1)), copy=False)
