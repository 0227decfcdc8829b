"""SQL of a D-CONVERSION branch (plan/conversion.py): conversion events attributed to base
events, grouped by the base events' dimensions.

    SELECT <dims>, <conversion aggregate over __matched> FROM (
      SELECT <dims over the base rows> AS <dim outputs>, <conversion columns> AS __cv_*,
             ROW_NUMBER() OVER (PARTITION BY __conversion.__conv_row
                                ORDER BY <base time> DESC, <dims>) AS __conv_rank
      FROM base JOIN ... INNER JOIN (
        SELECT conv.*, ROW_NUMBER() OVER (ORDER BY <entity>, <time>) AS __conv_row
        FROM conv WHERE <conversion event>
      ) AS __conversion
        ON <entity> = <entity> AND <base time> <= <conversion time>
           [AND <base time> > <conversion time> - <window>] [AND <property> = <property>]
      WHERE <the branch's filters> AND <base event>
    ) AS __matched WHERE __conv_rank = 1 GROUP BY <dims>

Numbering the conversion rows gives each event an identity (two identical rows are two
events) on every engine, where MetricFlow generates a UUID. The conversion side is read under
its own alias, so base and conversion events may come from one dataset (a funnel over one
events table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from dosi.plan.records import Branch, BranchDim
from dosi.sql.util import aliased, and_all, clone, col, join, table_aliased

if TYPE_CHECKING:
    from dosi.ir.model import ModelIr
    from dosi.sql.dialects import Dialect

Lookup = Callable[[str], exp.Expression]
Build = Callable[[Lookup], exp.Expression]

CONVERSION = "__conversion"
MATCHED = "__matched"
ROW = "__conv_row"
RANK = "__conv_rank"
_TIMESTAMP = exp.DataType.build("TIMESTAMP")


class Renderer(Protocol):
    """What the conversion shape uses of `dosi.sql.render.Renderer`."""

    model: ModelIr
    dialect: Dialect

    def dim_expr(self, d: BranchDim) -> exp.Expression: ...
    def from_clause(self, branch: Branch, select: exp.Select) -> exp.Select: ...


def _on_side(e: exp.Expression, dataset: str) -> exp.Expression:
    """A conversion-side expression (columns qualified by its dataset) under the alias."""

    def repl(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.table == dataset:
            return col(n.name, CONVERSION)
        return n

    return clone(e).transform(repl, copy=False)


def _times(r: Renderer, base: BranchDim, conv: BranchDim) -> tuple[exp.Expression, exp.Expression]:
    """Both event times as compared: a DATE beside a timestamp is read as its midnight."""
    b = r.dim_expr(base)
    c = r.dim_expr(replace(conv, expr=conv.expr))
    if (base.datatype == "Date") != (conv.datatype == "Date"):
        if base.datatype == "Date":
            b = exp.Cast(this=b, to=_TIMESTAMP.copy())
        else:
            c = exp.Cast(this=c, to=_TIMESTAMP.copy())
    return b, c


def conversion_grouped(r: Renderer, b: Branch, columns: Sequence[tuple[str, Build]]) -> exp.Select:
    """SELECT dims, `columns` over the attributed conversion events (builders as in
    `Renderer.grouped`: each makes its value from a measure lookup)."""
    plan = b.conversion
    assert plan is not None
    cds = r.model.datasets[plan.conversion_dataset]
    side = cds.name
    # the conversion events, numbered
    rows = exp.Select().select(exp.Column(this=exp.Star(), table=exp.to_identifier(side)))
    conv_time = r.dim_expr(plan.conversion_time)
    number = exp.Window(
        this=exp.RowNumber(),
        order=exp.Order(
            expressions=[exp.Ordered(this=clone(plan.entity[1])), exp.Ordered(this=conv_time)]
        ),
    )
    rows = rows.select(aliased(number, ROW), copy=False)
    rows = rows.from_(table_aliased(clone(cds.source), side), copy=False)
    if plan.conversion_event is not None:
        rows = rows.where(clone(plan.conversion_event), copy=False)
    # base events joined to them
    base_t, conv_t = _times(r, plan.base_time, plan.conversion_time)
    conv_t = _on_side(conv_t, side)
    conds: list[exp.Expression] = [
        exp.EQ(this=clone(plan.entity[0]), expression=_on_side(plan.entity[1], side)),
        exp.LTE(this=base_t, expression=conv_t),
    ]
    if plan.window is not None:
        earliest = r.dialect.shift(clone(conv_t), -plan.window.count, plan.window.granularity)
        conds.append(exp.GT(this=clone(base_t), expression=earliest))
    conds.extend(exp.EQ(this=clone(p), expression=_on_side(q, side)) for p, q in plan.properties)
    measure = r.model.measures[plan.measure]
    used = sorted({c.name for c in measure.expr.find_all(exp.Column) if c.table == side})
    inner = exp.Select()
    for d in b.dims:
        inner = inner.select(aliased(r.dim_expr(d), d.output), copy=False)
    for name in used:
        inner = inner.select(aliased(col(name, CONVERSION), f"__cv_{name}"), copy=False)
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[col(ROW, CONVERSION)],
        order=exp.Order(
            expressions=[
                exp.Ordered(this=clone(base_t), desc=True),
                *(exp.Ordered(this=r.dim_expr(d)) for d in b.dims),
            ]
        ),
    )
    inner = inner.select(aliased(rank, RANK), copy=False)
    inner = r.from_clause(replace(b, conversion=None), inner)
    inner = join(inner, table_aliased(exp.Subquery(this=rows), CONVERSION), "INNER", and_all(conds))
    if plan.base_event is not None:
        inner = inner.where(clone(plan.base_event), copy=False)

    def matched(n: str) -> exp.Expression:
        def repl(x: exp.Expression) -> exp.Expression:
            if isinstance(x, exp.Column) and x.table == side:
                return col(f"__cv_{x.name}", MATCHED)
            return x

        return clone(r.model.measures[n].expr).transform(repl, copy=False)

    out = exp.Select()
    for d in b.dims:
        out = out.select(aliased(col(d.output, MATCHED), d.output), copy=False)
    for name, build in columns:
        out = out.select(aliased(build(matched), name), copy=False)
    out = out.from_(table_aliased(exp.Subquery(this=inner), MATCHED), copy=False)
    out = out.where(exp.EQ(this=col(RANK, MATCHED), expression=exp.Literal.number(1)), copy=False)
    if b.dims:
        out = out.group_by(*(col(d.output, MATCHED) for d in b.dims), copy=False)
    return out
