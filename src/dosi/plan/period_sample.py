"""D-WINDOW `period_value` at query time (issue 22 item 7): a running or period-to-date frame
grouped coarser than the grain it accumulates at.

The query is planned again with the axis at the accumulation grain (one row per day, say):
the window stage, its scan expansion and trim, and densify all run on that series as they
would for a day query. A `PeriodSample` step then keeps one row per coarser bucket the query
grouped by (and per its other group-by values), holding the first, last or average of the
finer running values. Every metric of such a query must be sampled this way: a plain
aggregate cannot be rebuilt from day rows (a count distinct does not add up), so it is
refused and queried separately.

D-DERIVE composes over sampled members (1.15) are computed per coarser bucket after the
sampling, as MetricFlow aggregates each input of a derived metric to the grain and then
composes: for `first` / `last` and affine composes of averages that is also the sampled
compose.

The same step rolls an offset up to a date part (issue 22 item 3): grouped by date parts of
its axis alone (`metric_time:month_of_year`), an offset of an additive base (SUM, COUNT) is
computed on every day of the covered series and the days' values are summed into each part,
as MetricFlow answers it; a linear compose over such offsets sums the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp, parse_one
from sqlglot.errors import ParseError

from dosi.errors import QueryError
from dosi.ext.grains import SUB_DAY_GRAINS, SUB_DAY_PARTS, grain_rank, is_date_part
from dosi.ext.window.offset import OffsetWindow
from dosi.ext.window.period_value import nests
from dosi.ir.conform import same_dimension
from dosi.ir.model import MetricIr, ModelIr
from dosi.plan.derive_stage import lower_stage
from dosi.plan.records import PeriodSample
from dosi.query.resolve import METRIC_TIME, ResolvedDim, ResolvedQuery

#: the measure aggregates whose day values add up to the value of a longer span
_ADDITIVE = frozenset({"sum", "count", "count_star"})


@dataclass(frozen=True)
class SampledQuery:
    """The query at the accumulation grain, and how its rows fold into the query's buckets;
    `offsets`: an offset's period_value samples (its day series must cover the days the
    shift lands on); `parts`: the date-part roll-up of offsets (summed over the covered
    day series)."""

    rq: ResolvedQuery
    sample: PeriodSample
    offsets: bool = False
    parts: bool = False


def sampled_query(
    model: ModelIr, rq: ResolvedQuery, aligned: Callable[[MetricIr, str], bool]
) -> SampledQuery | None:
    """None unless a requested window declares `period_value` and the query groups its axis
    only by grains coarser than its accumulation grain (for an offset (1.15): grains the
    shift does not land on, `aligned` says which; an aligned offset is a self-join), or an
    offset is grouped by date parts of its axis alone (the part roll-up)."""
    stage = lower_stage(model, rq.planned_metrics)  # the members of stage composes too
    every = list({m.name: m for m in (*rq.planned_metrics, *stage.windows, *stage.plain)}.values())
    declared = [m for m in every if m.window is not None and m.window.sampled]
    if not declared:
        return _part_rollup(model, rq, every)
    axis = declared[0].time_axis
    items = [d for d in rq.dims if _on_axis(model, d, axis)]
    if not items:  # by date parts alone: the part roll-up, or time_axis_not_grouped
        return _part_rollup(model, rq, every)
    finest = min(items, key=lambda d: grain_rank(d.grain or ""))
    coarser = [
        m
        for m in declared
        if grain_rank(_grain(m)) < grain_rank(finest.grain or "")
        and not all(aligned(m, d.grain or "") for d in items)
    ]
    if not coarser:
        return None
    grain = _grain(coarser[0])
    _check(model, rq, every, coarser, items, grain)
    picks = tuple((m.name, _pick(m)) for m in every if not _stage_compose(m))
    sample = _sample(rq, items, finest, grain, picks)
    offsets = any(m.window.family == "offset" for m in coarser)  # type: ignore[union-attr]
    if offsets:
        sample = replace(sample, drop_empty=True)
    return SampledQuery(_inner(rq, items, sample), sample, offsets)


def _sample(
    rq: ResolvedQuery,
    items: list[ResolvedDim],
    finest: ResolvedDim,
    grain: str,
    picks: tuple[tuple[str, str], ...],
) -> PeriodSample:
    key = _key_name(rq, finest, grain)
    dims = tuple(d.output for d in rq.dims)
    explicit = {k for k, *_ in rq.order}
    others = [d for d in rq.dims if d not in items]
    return PeriodSample(
        key=key,
        grain=grain,
        buckets=tuple((d.output, d.grain or grain) for d in items),
        dims=tuple(d.output for d in others),
        picks=picks,
        outputs=(*dims, *(m.name for m in rq.metrics)),
        order=(*rq.order, *((d, False, None) for d in dims if d not in explicit)),
        limit=rq.query.limit,
    )


def _inner(rq: ResolvedQuery, items: list[ResolvedDim], sample: PeriodSample) -> ResolvedQuery:
    """The query at the accumulation grain: the sample's key in place of the axis items."""
    finest = min(items, key=lambda d: grain_rank(d.grain or ""))
    spelling = f"{METRIC_TIME if finest.field is None else finest.field.qualified}:{sample.grain}"
    key_dim = ResolvedDim(sample.key, spelling, finest.field, sample.grain)
    others = [d for d in rq.dims if d not in items]
    return replace(rq, dims=[key_dim, *others], order=[], query=replace(rq.query, limit=None))


def _grain(m: MetricIr) -> str:
    assert m.window is not None and m.window.sampled is not None
    return m.window.sampled.grain


def _on_axis(model: ModelIr, d: ResolvedDim, axis: str | None, parts: bool = False) -> bool:
    """Is `d` a grain of the axis (`parts`: or a date part of it)?"""
    if d.grain is None or d.window is not None or (is_date_part(d.grain) and not parts):
        return False
    if d.is_metric_time:
        return True
    return (
        d.field is not None and axis is not None and same_dimension(model, d.field.qualified, axis)
    )


def _inputs(model: ModelIr, m: MetricIr) -> tuple[str, ...]:
    assert m.derive is not None
    return tuple(x.metric for x in m.derive.members if x.metric in model.metrics)


def _affine(text: str | None, inputs: tuple[str, ...]) -> float | None:
    """The constant term of `text` when it is Σ cᵢ·inputᵢ + c (None: not affine)."""
    if not text:
        return None
    try:
        tree = parse_one(text)
    except ParseError:
        return None

    def walk(n: exp.Expression) -> tuple[bool, float] | None:  # (reads an input, constant)
        if isinstance(n, exp.Paren):
            return walk(n.this)
        if isinstance(n, exp.Column):
            return (True, 0.0) if n.name in inputs and not n.table else None
        if isinstance(n, exp.Literal) and n.is_number:
            return False, float(n.this)
        if isinstance(n, exp.Neg):
            r = walk(n.this)
            return None if r is None else (r[0], -r[1])
        if isinstance(n, exp.Add | exp.Sub):
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None:
                return None
            return a[0] or b[0], a[1] + (b[1] if isinstance(n, exp.Add) else -b[1])
        if isinstance(n, exp.Mul):  # (Σ + c)·k: scaled, never input times input
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None or (a[0] and b[0]):
                return None
            return a[0] or b[0], a[1] * b[1]
        if isinstance(n, exp.Div):
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None or b[0] or b[1] == 0:
                return None
            return a[0], a[1] / b[1]
        return None

    r = walk(tree)
    return None if r is None or not r[0] else r[1]


def _axis(model: ModelIr, m: MetricIr) -> str | None:
    """The time axis of a sampled metric: its own, or its first windowed input's."""
    if m.time_axis is not None or m.derive is None:
        return m.time_axis
    for n in _inputs(model, m):
        axis = _axis(model, model.metrics[n])
        if axis is not None:
            return axis
    return None


# -- the date-part roll-up of offsets (issue 22 item 3) -----------------------------------------
def _part_rollup(model: ModelIr, rq: ResolvedQuery, every: list[MetricIr]) -> SampledQuery | None:
    """An offset grouped by date parts of its axis only: per day, then summed into the parts;
    None when the query is not of that shape (the window planner says why). A linear compose
    of such offsets is composed after the sums (the sum of a linear compose without a
    constant is the compose of the sums)."""
    if not rq.metrics or any(not _sums_by_day(model, m, frozenset()) for m in rq.planned_metrics):
        return None
    axis = _axis(model, rq.metrics[0])
    on_axis = [d for d in rq.dims if _on_axis(model, d, axis, parts=True)]
    parts = [d for d in on_axis if d.grain is not None and is_date_part(d.grain)]
    if not parts or len(parts) != len(on_axis) or rq.result_filter is not None:
        return None
    if any(d.grain in SUB_DAY_PARTS for d in parts):
        return None  # a day is not inside one hour of the day
    picks = tuple((m.name, "sum") for m in every if not _stage_compose(m))
    sample = _sample(rq, parts, parts[0], "day", picks)
    return SampledQuery(_inner(rq, parts, sample), sample, parts=True)


def _sums_by_day(model: ModelIr, m: MetricIr, seen: frozenset[str]) -> bool:
    """An offset (`calculation: value`, shifted by days or coarser) of an additive aggregate,
    or a linear compose of such offsets (a constant term would be added once per day)."""
    w = m.window
    if isinstance(w, OffsetWindow):
        if w.calculation != "value" or w.granularity in SUB_DAY_GRAINS or m.window_base:
            return False
        aggs = {model.measures[x].agg for x in m.measures if x in model.measures}
        return m.kind == "aggregate" and bool(aggs) and aggs <= _ADDITIVE
    d = m.derive
    if w is not None or d is None or not d.is_stage_compose or m.name in seen:
        return False
    inputs = _inputs(model, m)
    if _affine(d.expr, inputs) != 0.0:
        return False
    return all(_sums_by_day(model, model.metrics[n], seen | {m.name}) for n in inputs)


def _check(
    model: ModelIr,
    rq: ResolvedQuery,
    every: list[MetricIr],
    coarser: list[MetricIr],
    items: list[ResolvedDim],
    grain: str,
) -> None:
    names = [m.name for m in coarser]
    grains = {_grain(m) for m in coarser}
    if len(grains) > 1:
        raise QueryError(
            "not_implemented",
            "window metrics " + ", ".join(f"`{n}`" for n in names) + " accumulate at "
            "different grains (" + ", ".join(sorted(grains)) + "): one query samples one series",
            metrics=names,
            hint="query them separately",
        )
    if rq.result_filter is not None:
        raise QueryError(
            "not_implemented",
            "a where_sql condition on a metric beside a period_value metric: it would keep "
            f"{grain} rows before each coarser bucket picks its value",
            metrics=names,
            hint="drop the metric condition, or query without period_value sampling",
        )
    # beside them (1.15): the stage composes over sampled members, computed per coarser
    # bucket after the sampling, as MetricFlow aggregates each input of a derived metric to
    # the grain, then composes; beside sampled offsets also additive plain metrics (a sum of
    # day rows is the bucket's sum)
    offsets = any(m.window is not None and m.window.family == "offset" for m in coarser)
    other = [
        m.name
        for m in every
        if m.name not in names and not _stage_compose(m) and not (offsets and _additive(model, m))
    ]
    if other:
        raise QueryError(
            "not_implemented",
            f"window metric{'s' if len(names) > 1 else ''} "
            + ", ".join(f"`{n}`" for n in names)
            + f" accumulate per {grain} and report a value per coarser bucket "
            "(period_value); " + ", ".join(f"`{n}`" for n in other) + " cannot be rebuilt "
            f"from {grain} rows",
            metrics=other,
            hint="query the period_value metrics separately from the others",
        )
    for d in items:
        if not nests(grain, d.grain or ""):
            raise QueryError(
                "window_reset_too_fine",
                f"window metric `{names[0]}` accumulates per {grain}, whose buckets do not "
                f"nest in `{d.spelling}`: a {d.grain} bucket would hold parts of a {grain}",
                metrics=names,
                hint=f"group by a grain made of whole {grain}s, or accumulate per day "
                '("period_value": {"grain": "day", ...})',
            )


def _pick(m: MetricIr) -> str:
    """What a coarser bucket keeps of a metric's `grain` rows: a plain metric their sum; an
    offset's `first` is its value on the bucket's first day (NULL when that day has none:
    the covered day series may not hold it), not the first row that exists."""
    w = m.window
    if w is None or w.sampled is None:
        return "sum"
    if w.family == "offset" and w.sampled.value == "first":
        return "first_day"
    return w.sampled.value


def _additive(model: ModelIr, m: MetricIr) -> bool:
    """A plain SUM / COUNT of one measure: its day rows add up to any coarser bucket's
    value (a count distinct, an average, a snapshot do not)."""
    if m.window is not None or m.derive is not None or len(m.measures) != 1:
        return False
    meas = model.measures[m.measures[0]]
    return (
        isinstance(m.formula, exp.Column)
        and meas.agg in ("sum", "count", "count_star")
        and meas.branch_key is None
    )


def _stage_compose(m: MetricIr) -> bool:
    return m.derive is not None and m.derive.is_stage_compose


def _key_name(rq: ResolvedQuery, finest: ResolvedDim, grain: str) -> str:
    base = METRIC_TIME if finest.field is None else finest.field.name
    name = f"{base}__{grain}"
    taken = {d.output for d in rq.dims} | {m.name for m in rq.metrics}
    while name in taken:
        name = "_" + name
    return name
