"""SQL of the Densify node (plan/nodes/densify.py): rows joined to a time spine.

    WITH <p>_rows   AS (<the rows>),
         <p>_bounds AS (SELECT lo, hi [FROM <p>_rows]),         -- literals, or the data's
         <p>_steps  AS (<the dialect's series of steps from lo to hi>),
         <p>_spine  AS (SELECT DISTINCT <bucket(t)> AS k, ... FROM <p>_steps WHERE t < hi),
         <p>_keys   AS (SELECT DISTINCT <other dims> FROM <p>_rows),   -- crossed only
         <p>_out    AS (SELECT sp.k, ck.d, COALESCE(r.c, fill) ...
                        FROM <p>_spine sp CROSS JOIN <p>_keys ck
                        LEFT JOIN <p>_rows r ON r.k = sp.k AND r.d <=> ck.d
                        UNION ALL SELECT ... FROM <p>_rows r WHERE r.k IS NULL)  -- no range
    SELECT <columns> FROM <p>_out

Each step is bucketed exactly as the aggregate buckets the data (`Renderer.bucket`, on the query's calendar), so a spine
bucket equals the data's; the steps come from `Dialect.spine_steps` (a series function or a
recursive WITH), or from the model's time-spine table.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from dosi.plan.nodes import Densify
from dosi.plan.records import Spine
from dosi.sql.dialects import Dialect
from dosi.sql.render import Renderer
from dosi.sql.util import aliased, and_all, clone, col, cte_name, join, number, table

_SPINE, _KEYS, _ROW = "sp", "ck", "r"


def densify_sql(r: Renderer, node: Densify, rows: exp.Select, prefix: str) -> exp.Select:
    """`rows` (its CTEs lifted onto the result) densified over the node's spine."""
    dia = r.dialect
    spine = node.spine
    names = {k: f"{prefix}_{k}" for k in ("rows", "bounds", "steps", "spine", "keys", "out")}
    ctes = _lift(rows)
    ctes.append((names["rows"], rows))
    ctes.append((names["bounds"], _bounds(r, spine, names["rows"])))
    ctes.append((names["steps"], _steps(r, spine, names["bounds"], names["steps"])))
    ctes.append((names["spine"], _buckets(r, spine, names["steps"])))
    crossed = [d for d in node.others] if node.cross else []
    if crossed:
        ctes.append((names["keys"], _combinations(dia, node, names["rows"], names["bounds"])))
    ctes.append((names["out"], _rows_out(node, names, crossed)))
    dims = _dims(node)
    out = exp.Select().select(*(col(c) for c in (*dims, *_values(node))), copy=False)
    out = out.from_(table(names["out"]), copy=False)
    for name, body in ctes:
        out = out.with_(cte_name(name), as_=body, copy=False)
    return out


def _dims(node: Densify) -> tuple[str, ...]:
    return node.dims


def _values(node: Densify) -> tuple[str, ...]:
    return (*node.columns, *((node.present,) if node.present else ()))


def _literal(dia: Dialect, value: dt.date | dt.datetime) -> exp.Expression:
    return dia.time_literal(value, None)


def _bounds(r: Renderer, spine: Spine, rows: str) -> exp.Select:
    """One row `lo, hi`: the first step (the start's bucket at the step grain) and the end
    (exclusive); a missing side is the data's first bucket / the one after its last."""
    dia = r.dialect
    driver: exp.Expression = col(spine.driver)
    whole = spine.table is not None and spine.table.bounds == "table"
    if whole:  # a missing side is the spine table's own first / last row (MetricFlow)
        assert spine.table is not None
        driver = clone(spine.table.expr)
    if spine.start is not None:
        first = _literal(dia, spine.start)
        lo = r.bucket(first, spine.step, None)  # on the query's calendar (week start)
    else:
        lo = exp.Min(this=driver)
    if spine.end is not None:
        hi = _literal(dia, spine.end)
    else:
        hi = dia.shift(exp.Max(this=clone(driver)), 1, spine.step)
        for n, grain in spine.beyond:  # densify covered: a back offset's values after the data
            hi = dia.shift(hi, n, grain)
    sel = exp.Select().select(
        aliased(dia.as_timestamp(lo), "lo"), aliased(dia.as_timestamp(hi), "hi"), copy=False
    )
    if spine.start is None or spine.end is None:
        if whole:
            assert spine.table is not None
            ds = r.model.datasets[spine.table.dataset]
            source = clone(ds.source)
            source.set("alias", exp.TableAlias(this=exp.to_identifier(ds.name)))
            return sel.from_(source, copy=False)
        sel = sel.from_(table(rows), copy=False)
    return sel


def _steps(r: Renderer, spine: Spine, bounds: str, name: str) -> exp.Query:
    """Every step `t` with the end `hi` beside it: the dialect's series, or the time-spine
    table's rows between the bounds."""
    dia = r.dialect
    if spine.table is None:
        return dia.spine_steps(bounds, name, spine.step)
    ds = r.model.datasets[spine.table.dataset]
    t = dia.as_timestamp(clone(spine.table.expr))
    sel = exp.Select().select(aliased(t, "t"), col("hi", "b"), copy=False)
    source = clone(ds.source)
    source.set("alias", exp.TableAlias(this=exp.to_identifier(ds.name)))
    sel = sel.from_(source, copy=False)
    bounds_ref = table(bounds)
    bounds_ref.set("alias", exp.TableAlias(this=exp.to_identifier("b")))
    sel = join(sel, bounds_ref, "CROSS")
    keep = and_all(
        [
            exp.GTE(this=clone(t), expression=col("lo", "b")),
            exp.LT(this=clone(t), expression=col("hi", "b")),
        ]
    )
    assert keep is not None
    return sel.where(keep, copy=False)


def _buckets(r: Renderer, spine: Spine, steps: str) -> exp.Select:
    """The distinct buckets of the steps below the end, one column per spine key, bucketed
    as the aggregate buckets the data (Renderer.bucket: the query's calendar)."""
    sel = exp.Select().select(
        *(aliased(r.bucket(col("t"), k.grain, k.datatype), k.output) for k in spine.keys),
        copy=False,
    )
    sel = sel.distinct().from_(table(steps), copy=False)
    return sel.where(exp.LT(this=col("t"), expression=col("hi")), copy=False)


def _combinations(dia: Dialect, node: Densify, rows: str, bounds: str) -> exp.Expression:
    """The observed combinations of the other dims (within the node's range, when set); one
    row of NULLs when none is observed, so every spine bucket is still a row."""
    sel = exp.Select().select(*(col(d) for d in node.others), copy=False).distinct()
    sel = sel.from_(table(rows), copy=False)
    within = node.keys_within
    cond = None
    if within is not None:
        t = col(node.spine.driver)
        preds: list[exp.Expression] = []
        if within.start is not None:
            preds.append(exp.GTE(this=t, expression=_literal(dia, within.start)))
        if within.end is not None:
            preds.append(exp.LT(this=clone(t), expression=_literal(dia, within.end)))
        cond = and_all(preds)
        if cond is not None:
            sel = sel.where(cond, copy=False)
    seen = exp.Select().select(exp.Literal.number(1), copy=False).from_(table(rows), copy=False)
    if cond is not None:
        seen = seen.where(clone(cond), copy=False)
    none = exp.Select().select(*(aliased(exp.Null(), d) for d in node.others), copy=False)
    none = none.from_(table(bounds), copy=False)
    none = none.where(exp.Not(this=exp.Exists(this=seen)), copy=False)
    return exp.Union(this=sel, expression=none, distinct=False)


def _rows_out(node: Densify, names: dict[str, str], crossed: list[str]) -> exp.Expression:
    keys = [k.output for k in node.spine.keys]
    fills = dict(node.fills)
    dense = exp.Select()
    for d in _dims(node):
        source = _SPINE if d in keys else (_KEYS if d in crossed else _ROW)
        dense = dense.select(aliased(col(d, source), d), copy=False)
    for c in node.columns:
        value: exp.Expression = col(c, _ROW)
        if c in fills:
            value = exp.Coalesce(this=value, expressions=[number(fills[c])])
        dense = dense.select(aliased(value, c), copy=False)
    driver = node.spine.driver
    if node.present:
        missing = exp.Is(this=col(driver, _ROW), expression=exp.Null())
        mark = exp.Case(
            ifs=[exp.If(this=missing, true=exp.Literal.number(0))],
            default=exp.Literal.number(1),
        )
        dense = dense.select(aliased(mark, node.present), copy=False)
    dense = dense.from_(_aliased_table(names["spine"], _SPINE), copy=False)
    if crossed:
        dense = join(dense, _aliased_table(names["keys"], _KEYS), "CROSS")
    on = [exp.EQ(this=col(k, _ROW), expression=col(k, _SPINE)) for k in keys]
    on += [exp.NullSafeEQ(this=col(d, _ROW), expression=col(d, _KEYS)) for d in crossed]
    dense = join(dense, _aliased_table(names["rows"], _ROW), "LEFT", and_all(on))
    if node.spine.start is not None or node.spine.end is not None:
        # the scan filtered the axis to the spine's range: no row has a NULL bucket, and the
        # rows are read once (a second reading would materialize them: bench/densify.py)
        return dense
    undated = exp.Select().select(*(col(c, _ROW) for c in (*_dims(node), *node.columns)))
    if node.present:
        undated = undated.select(aliased(exp.Literal.number(1), node.present), copy=False)
    undated = undated.from_(_aliased_table(names["rows"], _ROW), copy=False)
    undated = undated.where(exp.Is(this=col(driver, _ROW), expression=exp.Null()), copy=False)
    return exp.Union(this=dense, expression=undated, distinct=False)


def _aliased_table(name: str, alias: str) -> exp.Table:
    t = table(name)
    t.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return t


def _lift(sel: exp.Select) -> list[tuple[str, exp.Expression]]:
    ctes = sel.args.get("with_")
    sel.set("with_", None)
    return [(c.alias, c.this) for c in (ctes.expressions if ctes is not None else ())]
