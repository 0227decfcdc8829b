"""Rollup declarations (issue 28 item 1) -> checked `RollupIr`s.

A rollup file sits beside the model (`<model>.rollups.yaml`) or is handed to the Engine. It
is a DOSI file, not a DATUS payload, so no DATUS reader is involved:

    version: 1
    storage: rollups.duckdb          # optional; default: the file's name with .duckdb
    rollups:
      - name: orders_daily
        dataset: orders
        time: order_date              # optional: a time field of the dataset
        grain: day                    # hour, day, week, month, quarter or year
        dimensions: [channel, status] # its fields, or customers.segment (one join away)
        measures: [revenue, order_count]  # metrics (their measures) or measure names
        staleness_budget: 3600        # optional: seconds a stale build may still serve
        refresh: {every: 1h, partitions: 2, key: "SELECT max(id) FROM orders"}

`storage` may instead be `{schema: NAME}`: the rollup tables live in the warehouse. A file-level
`refresh` is every rollup's default. Every measure must be additive (SUM, COUNT, MIN, MAX), or
COUNT DISTINCT (its key is stored), and read only the rollup's dataset; anything else is a
structured `invalid_rollup` error naming the fix.
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlglot import exp

from dosi.compiler.rollup_rules import RollupError, bad, parse_refresh, parse_storage
from dosi.errors import bounded, closest
from dosi.ir.model import MeasureIr, ModelIr
from dosi.ir.rollup import ADDITIVE_AGGS, DERIVABLE_GRAINS, KEY_AGGS, RefreshRule, RollupIr

ROLLUP_FILE_KEYS = ("version", "storage", "refresh", "rollups")
ROLLUP_KEYS = (
    "name",
    "dataset",
    "time",
    "grain",
    "dimensions",
    "measures",
    "staleness_budget",
    "refresh",
)
__all__ = ["RollupError", "distinct_key", "parse_rollups"]


def parse_rollups(data: Any, model: ModelIr) -> tuple[RollupIr, ...]:
    """The declarations of a rollup file's parsed YAML, checked against the model."""
    if not isinstance(data, dict):
        raise _bad("a rollup file is a mapping with a `rollups` list")
    for key in data:
        if key not in ROLLUP_FILE_KEYS:
            raise _bad(f"unknown rollup file key `{bounded(key, 40)}`", list(ROLLUP_FILE_KEYS))
    parse_storage(data.get("storage"))
    default = parse_refresh(data.get("refresh"), RefreshRule(), "the rollup file")
    items = data.get("rollups") or []
    if not isinstance(items, list):
        raise _bad("`rollups` is a list of rollup declarations")
    out: list[RollupIr] = []
    for item in items:
        r = _rollup(item, model, default)
        if any(o.name == r.name for o in out):
            raise _bad(f"rollup `{r.name}` is declared twice")
        out.append(r)
    return tuple(out)


def _rollup(item: Any, model: ModelIr, default: RefreshRule) -> RollupIr:
    if not isinstance(item, dict):
        raise _bad("each rollup is a mapping {name, dataset, dimensions, measures, ...}")
    for key in item:
        if key not in ROLLUP_KEYS:
            raise _bad(f"unknown rollup key `{bounded(key, 40)}`", list(ROLLUP_KEYS))
    name = item.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise _bad(f"a rollup needs a `name` (letters, digits, _), got {bounded(name, 40)}")
    ds_name = item.get("dataset")
    if ds_name not in model.datasets:
        raise _bad(
            f"rollup `{name}`: unknown dataset {bounded(ds_name, 40)}",
            closest(str(ds_name), model.datasets) or list(model.datasets),
        )
    ds = model.datasets[ds_name]
    named = _names(item.get("dimensions"), f"rollup `{name}` dimensions")
    dims = tuple(d for d in named if "." not in d)
    joined = tuple(_joined(name, ds_name, d, model) for d in named if "." in d)
    for d in dims:
        if d not in ds.fields:
            raise _bad(
                f"rollup `{name}`: `{d}` is not a field of {ds_name}",
                closest(d, ds.fields) or list(ds.fields),
            )
        if ds.fields[d].time_format is not None:
            raise _bad(f"rollup `{name}`: `{d}` is stored encoded (D-FORMAT); not supported")
    time, grain = item.get("time"), item.get("grain")
    if time is not None:
        f = ds.fields.get(time) if isinstance(time, str) else None
        if f is None or not f.is_time:
            times = [n for n, x in ds.fields.items() if x.is_time]
            raise _bad(f"rollup `{name}`: `time` must be a time field of {ds_name}", times)
        if f.time_format is not None:
            raise _bad(f"rollup `{name}`: `{time}` is stored encoded (D-FORMAT); not supported")
        if grain not in DERIVABLE_GRAINS:
            raise _bad(
                f"rollup `{name}`: `grain` must be one of the grains", list(DERIVABLE_GRAINS)
            )
        if time in dims:
            raise _bad(f"rollup `{name}`: `{time}` is the time field; drop it from dimensions")
    elif grain is not None:
        raise _bad(f"rollup `{name}`: `grain` needs a `time` field")
    measures = _measures(
        name, ds_name, _names(item.get("measures"), f"rollup `{name}` measures"), model
    )
    keys = tuple((m, f"{m}__key") for m in measures if model.measures[m].agg in KEY_AGGS)
    rows = tuple(
        dict.fromkeys(
            c
            for rel in {j[0] for j in joined}
            for r in model.relationships
            if r.name == rel
            for c in (*r.from_columns, *r.to_columns)
        )
    )
    stored = [*measures, *(c for _, c in keys), *(f"{d}__{f}" for _, d, f in joined), *rows]
    clash = {*stored} & {*dims, time} or {c for c in stored if stored.count(c) > 1}
    if clash:
        raise _bad(f"rollup `{name}`: measure and field names clash ({sorted(clash)[0]})")
    signature = _signature(model, ds_name, dims, time, grain, measures, joined)
    budget = item.get("staleness_budget")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0
    ):
        raise _bad(f"rollup `{name}`: `staleness_budget` is a positive number of seconds")
    return RollupIr(
        name,
        ds_name,
        dims,
        measures,
        time,
        grain,
        signature,
        float(budget) if budget is not None else None,
        keys,
        parse_refresh(item.get("refresh"), default, f"rollup `{name}`"),
        joined,
        rows,
    )


def _measures(name: str, ds: str, wanted: tuple[str, ...], model: ModelIr) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for w in wanted:
        if w in model.measures:
            found: tuple[str, ...] = (w,)
        elif w in model.metrics and model.metrics[w].measures:
            found = model.metrics[w].measures  # the metric's measures (a ratio: both sides)
        else:
            names = [m for m, x in model.metrics.items() if x.measures]
            raise _bad(
                f"rollup `{name}`: `{w}` is not a metric over measures, nor a measure",
                closest(w, [*names, *model.measures]) or names[:10],
            )
        for m in found:
            meas = model.measures[m]
            if meas.dataset != ds or meas.datasets - {ds}:
                raise _bad(f"rollup `{name}`: `{w}` reads another dataset than {ds}")
            keyed = meas.agg in KEY_AGGS and distinct_key(meas) is not None
            if (
                (meas.agg not in ADDITIVE_AGGS and not keyed)
                or meas.semi_additive
                or (meas.conversion)
            ):
                raise _bad(
                    f"rollup `{name}`: `{w}` aggregates with {meas.agg}, which does not roll "
                    "up; a rollup holds SUM, COUNT, MIN, MAX and COUNT DISTINCT of one "
                    "expression (its key is stored)",
                )
            out.setdefault(m, None)
    if not out:
        raise _bad(f"rollup `{name}` needs at least one measure")
    return tuple(out)


def _joined(name: str, ds: str, spelled: str, model: ModelIr) -> tuple[str, str, str]:
    """`other.field`: a field of a dataset one many-to-one relationship from `ds`."""
    other, _, fname = spelled.partition(".")
    rels = [
        r
        for r in model.relationships
        if r.from_dataset == ds and r.to_dataset == other and r.kind == "many_to_one"
    ]
    if len(rels) != 1:
        raise _bad(
            f"rollup `{name}`: `{spelled}` must be a field of a dataset one many-to-one "
            f"relationship from {ds}",
            [r.to_dataset for r in model.relationships if r.from_dataset == ds],
        )
    f = model.datasets[other].fields.get(fname)
    if f is None or f.is_time or f.time_format is not None:
        raise _bad(
            f"rollup `{name}`: `{spelled}` is not a plain (non-time) field of {other}",
            closest(fname, model.datasets[other].fields) or list(model.datasets[other].fields),
        )
    return (rels[0].name, other, fname)


def distinct_key(m: MeasureIr) -> exp.Expression | None:
    """The one expression a COUNT DISTINCT (or APPROX_COUNT_DISTINCT) measure counts; None
    for any other shape (several arguments, a FILTER, arithmetic around the aggregate)."""
    e = m.expr
    if isinstance(e, exp.Count) and isinstance(e.this, exp.Distinct):
        args = e.this.expressions
        return args[0] if len(args) == 1 else None
    if isinstance(e, exp.ApproxDistinct) and e.this is not None and not e.args.get("accuracy"):
        return e.this
    return None


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(f"{what} is a list of names")
    return tuple(dict.fromkeys(value))


def _signature(
    model: ModelIr,
    ds: str,
    dims: tuple[str, ...],
    time: str | None,
    grain: str | None,
    measures: tuple[str, ...],
    joined: tuple[tuple[str, str, str], ...] = (),
) -> str:
    """A hash of what the stored rows mean: the source, each column's expression, the grain
    and the calendar, and each joined dimension's relationship and source (a changed model
    definition makes a built rollup unusable)."""
    d = model.datasets[ds]
    parts = [d.source.sql(), str(grain), repr(model.calendar)]
    parts += [f"{n}={d.fields[n].expr.sql()}" for n in (*dims, *((time,) if time else ()))]
    parts += [f"{m}={model.measures[m].expr.sql()}" for m in measures]
    rels = {r.name: r for r in model.relationships}
    for rel, other, fname in joined:
        r, o = rels[rel], model.datasets[other]
        on = ",".join(
            a.sql() + "=" + b.sql() for a, b in zip(r.from_exprs, r.to_exprs, strict=True)
        )
        parts.append(f"{rel}:{r.join_type}:{on}:{o.source.sql()}:{o.fields[fname].expr.sql()}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _bad(message: str, candidates: list[str] | None = None) -> RollupError:
    return bad(message, candidates)
