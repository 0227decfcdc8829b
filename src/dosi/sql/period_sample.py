"""SQL of D-WINDOW `period_value` sampling (issue 22 item 7, plan/period_sample.py): the rows at
the accumulation grain, one kept per coarser bucket of the query and its other group-by values,
holding the first, last or average running value of the bucket.

    SELECT <buckets>, <dims>, <picks> FROM (
      SELECT bucket(key) AS b, dims,
             FIRST_VALUE(m) OVER (PARTITION BY b, dims ORDER BY key [DESC] <whole partition>),
             AVG(m) OVER (PARTITION BY b, dims),
             ROW_NUMBER() OVER (PARTITION BY b, dims ORDER BY key) AS __period_row
      FROM rows) WHERE __period_row = 1

`last` is the first value in descending key order, so no dialect's LAST_VALUE frame default
can cut it short; the key is unique within a partition (one row per bucket of the grain), so
the pick never depends on the warehouse's peer order. Window functions only: every dialect
with window metrics runs it.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.plan.records import PeriodSample
from dosi.sql.render import Renderer
from dosi.sql.util import col

ROW = "__period_row"
_INNER = "period_rows"


def period_sample_sql(r: Renderer, spec: PeriodSample, rows: exp.Select) -> exp.Select:
    """One row per coarser bucket over `rows` (a SELECT of the accumulation-grain rows)."""
    key = col(spec.key)
    buckets = [r.bucket(col(spec.key), g, spec.datatype) for _, g in spec.buckets]
    partition = [*buckets, *(col(d) for d in spec.dims)]
    inner = exp.Select()
    for (out, _), b in zip(spec.buckets, buckets, strict=True):
        inner = inner.select(exp.alias_(b.copy(), ident(out)), copy=False)
    for d in spec.dims:
        inner = inner.select(col(d), copy=False)
    for metric, pick in spec.picks:
        inner = inner.select(
            exp.alias_(_pick(col(metric), pick, partition, key), ident(metric)), copy=False
        )
    number = _over(exp.RowNumber(), partition, key, desc=False, whole=False)
    inner = inner.select(exp.alias_(number, ident(ROW)), copy=False)
    inner = inner.from_(
        exp.Subquery(this=rows, alias=exp.TableAlias(this=ident(_INNER))), copy=False
    )
    outer = exp.Select()
    for out, _ in spec.buckets:
        outer = outer.select(col(out), copy=False)
    for name in (*spec.dims, *(m for m, _ in spec.picks)):
        outer = outer.select(col(name), copy=False)
    outer = outer.from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("sampled"))), copy=False
    )
    return outer.where(exp.EQ(this=col(ROW), expression=exp.Literal.number(1)), copy=False)


def _pick(
    value: exp.Expression, pick: str, partition: list[exp.Expression], key: exp.Expression
) -> exp.Expression:
    if pick == "average":
        w = exp.Window(this=exp.Avg(this=value), partition_by=[p.copy() for p in partition])
        return w
    return _over(exp.FirstValue(this=value), partition, key, desc=pick == "last", whole=True)


def _over(
    func: exp.Expression,
    partition: list[exp.Expression],
    key: exp.Expression,
    desc: bool,
    whole: bool,
) -> exp.Window:
    w = exp.Window(
        this=func,
        partition_by=[p.copy() for p in partition],
        order=exp.Order(expressions=[exp.Ordered(this=key.copy(), desc=desc)]),
    )
    if whole:
        w.set(
            "spec",
            exp.WindowSpec(
                kind="ROWS",
                start="UNBOUNDED",
                start_side="PRECEDING",
                end="UNBOUNDED",
                end_side="FOLLOWING",
            ),
        )
    return w
