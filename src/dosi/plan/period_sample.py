"""D-WINDOW `period_value` at query time (issue 22 item 7): a running or period-to-date frame
grouped coarser than the grain it accumulates at.

The query is planned again with the axis at the accumulation grain (one row per day, say):
the window stage, its scan expansion and trim, and densify all run on that series as they
would for a day query. A `PeriodSample` step then keeps one row per coarser bucket the query
grouped by (and per its other group-by values), holding the first, last or average of the
finer running values. Every metric of such a query must be sampled this way: a plain
aggregate cannot be rebuilt from day rows (a count distinct does not add up), so it is
refused and queried separately.

A D-DERIVE compose over such metrics is sampled with them when that equals the compose of the
sampled values: always for `first` / `last` (one row stands for the bucket), and for `average`
when the compose is affine in its inputs (`avg(a - 10) = avg(a) - 10`).

The same step rolls an offset up to a date part (issue 22 item 3): grouped by date parts of
its axis alone (`metric_time:month_of_year`), an offset of an additive base (SUM, COUNT) is
computed on every day of the covered series and the days' values are summed into each part,
as MetricFlow answers it; a linear compose over such offsets sums the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp, parse_one
from sqlglot.errors import ParseError

from dosi.errors import QueryError
from dosi.ext.grains import SUB_DAY_GRAINS, SUB_DAY_PARTS, grain_rank, is_date_part
from dosi.ext.window.offset import OffsetWindow
from dosi.ext.window.period_value import PeriodValue, nests
from dosi.ir.conform import same_dimension
from dosi.ir.model import MetricIr, ModelIr
from dosi.plan.records import PeriodSample
from dosi.query.resolve import METRIC_TIME, ResolvedDim, ResolvedQuery

#: the measure aggregates whose day values add up to the value of a longer span
_ADDITIVE = frozenset({"sum", "count", "count_star"})
#: the pick of an offset rolled up to a date part (never a payload value)
PART_SUM = PeriodValue("sum", "day")  # type: ignore[arg-type]


@dataclass(frozen=True)
class SampledQuery:
    """The query at the accumulation grain, and how its rows fold into the query's buckets."""

    rq: ResolvedQuery
    sample: PeriodSample


def sampled_query(model: ModelIr, rq: ResolvedQuery) -> SampledQuery | None:
    """None unless a requested frame declares `period_value` (or a compose samples over one)
    and the query groups its axis only by grains coarser than the frame's accumulation grain,
    or an offset is grouped by date parts of its axis alone (the part roll-up)."""
    samplings = {m.name: _sampling(model, m, frozenset()) for m in rq.planned_metrics}
    declared = [m for m in rq.planned_metrics if samplings[m.name] is not None]
    if not declared:
        _check_unsampled(model, rq)
        return _part_rollup(model, rq)
    axis = _axis(model, declared[0])
    items = [d for d in rq.dims if _on_axis(model, d, axis)]
    if not items:
        return None  # the window planner answers time_axis_not_grouped
    finest = min(items, key=lambda d: grain_rank(d.grain or ""))
    coarser = [
        m
        for m in declared
        if grain_rank(samplings[m.name].grain) < grain_rank(finest.grain or "")  # type: ignore[union-attr]
    ]
    if not coarser:
        return None
    grain = samplings[coarser[0].name].grain  # type: ignore[union-attr]
    _check(rq, coarser, items, grain, samplings)
    return _sampled(rq, items, finest, grain, samplings)


def _sampled(
    rq: ResolvedQuery,
    items: list[ResolvedDim],
    finest: ResolvedDim,
    grain: str,
    samplings: dict[str, PeriodValue | None],
) -> SampledQuery:
    key = _key_name(rq, finest, grain)
    spelling = f"{METRIC_TIME if finest.field is None else finest.field.qualified}:{grain}"
    key_dim = ResolvedDim(key, spelling, finest.field, grain)
    others = [d for d in rq.dims if d not in items]
    inner = replace(rq, dims=[key_dim, *others], order=[], query=replace(rq.query, limit=None))
    dims = tuple(d.output for d in rq.dims)
    explicit = {k for k, *_ in rq.order}
    sample = PeriodSample(
        key=key,
        grain=grain,
        buckets=tuple((d.output, d.grain or grain) for d in items),
        dims=tuple(d.output for d in others),
        picks=tuple((m.name, samplings[m.name].value) for m in rq.metrics),  # type: ignore[union-attr]
        outputs=(*dims, *(m.name for m in rq.metrics)),
        order=(*rq.order, *((d, False, None) for d in dims if d not in explicit)),
        limit=rq.query.limit,
    )
    return SampledQuery(inner, sample)


def _sampling(model: ModelIr, m: MetricIr, seen: frozenset[str]) -> PeriodValue | None:
    """How `m` is sampled: its frame's `period_value`, or its compose inputs' common one when
    sampling the compose equals composing the samples (first / last; average of an affine
    compose)."""
    if m.window is not None:
        return m.window.sampled
    d = m.derive
    if d is None or not d.is_stage_compose or m.name in seen:
        return None
    inputs = _inputs(model, m)
    picks = {_sampling(model, model.metrics[n], seen | {m.name}) for n in inputs}
    if len(picks) != 1 or None in picks:
        return None
    pick = next(iter(picks))
    assert pick is not None
    if pick.value == "average" and _affine(d.expr, inputs) is None:
        return None
    return pick


def _check_unsampled(model: ModelIr, rq: ResolvedQuery) -> None:
    """A compose over sampled frames that cannot be sampled with them (an average of a
    product, different picks), grouped coarser than their grain, is refused: composing the
    month's own running values would silently ignore `period_value`."""
    for m in rq.planned_metrics:
        if m.derive is None or not m.derive.is_stage_compose:
            continue
        under = [
            (n, p)
            for n in _inputs(model, m)
            if (p := _sampling(model, model.metrics[n], frozenset())) is not None
        ]
        axis = _axis(model, m)
        items = [d for d in rq.dims if _on_axis(model, d, axis)]
        if not under or not items:
            continue
        finest = min(grain_rank(d.grain or "") for d in items)
        if all(grain_rank(p.grain) >= finest for _, p in under):
            continue
        names = ", ".join(f"`{n}`" for n, _ in under)
        raise QueryError(
            "not_implemented",
            f"compose `{m.name}` reads {names}, which report a value per coarser bucket "
            "(period_value); the compose of those values is not a value of the compose's "
            "own finer series (an average of a product, or inputs picked differently)",
            metrics=[m.name],
            hint="query the inputs and compose them yourself, give the inputs the same "
            "first / last pick, or make the compose affine for an average",
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
def _part_rollup(model: ModelIr, rq: ResolvedQuery) -> SampledQuery | None:
    """An offset grouped by date parts of its axis only: per day, then summed into the parts;
    None when the query is not of that shape (the window planner says why)."""
    if not rq.metrics or any(not _sums_by_day(model, m, frozenset()) for m in rq.planned_metrics):
        return None
    axis = _axis(model, rq.metrics[0])
    on_axis = [d for d in rq.dims if _on_axis(model, d, axis, parts=True)]
    parts = [d for d in on_axis if d.grain is not None and is_date_part(d.grain)]
    if not parts or len(parts) != len(on_axis) or rq.result_filter is not None:
        return None
    if any(d.grain in SUB_DAY_PARTS for d in parts):
        return None  # a day is not inside one hour of the day
    samplings: dict[str, PeriodValue | None] = {m.name: PART_SUM for m in rq.metrics}
    return _sampled(rq, parts, parts[0], "day", samplings)


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


def _on_axis(model: ModelIr, d: ResolvedDim, axis: str | None, parts: bool = False) -> bool:
    """Is `d` a grain of the axis (`parts`: or a date part of it)?"""
    if d.grain is None or d.window is not None or (is_date_part(d.grain) and not parts):
        return False
    if d.is_metric_time:
        return True
    return (
        d.field is not None and axis is not None and same_dimension(model, d.field.qualified, axis)
    )


def _check(
    rq: ResolvedQuery,
    coarser: list[MetricIr],
    items: list[ResolvedDim],
    grain: str,
    samplings: dict[str, PeriodValue | None],
) -> None:
    names = [m.name for m in coarser]
    grains = {samplings[m.name].grain for m in coarser}  # type: ignore[union-attr]
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
    other = [m.name for m in rq.planned_metrics if m.name not in names]
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


def _key_name(rq: ResolvedQuery, finest: ResolvedDim, grain: str) -> str:
    base = METRIC_TIME if finest.field is None else finest.field.name
    name = f"{base}__{grain}"
    taken = {d.output for d in rq.dims} | {m.name for m in rq.metrics}
    while name in taken:
        name = "_" + name
    return name
