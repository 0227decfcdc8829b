"""The statement that fills a rollup (issue 28 item 1): the fact dataset grouped by the
rollup's dimensions, the keys of its COUNT DISTINCT measures and its time field's bucket,
each other measure's own aggregate per group. The stored values are the partials
`dosi.plan.rollup_match` rolls up again."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from sqlglot import exp

from dosi.compiler.rollup import distinct_key
from dosi.ir.model import ModelIr
from dosi.ir.rollup import RollupIr
from dosi.sql.calendar import grain_bucket
from dosi.sql.dialects import Dialect
from dosi.sql.util import aliased, clone, table_aliased


def reads_only_stored(tree: exp.Expression, served: Mapping[str, RollupIr]) -> bool:
    """The safety net of aggregate awareness: every column the statement reads through a
    served dataset's alias is a stored rollup column (else the fact table answers)."""
    aliases = {**served, **{d: r for r in served.values() for _, d, _ in r.joined}}
    for c in tree.find_all(exp.Column):
        r = aliases.get(c.table)
        if r is not None and c.name not in r.columns:
            return False
    return True


def reads_only_rollups(tree: exp.Expression, tables: Mapping[str, exp.Table]) -> bool:
    """The statement reads no warehouse table at all, only `tables` (rollups), its own CTEs
    and table functions: it can run where the rollups are stored (an embedded store serving
    a query of another engine)."""
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    stored = {(t.catalog, t.db, t.name) for t in tables.values()}
    for t in tree.find_all(exp.Table):
        if not isinstance(t.this, exp.Identifier):
            continue  # a table function (a spine's series)
        if (t.catalog, t.db, t.name) in stored or (not t.db and t.name in ctes):
            continue
        return False
    return True


def _since_literal(datatype: str | None, since: dt.date) -> exp.Expression:
    if datatype in ("Date", None):
        return exp.cast(exp.Literal.string(since.isoformat()), exp.DataType.build("DATE"))
    stamp = dt.datetime.combine(since, dt.time()).isoformat(sep=" ")
    return exp.cast(exp.Literal.string(stamp), exp.DataType.build("TIMESTAMP"))


def kept_partitions(model: ModelIr, r: RollupIr, since: dt.date) -> exp.Expression:
    """Incremental refresh: the stored rows older than `since` (kept as they are)."""
    assert r.time is not None
    f = model.datasets[r.dataset].fields[r.time]
    stored = exp.column(r.time, quoted=True)
    return exp.LT(this=stored, expression=_since_literal(f.datatype, since))


def rollup_select(
    model: ModelIr, r: RollupIr, dialect: Dialect, since: dt.date | None = None
) -> exp.Select:
    """The rollup's rows, all of them or (`since`, an incremental refresh) those of the time
    buckets from `since` on (`since` is on a bucket boundary: whole buckets only)."""
    ds = model.datasets[r.dataset]
    sel = exp.Select()
    groups: list[exp.Expression] = []
    for name in r.dimensions:
        e = clone(ds.fields[name].expr)
        sel = sel.select(aliased(e, name), copy=False)
        groups.append(clone(ds.fields[name].expr))
    rels = {rel.name: rel for rel in model.relationships}
    for _, other, fname in r.joined:  # many-to-one: the planner's join, its join type
        e = clone(model.datasets[other].fields[fname].expr)
        sel = sel.select(aliased(e, f"{other}__{fname}"), copy=False)
        groups.append(clone(e))
    for m, col in r.keys:
        key = distinct_key(model.measures[m])
        assert key is not None  # checked by dosi.compiler.rollup
        sel = sel.select(aliased(clone(key), col), copy=False)
        groups.append(clone(key))
    if r.time is not None:
        assert r.grain is not None
        f = ds.fields[r.time]
        bucket = grain_bucket(dialect, clone(f.expr), r.grain, f.datatype, model.calendar)
        groups.append(bucket.copy())
        sel = sel.select(aliased(bucket, r.time), copy=False)
    for m in r.stored_measures:
        sel = sel.select(aliased(clone(model.measures[m].expr), m), copy=False)
    for col in r.row_columns:  # a row number under each key name: the served self-join
        number = exp.Window(this=exp.RowNumber(), over="OVER")
        sel = sel.select(aliased(number, col), copy=False)
    sel = sel.from_(table_aliased(clone(ds.source), ds.name), copy=False)
    for rel in dict.fromkeys(j[0] for j in r.joined):
        rr = rels[rel]
        target = model.datasets[rr.to_dataset]
        on = exp.and_(
            *(
                exp.EQ(this=clone(a), expression=clone(b))
                for a, b in zip(rr.from_exprs, rr.to_exprs, strict=True)
            )
        )
        sel = sel.join(
            table_aliased(clone(target.source), target.name),
            on=on,
            join_type=rr.join_type.upper(),
            copy=False,
        )
    if since is not None and r.time is not None:
        f = ds.fields[r.time]
        sel = sel.where(
            exp.GTE(this=clone(f.expr), expression=_since_literal(f.datatype, since)), copy=False
        )
    if groups:
        sel = sel.group_by(*groups, copy=False)
    return sel
