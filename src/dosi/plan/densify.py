"""Densification planning: where the `Densify` node (plan/nodes/densify.py) goes and what its
time spine covers.

Two places (dosi.query.densify for the modes):
- below a window stage, the stage's series: every spine bucket crossed with the other dims'
  observed combinations, so frames, offsets, ranks and running totals see the empty buckets
  (a rolling 3-month frame labelled August spans June to August); the scan's widened range is
  the spine's. The rows without data are marked (`PRESENT`) when the output drops them again
  (mode `windows`, or `time` beside categorical dims) -- the trim then keeps marked rows only,
  and in mode `covered` also the filled rows in which a window metric has a value;
- on the result: every spine bucket of the time_range (or of the data's first to last bucket),
  crossed with the other dims' combinations (`all`, or `time` with no other dim), or joined on
  the time buckets alone (`time`: an empty bucket is one row, its other dims NULL, as
  MetricFlow's join to the time spine).

Densifying joins aggregated rows to the spine on their full group key, each row to one spine
row: it never multiplies the rows of a fan-out, and never changes a row that has data.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from dosi.errors import QueryError
from dosi.ext.grains import spine_step
from dosi.ir.conform import same_dimension
from dosi.ir.model import GRAIN_RANK, MetricIr, ModelIr
from dosi.plan.dialect_facts import PlanDialect
from dosi.plan.records import Branch, DensePlan, MetricColumn, Spine, SpineKey, TimeBounds
from dosi.query.densify import SERIES_ONLY, ResolvedDensify
from dosi.query.resolve import ResolvedQuery

#: The column marking a densified series row that holds data (1) or was filled (0).
PRESENT = "__dosi_present"
#: The most buckets a spine over literal bounds may hold (a larger one is an error).
MAX_BUCKETS = 1_000_000
_DAYS = {"day": 1, "week": 7, "month": 28, "quarter": 89, "year": 365}
_SECONDS = {"hour": 3600, "minute": 60, "second": 1}


def dense_plan(
    model: ModelIr,
    rq: ResolvedQuery,
    dense: ResolvedDensify,
    branches: tuple[Branch, ...],
    dia: PlanDialect,
    *,
    windowed: bool,
    scan: TimeBounds | None = None,
    beyond: tuple[tuple[int, str], ...] = (),
) -> DensePlan:
    """The densification of one query: over the window stage's series when it has one
    (`scan`: the widened scan's bounds on the axis), and over the result unless the result
    keeps the rows with data (mode windows) or the densified series is already the result
    (crossed). `beyond`: the back offsets' shifts, which extend a `covered` series past the
    data's last bucket."""
    bounds = range_bounds(model, rq, dense)
    if not windowed:
        if dense.mode in SERIES_ONLY:
            return DensePlan(dense.others)
        out = spine_for(model, branches, dense, bounds, dia)
        return DensePlan(dense.others, output=out, cross=dense.crosses)
    series_bounds = scan if bounds is not None else None
    series = spine_for(model, branches, dense, series_bounds, dia)
    if dense.mode == "covered" and series.end is None:
        # a back offset's values run past the data's last bucket (MetricFlow's spine)
        series = replace(series, beyond=beyond)
    keep_all = dense.mode == "all" or (dense.mode == "time" and not dense.others)
    output = None
    if dense.mode == "time" and dense.others:
        output = spine_for(model, branches, dense, bounds, dia)
    within = bounds if bounds is not None and (bounds.start or bounds.end) else None
    if dense.mode == "covered":
        # a value observed only in the widened scan still has window values in the range (a
        # state whose last sale is in the trailing months before it): its rows are covered
        within = None
    return DensePlan(
        dense.others,
        series,
        not keep_all,
        within if dense.others else None,
        output,
        False,
        covering=dense.mode == "covered",
    )


def check_spine_dialect(dia: PlanDialect) -> None:
    """`dialect_unsupported_densify` before any SQL when the dialect generates no series."""
    if dia.spine_series is None:
        raise QueryError(
            "dialect_unsupported_densify",
            f"{dia.key} has no way dosi generates a time series (no series function, no "
            "recursive WITH), so empty time buckets cannot be filled there",
            hint='drop "densify", declare a time-spine table in the model\'s DOSI settings '
            "(time_spine), or run on another engine",
        )


def spine_for(
    model: ModelIr,
    branches: tuple[Branch, ...],
    dense: ResolvedDensify,
    bounds: TimeBounds | None,
    dia: PlanDialect,
) -> Spine:
    """The spine of a densified query: its keys typed as the branches bucket them, its step
    the finest key's (`spine_step`), its bounds the given ones (None: the data's)."""
    types = {d.output: d.datatype for b in branches for d in b.dims}
    keys = tuple(SpineKey(d.output, d.grain, types.get(d.output)) for d in dense.keys if d.grain)
    driver = min(keys, key=lambda k: _rank(k.grain))
    step = spine_step(driver.grain)
    assert step is not None
    table = model.time_spine
    if table is not None and _rank(table.grain) > _rank(step):
        table = None  # a day spine cannot hold hours: the steps are generated
    if table is None:
        check_spine_dialect(dia)
    start = bounds.start if bounds is not None else None
    end = bounds.end if bounds is not None else None
    if start is not None and end is not None:
        _check_size(start, end, step)
    return Spine(keys, step, driver.output, start, end, table)


def range_bounds(model: ModelIr, rq: ResolvedQuery, dense: ResolvedDensify) -> TimeBounds | None:
    """The query's time_range when it bounds the spine's axis (None: the data's bounds)."""
    tr = rq.time_range
    if tr is None:
        return None
    axis = dense.keys[0].field
    if tr.field is not None:
        if axis is not None:
            if not same_dimension(model, tr.field.qualified, axis.qualified):
                return None
        else:
            axes = {m.time_axis for m in rq.planned_metrics if m.time_axis is not None}
            if not axes or not all(same_dimension(model, tr.field.qualified, a) for a in axes):
                return None
    return TimeBounds(tr.range.start, tr.range.end)


def metric_fills(
    model: ModelIr, metrics: tuple[MetricColumn, ...], windowed: frozenset[str] = frozenset()
) -> tuple[tuple[str, float | int], ...]:
    """Each metric column's value in an empty bucket (D-FILL): its `fill_nulls_with`, 0 for a
    pure count (S-FAN-6); window outputs are never filled (FILL-07)."""
    out: list[tuple[str, float | int]] = []
    for c in metrics:
        if c.name in windowed:
            continue
        m = model.metrics.get(c.name)
        fill = c.fill if c.fill is not None else _default_fill(m)
        if fill is not None:
            out.append((c.name, fill))
    return tuple(out)


def measure_fills(model: ModelIr, columns: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """Measure columns of a window stage's series that read 0 in an empty bucket: counts
    (S-FAN-6 on the series column itself, CORE-FAN-07)."""
    return tuple((c, 0) for c in columns if c in model.measures and model.measures[c].is_count)


def _default_fill(m: MetricIr | None) -> float | int | None:
    if m is None or m.window is not None:
        return None
    if m.fill_nulls_with is not None:
        return m.fill_nulls_with
    return 0 if m.is_pure_count else None


def _rank(grain: str) -> int:
    """Finer grains first; a grain the vocabulary adds ranks by its spine step."""
    if grain in GRAIN_RANK:
        return GRAIN_RANK[grain] * 10
    if grain in _SECONDS:
        return -10 * (len(_SECONDS) - list(_SECONDS).index(grain))
    step = spine_step(grain)
    return GRAIN_RANK.get(step or "day", 0) * 10 + 5


def _check_size(start: dt.date | dt.datetime, end: dt.date | dt.datetime, step: str) -> None:
    def seconds(v: dt.date | dt.datetime) -> float:
        if isinstance(v, dt.datetime):
            return v.replace(tzinfo=None).timestamp()
        return dt.datetime(v.year, v.month, v.day).timestamp()

    span = seconds(end) - seconds(start)
    per = _SECONDS.get(step) or _DAYS.get(step, 1) * 86400
    count = span / per
    if count > MAX_BUCKETS:
        raise QueryError(
            "densify_too_many_buckets",
            f"the time_range holds about {int(count):,} {step} buckets; densify fills at most "
            f"{MAX_BUCKETS:,}",
            hint="narrow the time_range or group by a coarser grain",
        )
