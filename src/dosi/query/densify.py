"""The query key `densify` resolved against the query: which grouped time buckets a time spine
fills, in which mode.

Modes (dosi.query.densify_shape): `time` returns every bucket of the grouped time grain in
the time_range (or between the data's first and last bucket); `all` also crosses the grouped
categorical values; `windows` computes the window metrics over that filled series and returns
the rows that have data; `covered` returns those rows and the empty buckets in which a window
metric has a value (MetricFlow's offset and cumulative metrics over its time spine). The query's `densify` wins; absent, the model's default (its DOSI
setting `densify`) applies. Without densify, nothing changes: a window frame counts the
buckets that exist (WIN-FRM-15) and empty buckets are no rows.

The spine's keys are the grouped buckets of one time axis: `metric_time` at a grain (and a
concrete field grouped beside it that is some metric's axis), else the first concrete time
field grouped at a grain. Date parts and streaming windows are not time buckets
(`dosi.ext.grains.spine_step`): they stay categorical.
"""

from __future__ import annotations

from dataclasses import dataclass

from dosi.errors import QueryError
from dosi.ext.grains import spine_step
from dosi.ir.conform import same_dimension
from dosi.ir.model import ModelIr
from dosi.query.resolve import METRIC_TIME, ResolvedDim, ResolvedQuery
from dosi.query.spec import query_to_dict

#: The modes that densify a window stage's series only (the result keeps the rows with data,
#: and in `covered` the empty buckets a window metric has a value in).
SERIES_ONLY = ("windows", "covered")


@dataclass(frozen=True)
class ResolvedDensify:
    """What one query densifies: its mode, the grouped buckets of the spine's axis (`keys`) and
    the other group-by outputs (`others`, crossed in `all` mode)."""

    mode: str  # "time" | "all" | "windows" | "covered"
    keys: tuple[ResolvedDim, ...]
    others: tuple[str, ...]
    explicit: bool  # the query asked (False: the model's default)

    @property
    def crosses(self) -> bool:
        """Empty buckets get a row per observed combination of the other dims."""
        return self.mode == "all" or not self.others

    @property
    def outputs_dense(self) -> bool:
        """The result holds the empty buckets (not only the window series)."""
        return self.mode not in SERIES_ONLY


def resolve_densify(model: ModelIr, rq: ResolvedQuery) -> ResolvedDensify | None:
    """None when the query fills nothing (no densify, or the model's default and no time
    bucket grouped); `densify_needs_time_grain` when the query asks without one."""
    asked = rq.query.densify
    mode = asked if asked is not None else (model.densify or "none")
    if mode == "none":
        return None
    keys = _keys(model, rq)
    if not keys:
        if asked is None:
            return None  # the model's default applies to the queries it can
        raise QueryError(
            "densify_needs_time_grain",
            f'`densify: "{mode}"` fills empty time buckets, but the query groups by no time '
            "dimension at a grain",
            hint='group by "metric_time:<grain>" (e.g. metric_time:month), or drop densify',
            suggested_retry=_with_month(rq),
        )
    outs = {d.output for d in keys}
    others = tuple(d.output for d in rq.dims if d.output not in outs)
    return ResolvedDensify(mode, tuple(keys), others, asked is not None)


def _bucket(d: ResolvedDim) -> bool:
    return d.grain is not None and d.window is None and spine_step(d.grain) is not None


def _keys(model: ModelIr, rq: ResolvedQuery) -> list[ResolvedDim]:
    buckets = [d for d in rq.dims if _bucket(d)]
    if not buckets:
        return []
    if any(d.is_metric_time for d in buckets):
        axes = {m.time_axis for m in rq.planned_metrics if m.time_axis is not None}
        return [
            d
            for d in buckets
            if d.field is None or any(same_dimension(model, d.field.qualified, a) for a in axes)
        ]
    first = buckets[0].field
    assert first is not None
    return [
        d
        for d in buckets
        if d.field is not None and same_dimension(model, d.field.qualified, first.qualified)
    ]


def _with_month(rq: ResolvedQuery) -> dict:
    fixed = query_to_dict(rq.query)
    fixed["group_by"] = [*fixed.get("group_by", []), f"{METRIC_TIME}:month"]
    return fixed
