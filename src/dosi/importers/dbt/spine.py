"""MetricFlow's time spine and cumulative sampling as dosi says them (issue 22).

A MetricFlow cumulative metric accumulates per day of its time spine (or per its agg time
dimension's grain when that is coarser) and, queried by a coarser grain, reports the `first`
(MetricFlow's default), `last` or `average` of those running values: its `period_agg`. That is
D-WINDOW's `period_value` on the cumulative window (docs/extensions/d-window.md).

The project's day time spine becomes a dataset and the model's DOSI `time_spine` setting, with
`bounds: "table"`: a densified query without a time_range spans every spine row, as MetricFlow's
joins to the spine do (docs/densify.md). Queries of `join_to_timespine` metrics densify
(dosi.importers.dbt.queries); queries of offset and cumulative metrics densify `covered`
(every spine bucket where a metric input has data after its shift or within its window, as
MetricFlow's spine joins for them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest
from dbt_semantic_interfaces.type_enums.metric_type import MetricType
from dbt_semantic_interfaces.type_enums.period_agg import PeriodAggregation

from dosi.ext.grains import is_date_part
from dosi.ext.window.period_value import PERIOD_GRAINS
from dosi.importers.common import field_obj, safe_name
from dosi.importers.dbt.names import Element, item_spelling

_PICKS = {
    PeriodAggregation.FIRST: "first",
    PeriodAggregation.LAST: "last",
    PeriodAggregation.AVERAGE: "average",
}


def period_value(period: PeriodAggregation, time: Element | None) -> dict[str, Any]:
    """The `period_value` of a cumulative metric: its period_agg over running values of the
    agg time dimension's grain (a day unless the dimension is stored coarser)."""
    grain = (time.grain if time is not None else None) or "day"
    if grain not in PERIOD_GRAINS:
        grain = "day"
    return {"value": _PICKS[period], "grain": grain}


@dataclass(frozen=True)
class SpineTable:
    """MetricFlow's day time spine: the table, its date column."""

    source: str
    column: str


def day_spine(manifest: PydanticSemanticManifest) -> SpineTable | None:
    """The project's day-grain time spine (`time_spines`, else the legacy
    `time_spine_table_configurations`); None when it declares none."""
    pc = manifest.project_configuration
    for ts in pc.time_spines or ():
        if str(ts.primary_column.time_granularity.value).lower() == "day":
            rel = ts.node_relation
            source = rel.relation_name or ".".join(
                p for p in (rel.database, rel.schema_name, rel.alias) if p
            )
            return SpineTable(source, ts.primary_column.name)
    for legacy in pc.time_spine_table_configurations or ():
        if str(legacy.grain.value).lower() == "day":
            return SpineTable(legacy.location, legacy.column_name)
    return None


def spine_dataset(spine: SpineTable, taken: Iterable[str]) -> dict[str, Any]:
    """The spine as a dataset: one date field, one row per day."""
    name = safe_name("time_spine", taken)
    f = field_obj("ds", spine.column, datatype="Date", is_time=True)
    return {
        "name": name,
        "source": spine.source,
        "primary_key": ["ds"],
        "description": "MetricFlow's day time spine (dosi import dbt): one row per day.",
        "fields": [f],
    }


def spine_setting(dataset: str, field: str = "ds") -> dict[str, Any]:
    """The model's DOSI entry: densified queries read the spine table, and without a
    time_range span every row of it, as MetricFlow's time spine joins do (docs/densify.md)."""
    data = {"time_spine": {"dataset": dataset, "field": field, "bounds": "table"}}
    return {"vendor_name": "DOSI", "data": json.dumps(data)}


def spine_densify(
    manifest: PydanticSemanticManifest,
    metrics: Sequence[str],
    query: Mapping[str, Any],
    axes: Iterable[str] = (),
) -> str | None:
    """The densify mode of a query MetricFlow answers over its time spine: `time` for a
    join_to_timespine metric, `covered` for an offset or cumulative one; None otherwise."""
    axes = tuple(axes)
    if joins_time_spine(manifest, metrics, query, axes):
        return "time"
    if not _on_spine_axis(manifest, query, axes, buckets_only=True):
        return None
    by_name = {m.name: m for m in manifest.metrics}
    return "covered" if any(_windowed(by_name, n, set()) for n in metrics) else None


def _windowed(by_name: Mapping[str, Any], name: str, seen: set[str]) -> bool:
    """The metric (or an input of it, recursively) is cumulative or reads an offset input."""
    m = by_name.get(name)
    if m is None or name in seen:
        return False
    seen.add(name)
    if m.type is MetricType.CUMULATIVE:
        return True
    for inp in m.type_params.metrics or ():
        if inp.offset_window is not None or inp.offset_to_grain is not None:
            return True
        if _windowed(by_name, inp.name, seen):
            return True
    return False


def _on_spine_axis(
    manifest: PydanticSemanticManifest,
    query: Mapping[str, Any],
    axes: Iterable[str],
    *,
    buckets_only: bool = False,
) -> bool:
    """The project has a day spine and the query groups by metric_time (or a metric's axis)
    at a grain (`buckets_only`: a time bucket, not a date part)."""
    if day_spine(manifest) is None:
        return False
    on_axis = {"metric_time", *axes}
    for g in (item_spelling(g) for g in query.get("group_by") or ()):
        field, _, grain = g.partition(":")
        if grain and field in on_axis and not (buckets_only and is_date_part(grain)):
            return True
    return False


def joins_time_spine(
    manifest: PydanticSemanticManifest,
    metrics: Sequence[str],
    query: Mapping[str, Any],
    axes: Iterable[str] = (),
) -> bool:
    """A query MetricFlow answers on every spine bucket: a queried simple metric joins the
    time spine (`join_to_timespine`; or a derived metric reads one unshifted), the project
    has a day spine, and the query groups by metric_time or the metric's agg time dimension (`axes`, qualified) at a grain. A where
    filter on another grouped dimension is applied after the spine join as well, which drops
    every filled row: no densify then."""
    if not _on_spine_axis(manifest, query, axes):
        return False
    group_by = [item_spelling(g) for g in query.get("group_by") or ()]
    where = str(query.get("where_sql") or "")
    if any(":" not in g and g in where for g in group_by):
        return False
    by_name = {m.name: m for m in manifest.metrics}
    return any(_joins_spine(by_name, name, set()) for name in metrics)


def _joins_spine(by_name: Mapping[str, Any], name: str, seen: set[str]) -> bool:
    """A simple metric that joins the time spine, or a derived one over such an input (not
    shifted: an offset input reads the spine where its shifted value exists)."""
    m = by_name.get(name)
    if m is None or name in seen:
        return False
    seen.add(name)
    if m.type is MetricType.SIMPLE:
        return bool(m.type_params.join_to_timespine)
    if m.type is not MetricType.DERIVED:
        return False
    return any(
        inp.offset_window is None
        and inp.offset_to_grain is None
        and _joins_spine(by_name, inp.name, seen)
        for inp in m.type_params.metrics or ()
    )
