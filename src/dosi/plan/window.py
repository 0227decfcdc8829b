"""D-WINDOW planning: the window stage above the base aggregate.

window-metrics-extension.md: the base CTE is the exact grouped aggregate of the base metrics;
offsets become shifted-key self-joins, frames / ranks / values window functions; the scan is
widened for offset lookback, forward lookahead and reset alignment, and trimmed after the stage.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace

from dosi.errors import QueryError
from dosi.ext.grains import DAY_GRAINS, FIXED_SECONDS, MONTHS, RETAIL_GRAINS, grain_rank
from dosi.ext.grains import is_date_part as _is_part
from dosi.ext.window import WindowSpec
from dosi.ext.window.period_value import nests
from dosi.ext.window.span import Span
from dosi.ir.calendar import DEFAULT_CALENDAR, CalendarIr
from dosi.ir.conform import same_dimension
from dosi.ir.model import MetricIr, ModelIr
from dosi.plan.calendar import shift_when, trunc_when
from dosi.plan.densify import dense_plan
from dosi.plan.derive_series import needs_series, series_metric, series_name
from dosi.plan.derive_stage import is_nested_window, lower_stage
from dosi.plan.dialect_facts import PlanDialect
from dosi.plan.joins import JoinGraph
from dosi.plan.period_sample import sampled_query
from dosi.plan.planner import Planner
from dosi.plan.records import QueryPlan, TimeBounds, TimeFilter, WindowMetric, WindowStage
from dosi.plan.window_distinct import with_distinct_rows
from dosi.query.densify import ResolvedDensify, resolve_densify
from dosi.query.resolve import METRIC_TIME, ResolvedDim, ResolvedQuery
from dosi.query.spec import query_to_dict

# a retail shift lands on a bucket of these grains (a retail year also on its weeks)
_RETAIL_TARGETS = {
    "retail_year": ("day", "week", "retail_month", "retail_quarter", "retail_year"),
}


def offset_aligned(
    count: int, granularity: str, grain: str, cal: CalendarIr = DEFAULT_CALENDAR
) -> bool:
    """Does a shift of count x granularity land on a bucket boundary of the query grain?
    Fixed lengths (second .. week) land on buckets they are a multiple of, calendar months
    (month .. year, fiscal periods) on every bucket of a day or finer and on month buckets
    they are a multiple of; a retail shift moves along its own calendar (the same week of
    the year a year back: week 1 with week 1), a table grain takes no shift."""
    if granularity in RETAIL_GRAINS:
        if grain == "week" and (cal.retail is None or cal.week_start != cal.retail.week_start):
            return False  # weeks that are not the retail calendar's
        return grain in _RETAIL_TARGETS[granularity]
    if grain in FIXED_SECONDS:
        step = FIXED_SECONDS[grain]
        if granularity in FIXED_SECONDS:
            return FIXED_SECONDS[granularity] * count % step == 0
        return step <= FIXED_SECONDS["day"]
    if grain not in MONTHS or granularity not in MONTHS:
        return False
    return (count * MONTHS[granularity]) % MONTHS[grain] == 0


def aligned_grains(count: int, granularity: str, cal: CalendarIr = DEFAULT_CALENDAR) -> list[str]:
    """The grains a shift lands on (the day grains first, as the 1.x list was)."""
    finer = [g for g in cal.grains() if g not in DAY_GRAINS]
    return [g for g in (*DAY_GRAINS, *finer) if offset_aligned(count, granularity, g, cal)]


def plan_windows(
    model: ModelIr,
    graph: JoinGraph,
    rq: ResolvedQuery,
    planner: Planner,
    dialect: PlanDialect,
    dense: ResolvedDensify | None = None,
) -> QueryPlan:
    """The query's plan records: the branches, and the window stage when a metric windows;
    `dense` (the query key `densify`) puts a time spine under the stage's series or the
    result (plan/densify.py)."""
    sampled = sampled_query(model, rq, _aligned(model))
    if sampled is not None:  # D-WINDOW period_value: planned at the accumulation grain
        inner = resolve_densify(model, sampled.rq) if dense is not None else None
        if sampled.parts:
            # an offset by date part sums every day its shifted value reaches (the covered
            # series), not only the days with data of their own
            covered = replace(sampled.rq, query=replace(sampled.rq.query, densify="covered"))
            inner = resolve_densify(model, covered)
        elif inner is not None and inner.mode == "time":
            # every finer bucket of every combination: a running value carries through a
            # coarser bucket where a combination has no rows (docs/densify.md)
            inner = replace(inner, mode="all")
        if inner is None and sampled.offsets:
            # an offset's day value exists on days without rows of their own (the day the
            # shift lands on has them): the day series covers every such day
            covered = replace(sampled.rq, query=replace(sampled.rq.query, densify="covered"))
            inner = resolve_densify(model, covered)
        plan = plan_windows(model, graph, sampled.rq, planner, dialect, inner)
        key = sampled.sample.key
        datatype = next(
            (d.datatype for b in plan.branches for d in b.dims if d.output == key), None
        )
        sample = replace(sampled.sample, datatype=datatype)
        if plan.derived:  # composes over sampled members: computed per coarser bucket
            if plan.window is not None and plan.window.uppers:
                raise QueryError(
                    "not_implemented",
                    "a window over a compose of period_value metrics: the compose is computed "
                    "per coarser bucket, after the sampling",
                    metrics=[m.name for m in rq.metrics],
                    hint="query the period_value metrics without the outer window",
                )
            members = tuple(m for m, _ in sample.picks)
            sample = replace(sample, derived=plan.derived)
            plan = replace(plan, derived=(), outputs=(*plan.dims, *members))
        return replace(plan, sample=sample)
    stage = lower_stage(model, rq.planned_metrics)  # D-DERIVE stage tier
    windowed = [m for m in rq.planned_metrics if m.window is not None and not is_nested_window(m)]
    names = {m.name for m in windowed}
    hidden = tuple(m for m in stage.windows if m.name not in names)
    windowed += hidden
    if not windowed:
        plan = planner.plan(rq)
        if dense is not None:
            spine = dense_plan(model, rq, dense, plan.branches, dialect, windowed=False)
            plan = replace(plan, densify=spine)
        return plan
    plan = _WindowPlanner(
        model, rq, planner, dialect, windowed, (*stage.plain, *hidden), tuple(stage.nested)
    ).plan(dense)
    if stage.derived:
        plan = replace(plan, derived=tuple(stage.derived))
    if stage.nested:
        # outputs of a later window stage come after the first stage's (as the reference
        # engine orders them), each group in the requested order
        def level(name: str) -> int:
            m = model.metrics.get(name)
            return m.derive.level if m is not None and m.derive is not None else 1

        dims = plan.outputs[: len(plan.dims)]
        rest = sorted(plan.outputs[len(plan.dims) :], key=lambda n: max(level(n), 1))
        plan = replace(plan, outputs=(*dims, *rest))
    return plan


class _WindowPlanner:
    def __init__(
        self,
        model: ModelIr,
        rq: ResolvedQuery,
        planner: Planner,
        dialect: PlanDialect,
        windowed: list[MetricIr],
        members: tuple[MetricIr, ...] = (),
        nested: tuple[MetricIr, ...] = (),
    ) -> None:
        self.model = model
        self.rq = rq
        self.planner = planner
        self.dialect = dialect
        self.windowed = windowed
        self.members = members  # carried members of stage-tier composes
        self.nested = nested  # windows over stage composes: stages 2 and 3
        # every level: one time axis, grains, and the expansion restrictions (WIN-19-09)
        self.all_windows = [*windowed, *nested]
        self.axis: str | None = None
        self.dense: ResolvedDensify | None = None
        self.grain: str | None = None

    def plan(self, dense: ResolvedDensify | None = None) -> QueryPlan:
        rq = self.rq
        self.dense = dense
        time_dim, axis = self._time_key()
        self.axis = axis
        grain = time_dim.grain if time_dim is not None else None
        self.grain = grain
        self._check_grains(grain)
        self._check_partial_buckets(grain)
        self._check_range_axis(axis)
        self._check_restrictions()
        seconds = self._second_metrics()
        series = tuple(series_metric(m) for m in self.windowed if needs_series(m))
        base = self.planner.plan(rq, extra_metrics=(*seconds, *series, *self.members))
        self._check_series(base)
        time_key = time_dim.output if time_dim is not None else None
        trim = None
        tr = rq.time_range
        on_axis = tr is not None and (
            tr.field is None
            or (axis is not None and same_dimension(self.model, tr.field.qualified, axis))
        )
        branches = base.branches
        if tr is not None and on_axis and time_key is not None:
            # every branch reads the widened range: the window stage reads the merged series
            branches = tuple(
                replace(b, time_filters=tuple(self._expand(tf) for tf in b.time_filters))
                for b in branches
            )
            # the start is trimmed only when widened: an unwidened start is the scan's own,
            # and its partial first bucket (labelled before the bound) is part of the answer
            start_x, _ = self._expanders()
            trim = TimeBounds(tr.range.start if start_x else None, tr.range.end)
        metrics = tuple(
            with_distinct_rows(self.model, m, self._window_metric(m, time_dim), branches)
            for m in self.windowed
        )
        if trim is not None:
            metrics = tuple(self._mask(wm, trim) for wm in metrics)
        uppers = tuple(self._upper(level, time_dim, trim) for level in (2, 3))
        stage = WindowStage(
            time_key=time_key,
            grain=grain,
            metrics=metrics,
            trim=trim,
            uppers=tuple(u for u in uppers if u),
        )
        spine = None
        if dense is not None:  # the series over a time spine covering the widened scan
            scan = next((tf for b in branches for tf in b.time_filters), None)
            bounds = TimeBounds(scan.start, scan.end) if scan is not None else None
            beyond = tuple(
                (s.count, s.granularity)
                for m in self.all_windows
                if m.window is not None
                and (s := m.window.shift) is not None
                and s.direction == "back"
            )
            # a calendar span (1.15) has values until a span after the data's last bucket
            beyond += tuple(
                (sp.count, sp.granularity)
                for m in self.all_windows
                if (sp := _span(m.window)) is not None
            )
            spine = dense_plan(
                self.model,
                rq,
                dense,
                branches,
                self.dialect,
                windowed=True,
                scan=bounds,
                beyond=beyond,
            )
        return replace(base, branches=branches, window=stage, densify=spine)

    def _upper(
        self, level: int, time_dim: ResolvedDim | None, trim: TimeBounds | None
    ) -> tuple[WindowMetric, ...]:
        """The window metrics of stage `level` (WIN-19-06): each reads its base compose's
        column, computed after the stage below."""
        out = []
        for m in self.nested:
            assert m.derive is not None and m.derive.base is not None
            if m.derive.level != level:
                continue
            wm = replace(self._window_metric(m, time_dim), base_column=m.derive.base)
            out.append(self._mask(wm, trim) if trim is not None else wm)
        return tuple(out)

    def _check_series(self, base: QueryPlan) -> None:
        """Each window metric's series (and second series) is one branch's measure: the
        merge passes it up to the window stage. A series spanning branches would be a formula
        over the merge, which the stage does not window."""
        sources = {m.name: m.sources for m in base.metrics}
        for m in self.windowed:
            if needs_series(m):
                continue  # computed after the merge (dosi.plan.derive_series)
            names = [m.name]
            second = m.window.second_metric if m.window is not None else None
            if second is not None:
                names.append(second)
            ids = {bid for n in names for _, bid in sources[n]}
            if len(ids) > 1:
                by_id = {b.id: b for b in base.branches}
                raise QueryError(
                    "not_implemented",
                    f"window metric `{m.name}` reads a series over several base datasets ("
                    + ", ".join(
                        by_id[i].dataset + (f"@{by_id[i].axis}" if by_id[i].axis else "")
                        for i in sorted(ids)
                    )
                    + "): a window stage reads one dataset's aggregate",
                    metrics=[m.name],
                    hint="window a metric of one dataset, or query the parts separately",
                )

    # -- checks ------------------------------------------------------------------------------
    def _time_key(self) -> tuple[ResolvedDim | None, str | None]:
        """The group-by item carrying the shared time axis (WM "Querying window metrics")."""
        needing = [m for m in self.all_windows if m.window.needs_time_axis]  # type: ignore[union-attr]
        if not needing:
            return self._optional_time_key()
        axes: dict[str, list[str]] = {}
        for m in needing:
            if m.time_axis is None and m.window_base is not None and len(m.datasets) > 1:
                raise QueryError(
                    "no_primary_time_dimension",
                    f"window metric `{m.name}` reads `{m.window_base}`, which spans datasets "
                    f"({', '.join(sorted(m.datasets))}) with their own time axes; a window "
                    "that orders or shifts along time needs one time axis (WIN-BASE-06)",
                    metrics=[m.name],
                    hint="window a base of one dataset, or use a family that does not need the "
                    "time axis (rank / value ordered by value)",
                )
            if m.time_axis is None:
                times = [
                    f.qualified
                    for d in self.model.datasets.values()
                    for f in d.fields.values()
                    if f.is_time
                ]
                raise QueryError(
                    "no_primary_time_dimension",
                    f"window metric `{m.name}` has no time axis to order or shift along",
                    metrics=[m.name],
                    candidates=times,
                    hint="declare time_dimension on the metric or its dataset (DATUS D-TIME)",
                )
            # D-CONFORM CONF-14: conformed spellings of one date are one axis
            key = next((a for a in axes if same_dimension(self.model, a, m.time_axis)), None)
            axes.setdefault(key or m.time_axis, []).append(m.name)
        if len(axes) > 1:
            raise QueryError(
                "not_implemented",
                "window metrics in one query must share one time axis; these use "
                + " vs ".join(sorted(axes)),
                metrics=[n for names in axes.values() for n in names],
                hint="query the metrics separately",
            )
        axis = next(iter(axes))
        items = [d for d in self.rq.dims if self._on_axis(d, axis)]
        if items:
            # metric_time first; else the finest grain of the concrete axis is the series (a
            # coarser grain of it is a partition dim), whatever the group_by order
            return min(items, key=lambda d: (not d.is_metric_time, grain_rank(d.grain))), axis
        parts = [d for d in self.rq.dims if self._on_axis(d, axis, parts=True)]
        if parts:
            names = ", ".join(f"`{m.name}`" for m in needing)
            raise QueryError(
                "window_on_date_part",
                f"window metric{'s' if len(needing) > 1 else ''} {names} order or shift along "
                f"time, but `{parts[0].spelling}` is a date part: its values repeat every "
                "period, so they are not a time series to order or shift",
                metrics=[m.name for m in needing],
                candidates=[f"{METRIC_TIME}:{g}" for g in ("day", "week", "month")],
                hint=f'group by a time grain as well, e.g. add "{METRIC_TIME}:month" (the date '
                "part then partitions the window)",
                suggested_retry=self._retry_with_axis(needing),
            )
        if all(_totals_without_axis(m) for m in needing) and self.rq.time_range is None:
            # a running total with no time bucket to order: the frame spans the whole series,
            # one row per partition, so it is the total (issue 22; MetricFlow's all-time metric)
            return None, axis
        raise QueryError(
            "time_axis_not_grouped",
            f"window metric{'s' if len(needing) > 1 else ''} "
            + ", ".join(f"`{m.name}`" for m in needing)
            + (" order or shift" if len(needing) > 1 else " orders or shifts")
            + f" along `{axis}`, which the query does not group by with a grain",
            candidates=[axis, METRIC_TIME],
            hint=f'add "{axis}:<grain>" (e.g. :month) or "metric_time:<grain>" to group_by',
            missing_dimensions=[axis],
            suggested_retry=self._retry_with_axis(needing),
        )

    def _optional_time_key(self) -> tuple[ResolvedDim | None, str | None]:
        """No window needs the time axis, but one partitions by the time bucket when the
        query groups by one (a share): that group-by item, else none."""
        for m in self.all_windows:
            if m.window.reads_time_bucket and m.time_axis is not None:  # type: ignore[union-attr]
                items = [d for d in self.rq.dims if self._on_axis(d, m.time_axis)]
                if items:
                    pick = min(items, key=lambda d: (not d.is_metric_time, grain_rank(d.grain)))
                    return pick, m.time_axis
        return None, None

    def _retry_with_axis(self, needing: list[MetricIr]) -> dict:
        """The query with `metric_time` grouped at a grain every offset lands on."""
        grains = ["month", "day", "week", "quarter", "year"]
        for m in needing:
            shift = m.window.shift if m.window is not None else None
            if shift is not None:
                ok = aligned_grains(shift.count, shift.granularity, self.model.calendar)
                grains = [g for g in grains if g in ok]
        fixed = query_to_dict(self.rq.query)
        items = [g for g in fixed.get("group_by", []) if g.split(":")[0] != METRIC_TIME]
        fixed["group_by"] = [*items, f"{METRIC_TIME}:{(grains or ['day'])[0]}"]
        return fixed

    def _on_axis(self, d: ResolvedDim, axis: str | None, parts: bool = False) -> bool:
        """A grained group-by item of the window axis (metric_time, the concrete field, or its
        conformed spelling on a paired fact: D-CONFORM CONF-14); a date part of it only when
        `parts` asks (a date part is a grouping, never the series' time key)."""
        return (
            d.grain is not None
            and _is_part(d.grain) == parts
            and d.window is None
            and (
                d.is_metric_time
                or (
                    d.field is not None
                    and axis is not None
                    and same_dimension(self.model, d.field.qualified, axis)
                )
            )
        )

    def _check_grains(self, grain: str | None) -> None:
        for m in self.all_windows:
            w = m.window
            shift = w.shift if w is not None else None
            reset = w.reset_grain if w is not None else None
            cal = self.model.calendar
            if (
                shift is not None
                and grain is not None
                and not offset_aligned(shift.count, shift.granularity, grain, cal)
            ):
                ok = aligned_grains(shift.count, shift.granularity, cal)
                raise QueryError(
                    "window_offset_misaligned",
                    f"window metric `{m.name}` shifts {shift.count} {shift.granularity}, which does "
                    f"not land on a {grain} bucket boundary: every row would look up a bucket "
                    "the query never builds",
                    metrics=[m.name],
                    hint="group the time axis by " + (", ".join(ok) or "another grain"),
                )
            start = w.period_start if w is not None else None
            if start is not None and grain is not None and not _starts_on_bucket(grain, start):
                raise QueryError(
                    "window_offset_misaligned",
                    f"window metric `{m.name}` reads the start of each {start}, which is not "
                    f"a {grain} bucket: a {grain} bucket does not lie inside one {start}",
                    metrics=[m.name],
                    hint=f"group the time axis by {start} or a grain whose buckets nest in "
                    f"it (day)",
                )
            if reset is not None and grain is not None and cal.kind(grain) == "table":
                raise QueryError(
                    "not_implemented",
                    f"window metric `{m.name}` resets every {reset}, but the query's time key "
                    f"is the calendar-table grain {grain}, whose periods dosi cannot place "
                    "inside a reset period",
                    metrics=[m.name],
                    hint="group the time axis by a native or calendar grain",
                )
            # a reset at the query grain itself: every bucket is its own period
            if (
                reset is not None
                and grain is not None
                and reset != grain
                and grain_rank(reset) <= grain_rank(grain)
            ):
                ok = [
                    g
                    for g in ("day", "week", "month", "quarter", "year")
                    if grain_rank(g) >= grain_rank(grain)
                ]
                raise QueryError(
                    "window_reset_too_fine",
                    f"window metric `{m.name}` resets every {reset}, finer than the "
                    f"queried {grain} grain",
                    metrics=[m.name],
                    hint=f"use a reset of {' / '.join(ok)}, or group at a finer grain",
                )
            partition = w.partition_spec if w is not None else None
            if partition is not None and partition.mode == "query_dimensions_except":
                grouped = {d.field.qualified for d in self.rq.dims if d.field is not None}
                missing = [x for x in partition.exclude if x not in grouped]
                if missing:
                    raise QueryError(
                        "window_exclude_not_grouped",
                        f"window metric `{m.name}` excludes {', '.join(missing)} from its "
                        "partition, but the query does not group by "
                        + ("it" if len(missing) == 1 else "them"),
                        metrics=[m.name],
                        candidates=[d.spelling for d in self.rq.dims],
                        hint=" and ".join(f'add "{x}"' for x in missing) + " to group_by",
                        missing_dimensions=missing,
                    )

    def _check_partial_buckets(self, grain: str | None) -> None:
        """WIN-OFF-05 / WIN-OFF-10 / WIN-QRY-04: a time_range bound inside a bucket of the
        query grain, on a side the window stage widens, is `grain_too_fine`: the widened scan
        would load that bucket whole (a lookback reads the full month, a forward offset the
        month after the end, a reset accumulates from the period start), so the edge bucket
        would disagree with the same query without a window, and trimming it away would drop a
        requested row. Checked before the range's field is matched against the axis, as the
        reference engine orders it."""
        tr = self.rq.time_range
        if tr is None or grain is None:
            return
        start_x, end_x = self._expanders(any_field=True)
        # a densified frame's lookback loads whole calendar buckets by design (densify.md)
        dense = {
            m.name
            for m in self.all_windows
            if m.window is not None and m.window.shift is None and m.window.reset_grain is None
        }
        start_x = [n for n in start_x if n not in dense]
        if grain == "week":
            # weeks do not tile a reset period (month, quarter, year), so a reset's edge week is
            # partial whatever the start: the reference engine trims it and answers
            start_x = [n for n in start_x if n not in self._reset_only()]
        for side, bound, names in (
            ("start", tr.range.start, start_x),
            ("end", tr.range.end, end_x),
        ):
            if bound is None or not names:
                continue
            try:
                floor = trunc_when(bound, grain, self.model.calendar)
            except ValueError:  # a calendar-table grain: its periods are not placed here
                continue
            if floor == bound:
                continue
            raise QueryError(
                "grain_too_fine",
                f"the time_range {side} `{bound.isoformat()}` falls inside a {grain} bucket, "
                f"and window metric{'s' if len(names) > 1 else ''} "
                + ", ".join(f"`{n}`" for n in names)
                + f" widen{'' if len(names) > 1 else 's'} the scan past that bound: the partial "
                f"{grain} would read as a whole one",
                metrics=names,
                hint=f"move the {side} to a {grain} boundary (`{floor.isoformat()}`), or group "
                "the time axis by a finer grain",
            )

    def _reset_only(self) -> set[str]:
        """Window metrics that widen the start only by a reset (no shift, no history)."""
        return {
            m.name
            for m in self.all_windows
            if m.window is not None
            and m.window.shift is None
            and m.window.reset_grain is not None
            and not m.window.reads_history
        }

    def _expanders(self, any_field: bool = False) -> tuple[list[str], list[str]]:
        """Metrics that widen the scan's start (back offsets, resets) and its end (forward
        offsets) under this query's time_range; none when the range is not on the axis
        (unless `any_field`: the metrics that would widen it)."""
        tr = self.rq.time_range
        if tr is None:
            return [], []
        axes = {m.time_axis for m in self.all_windows if m.time_axis is not None}
        if (
            not any_field
            and tr.field is not None
            and not any(same_dimension(self.model, tr.field.qualified, a) for a in axes)
        ):
            return [], []
        start: list[str] = []
        end: list[str] = []
        for m in self.all_windows:
            w = m.window
            shift = w.shift if w is not None else None
            if shift is not None:
                (start if shift.direction == "back" else end).append(m.name)
            elif (
                w is not None
                and (w.reset_grain is not None or w.reads_history or _span(w) is not None)
            ) or self._dense_lookback(m):
                start.append(m.name)
            if w is not None and w.reads_ahead:  # frame.following (1.14): the end widens
                end.append(m.name)
        if tr.range.start is None:
            start = []
        if tr.range.end is None:
            end = []
        return start, end

    def _check_range_axis(self, axis: str | None) -> None:
        """WIN-QRY-04: a range on a field that is neither the window's axis nor a conformed
        spelling of it can neither widen the scan for lookback nor trim the result along the
        axis, so a window ordered or shifted along time would compare truncated buckets."""
        tr = self.rq.time_range
        if tr is None or tr.field is None or axis is None:
            return
        if same_dimension(self.model, tr.field.qualified, axis):
            return
        needing = [m.name for m in self.all_windows if m.window.needs_time_axis]  # type: ignore[union-attr]
        raise QueryError(
            "not_implemented",
            f"time_range on `{tr.field.qualified}` is not the time axis `{axis}` of window "
            f"metric{'s' if len(needing) > 1 else ''} "
            + ", ".join(f"`{n}`" for n in needing)
            + ": the scan could be neither widened for the window nor trimmed along its axis",
            metrics=needing,
            candidates=[axis, METRIC_TIME],
            hint=f'range on the axis: "dimension": "{axis}" (or "metric_time"), or filter the '
            "other field in where_sql",
        )

    def _check_restrictions(self) -> None:
        """WM "Restrictions": expansion must never change what another metric sees."""
        start_x, end_x = self._expanders()
        specs = [(m, m.window) for m in self.all_windows]
        # a running total over the whole history (1.15) reads the widened rows by design
        running = [m.name for m, w in specs if w.is_running and not w.reads_history]  # type: ignore[union-attr]
        if running and start_x:
            raise QueryError(
                "not_implemented",
                f"running metric{'s' if len(running) > 1 else ''} {', '.join(running)} would "
                f"accumulate over the scan widened for {', '.join(start_x)} under a "
                "time_range start",
                metrics=running,
                hint="query the running metric separately, give it a reset, or drop the "
                "time_range start",
            )
        global_ = [m.name for m, w in specs if w.partition_global]  # type: ignore[union-attr]
        if global_ and (start_x or end_x):
            raise QueryError(
                "not_implemented",
                f"partition-global metric{'s' if len(global_) > 1 else ''} {', '.join(global_)} "
                f"would rank or aggregate over the scan widened for "
                f"{', '.join(dict.fromkeys(start_x + end_x))}",
                metrics=global_,
                hint="query it separately, or drop the time_range",
            )

    def _mask(self, wm: WindowMetric, trim: TimeBounds) -> WindowMetric:
        """A time-ordered frame reads only the buckets it would read alone: rows loaded for
        other metrics' lookback (below the start; a reset frame's own alignment aside) or
        lookahead (at or after the end) enter it as NULL."""
        w = wm.spec
        if not w.masked_outside_range:
            return wm
        start_x, end_x = self._expanders()
        own = (
            w.reset_grain is not None
            or w.reads_history
            or _span(w) is not None
            or (w.bucket_lookback is not None and self.dense is not None)
        )
        # a following frame reads the rows after the range for itself (1.14)
        return replace(
            wm,
            mask_before=trim.start if start_x and not own else None,
            mask_after=trim.end if end_x and not w.reads_ahead else None,
        )

    def _dense_lookback(self, m: MetricIr) -> int:
        """Over a densified series a bounded time-ordered frame reads its `n` preceding
        calendar buckets, which the scan loads (a rolling 3-month sum labelled March spans
        January to March; without densify a frame counts the rows that exist, WIN-FRM-15)."""
        back = m.window.bucket_lookback if m.window is not None else None
        return back or 0 if self.dense is not None else 0

    def _lookahead(self, m: MetricIr) -> int | None:
        """How far a following frame reads past the range's end (1.14): n calendar buckets over
        a densified series; None (the scan keeps no end bound) when the frame is unbounded
        ahead, or counts rows of an undensified series, where its n next existing buckets may
        lie any distance after the end (a cost, never a wrong number)."""
        w = m.window
        n = w.bucket_lookahead if w is not None else None
        return n if self.dense is not None else None

    def _second_metrics(self) -> tuple[MetricIr, ...]:
        requested = {m.name for m in self.rq.planned_metrics}
        out: list[MetricIr] = []
        for m in self.windowed:
            second = m.window.second_metric if m.window is not None else None
            if second is not None and second not in requested:
                out.append(self.model.metrics[second])
        return tuple(dict.fromkeys(out))

    # -- expansion ----------------------------------------------------------------------------
    def _expand(self, tf: TimeFilter) -> TimeFilter:
        start, end = tf.start, tf.end
        new_start = start
        if start is not None:
            # nested windows (WIN-19-06) compose their lookbacks: an upper stage's offset
            # reads the stage below at its shifted buckets, which read further back in turn
            new_start = start
            for level in (3, 2, 1):
                metrics = [m for m in self.all_windows if self._level(m) == level]
                lows: list[dt.date | dt.datetime] = [new_start]
                for m in metrics:
                    lows.extend(self._lows(m, new_start))
                new_start = min(lows, key=_sort_key)
            if any(m.window is not None and m.window.reads_history for m in self.all_windows):
                new_start = None  # 1.15 history: the whole history before the range is read
        new_end = end
        if end is not None:
            highs = [end]
            for level in (3, 2, 1):  # nested forward offsets compose as the lookbacks do
                top = max(highs, key=_sort_key)
                for m in self.all_windows:
                    if self._level(m) != level:
                        continue
                    shift = m.window.shift if m.window is not None else None
                    if shift is not None and shift.direction == "forward":
                        highs.append(shift_when(top, shift.count, shift.granularity))
            ahead = [self._lookahead(m) for m in self.all_windows if m.window.reads_ahead]  # type: ignore[union-attr]
            if any(n is None for n in ahead):
                return replace(tf, start=new_start, end=None)
            if ahead and self.grain is not None:  # densified: n calendar buckets ahead
                highs.append(shift_when(end, max(ahead), self.grain))  # type: ignore[type-var]
            new_end = max(highs, key=_sort_key)
        # week starts are the calendar's, not the dialect's: every low is a literal (WIN-FRM-19)
        return replace(tf, start=new_start, end=new_end)

    def _level(self, m: MetricIr) -> int:
        """The window stage `m` is computed in: 1, or its compose's level (WIN-19-06)."""
        if m in self.nested and m.derive is not None:
            return m.derive.level
        return 1

    def _lows(self, m: MetricIr, start: dt.date | dt.datetime) -> list[dt.date | dt.datetime]:
        """The first instants window metric `m` reads for a bucket from `start` on: its back
        offset, its reset period's start, its densified frame's lookback."""
        cal = self.model.calendar
        lows: list[dt.date | dt.datetime] = []
        shift = m.window.shift if m.window is not None else None
        reset = m.window.reset_grain if m.window is not None else None
        if shift is not None and shift.direction == "back":
            lows.append(shift_when(start, -shift.count, shift.granularity))
        if reset is not None:  # the reset period's start on the model's calendar
            lows.append(trunc_when(start, reset, cal))
        span = _span(m.window)
        if span is not None:  # a calendar span (1.15) reads that far back, dense or not
            lows.append(shift_when(start, -span.count, span.granularity))
        back = self._dense_lookback(m)
        if back and self.grain is not None:  # densified: n calendar buckets back
            low = shift_when(start, -back, self.grain)
            lows.append(trunc_when(low, self.grain, cal) if self.grain != "day" else low)
        return lows

    # -- window metrics -------------------------------------------------------------------------
    def _window_metric(self, m: MetricIr, time_dim: ResolvedDim | None) -> WindowMetric:
        w = m.window
        time_key = time_dim.output if time_dim is not None else None
        dims = [d.output for d in self.rq.dims]
        # the axis grouped again at the query grain (sale_date:month beside metric_time:month)
        # is the same time key, not a partition (every offset would read NULL)
        same_key = {
            d.output
            for d in self.rq.dims
            if time_dim is not None and d.grain == time_dim.grain and self._on_axis(d, self.axis)
        }
        non_time = [d for d in dims if d != time_key and d not in same_key]
        assert w is not None
        ordered_by_time = w.ordered_by_time
        partition_spec = w.partition_spec
        if partition_spec is None:
            partition = non_time
        else:
            mode = partition_spec.mode
            if mode == "none":
                partition = []
            elif mode == "time_bucket":
                partition = [time_key] if time_key else []
            else:
                base = non_time if ordered_by_time else dims
                if mode == "query_dimensions_except":
                    excluded = {
                        d.output
                        for d in self.rq.dims
                        if d.field is not None and d.field.qualified in partition_spec.exclude
                    }
                    base = [d for d in base if d not in excluded]
                partition = base
        if w.one_row_per_bucket:
            self._check_one_row(m, [d for d in non_time if d not in partition])
        # Positional results need a total order (WIN-RNK-06, WIN-VAL-06); so does a ROWS frame
        # whose partition holds several rows per bucket, or its value would depend on the
        # warehouse's peer order. Peer-aware ranks and RANGE frames keep their peers.
        order_cols = {time_key} if ordered_by_time else set()
        tiebreak = (
            [d for d in dims if d not in partition and d not in order_cols]
            if w.wants_total_order
            else []
        )
        second_col = None
        second = w.second_metric
        if second is not None:
            second_col = self.model.metrics[second].measures[0]
        return WindowMetric(
            name=m.name,
            base_column=series_name(m) if needs_series(m) else m.measures[0],
            spec=w,
            partition=tuple(partition),
            tiebreak=tuple(tiebreak),
            second_column=second_col,
        )

    def _check_one_row(self, m: MetricIr, outside: list[str]) -> None:
        """A streak reads its partition as one row per time bucket: a grouped dimension
        outside the partition would put several rows in a bucket."""
        if not outside:
            return
        spellings = [d.spelling for d in self.rq.dims if d.output in outside]
        raise QueryError(
            "window_partition_not_unique",
            f"window metric `{m.name}` counts a run over one row per time bucket, but its "
            f"partition leaves out {', '.join(spellings)}, which the query groups by: each "
            "bucket would hold several rows",
            metrics=[m.name],
            candidates=spellings,
            hint="remove " + " and ".join(f'"{x}"' for x in spellings) + " from group_by, or "
            'partition the streak by it ("partition": {"mode": "query_dimensions"})',
        )


def _totals_without_axis(m: MetricIr) -> bool:
    """A running sum / min / max / count over the whole history (time-ordered, unbounded,
    never reset, `history: "all"`, MetricFlow's all-time metric): without its time axis
    grouped it is its base's total per partition (a period_value has no coarser bucket to
    sample then). Any other running frame keeps the rule that the axis is grouped
    (`time_axis_not_grouped`, as the window spec and the reference engine have it)."""
    w = m.window
    return (
        w is not None
        and w.is_running
        and w.reads_history
        and w.window_function in ("sum", "min", "max", "count")
        and not getattr(w, "require_full_window", False)
    )


def _aligned(model: ModelIr) -> Callable[[MetricIr, str], bool]:
    """Does a window metric's offset land on buckets of a grain (a frame never does: its
    period_value always samples a coarser grain)?"""

    def aligned(m: MetricIr, grain: str) -> bool:
        shift = m.window.shift if m.window is not None else None
        if shift is None:
            return False
        return offset_aligned(shift.count, shift.granularity, grain, model.calendar)

    return aligned


def _starts_on_bucket(grain: str, period: str) -> bool:
    """Is the first `grain` bucket of a `period` a bucket the query builds: the grain nests
    in the period and is no coarser (a week's month start is no week bucket)."""
    return grain == period or (grain_rank(grain) < grain_rank(period) and nests(grain, period))


def _sort_key(v: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    return dt.datetime(v.year, v.month, v.day)


def _span(w: WindowSpec | None) -> Span | None:
    """The calendar span a frame reads back (1.15 `span`), else None."""
    return w.lookback_span if w is not None else None
