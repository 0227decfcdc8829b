"""SQL of D-WINDOW `period_value` sampling (issue 22 item 7, plan/period_sample.py): the rows at
the accumulation grain folded to one row per coarser bucket of the query and its other
group-by values, holding the first, last or average running value of the bucket (or, for an
offset, the sum of its values: 1.15).

    SELECT b, dims, MAX(CASE WHEN __period_first = 1 THEN m END),   -- first
                    MAX(CASE WHEN __period_last = 1 THEN m END),    -- last
                    AVG(m)                                          -- average
                    SUM(m)                                -- an offset by date part
    FROM (SELECT bucket(key) AS b, dims, m,
                 ROW_NUMBER() OVER (PARTITION BY bucket(key), dims ORDER BY key) AS __period_first,
                 ROW_NUMBER() OVER (... ORDER BY key DESC) AS __period_last
          FROM rows)
    GROUP BY b, dims

The first and last rows are numbered, never read with FIRST_VALUE / LAST_VALUE: engines
disagree on those (ClickHouse skips NULLs, frame defaults cut LAST_VALUE short), while a row
number is the same everywhere, and the key is unique within a partition (one row per bucket of
the grain), so the pick never depends on the warehouse's peer order. The average is AVG of the
non-NULL running values.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import ident
from dosi.plan.records import PeriodSample
from dosi.sql.render import Renderer
from dosi.sql.util import col

FIRST, LAST, START = "__period_first", "__period_last", "__period_start"
_INNER = "period_rows"


def period_sample_sql(r: Renderer, spec: PeriodSample, rows: exp.Select) -> exp.Select:
    """One row per coarser bucket over `rows` (a SELECT of the accumulation-grain rows)."""
    buckets = [r.bucket(col(spec.key), g, spec.datatype) for _, g in spec.buckets]
    partition = [*buckets, *(col(d) for d in spec.dims)]
    inner = exp.Select()
    for (out, _), b in zip(spec.buckets, buckets, strict=True):
        inner = inner.select(exp.alias_(b.copy(), ident(out)), copy=False)
    for name in (*spec.dims, *(m for m, _ in spec.picks)):
        inner = inner.select(col(name), copy=False)
    # the bucket's first day: a key that starts one of the query's buckets (the first day of
    # a week-of-a-month group starts its week or its month)
    starts = [exp.EQ(this=col(spec.key), expression=b.copy()) for b in buckets]
    start_day = exp.Case(
        ifs=[exp.If(this=exp.or_(*starts), true=exp.Literal.number(1))],
        default=exp.Literal.number(0),
    )
    inner = inner.select(exp.alias_(start_day, ident(START)), copy=False)
    for alias, desc in ((FIRST, False), (LAST, True)):
        number = exp.Window(
            this=exp.RowNumber(),
            partition_by=[p.copy() for p in partition],
            order=exp.Order(expressions=[exp.Ordered(this=col(spec.key), desc=desc)]),
        )
        inner = inner.select(exp.alias_(number, ident(alias)), copy=False)
    inner = inner.from_(
        exp.Subquery(this=rows, alias=exp.TableAlias(this=ident(_INNER))), copy=False
    )
    outer = exp.Select()
    keys = [*(out for out, _ in spec.buckets), *spec.dims]
    for name in keys:
        outer = outer.select(col(name), copy=False)
    for metric, pick in spec.picks:
        outer = outer.select(exp.alias_(_pick(col(metric), pick), ident(metric)), copy=False)
    outer = outer.from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=ident("sampled"))), copy=False
    )
    outer = outer.group_by(*(col(k) for k in keys), copy=False)
    if not (spec.drop_empty and spec.picks):
        return outer
    # outside the GROUP BY: engines resolve a HAVING name to the output alias differently
    held = [exp.Not(this=exp.Is(this=col(m), expression=exp.Null())) for m, _ in spec.picks]
    kept = exp.Select().select(exp.Star(), copy=False)
    kept = kept.from_(exp.Subquery(this=outer, alias=exp.TableAlias(this=ident("picked"))))
    return kept.where(exp.or_(*held), copy=False)


def _pick(value: exp.Expression, pick: str) -> exp.Expression:
    if pick == "average":
        return exp.Avg(this=value)
    if pick == "sum":  # an offset's day values (1.15)
        return exp.Sum(this=value)
    if pick == "first_day":  # an offset's value on the bucket's first day (1.15)
        row = START
        hit = exp.EQ(this=col(row), expression=exp.Literal.number(1))
        return exp.Max(this=exp.Case(ifs=[exp.If(this=hit, true=value)]))
    row = FIRST if pick == "first" else LAST
    hit = exp.EQ(this=col(row), expression=exp.Literal.number(1))
    return exp.Max(this=exp.Case(ifs=[exp.If(this=hit, true=value)]))
