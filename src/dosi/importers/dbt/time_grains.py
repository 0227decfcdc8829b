"""MetricFlow's time vocabulary in dosi's words (issue 22): grains, date parts and custom
granularities.

- Grains: MetricFlow's `second`, `minute` and `hour` are dosi's sub-day grains; `day` ..
  `year` are the same. dosi has no grain finer than a second, so `millisecond` and finer are
  refused with the need `sub_second_grain`.
- Date parts (`metric_time__extract_dow`): MetricFlow's EXTRACT parts map onto dosi's integer
  date parts. MetricFlow numbers `dow` as ISO (1 = Monday .. 7 = Sunday), which is dosi's
  `day_of_week` on a Monday week start, the start an import keeps (it never declares a
  `week_start`); `week` is the ISO week, as dosi's `week_of_year`; `day` is the day of the
  month.
- Custom granularities: columns of a MetricFlow time spine (`custom_granularities`) become
  grains of dosi's calendar table (DATUS `calendar.table`): the time spine is imported as a
  dataset with one row per day, and grouping by such a grain reads that day's column.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest

from dosi.ext.grains import DATE_PARTS, KNOWN_GRAINS, NATIVE_GRAINS
from dosi.importers.common import field_obj

#: MetricFlow date part -> dosi date part (docs/calendar.md "Date parts")
MF_DATE_PARTS: Mapping[str, str] = {
    "year": "year_number",
    "quarter": "quarter_of_year",
    "month": "month_of_year",
    "week": "week_of_year",
    "day": "day_of_month",
    "dow": "day_of_week",
    "doy": "day_of_year",
}
#: the grains MetricFlow and dosi share (second .. year)
SHARED_GRAINS: tuple[str, ...] = NATIVE_GRAINS
#: MetricFlow grains dosi has no bucket for
SUB_SECOND_GRAINS: frozenset[str] = frozenset({"millisecond", "microsecond", "nanosecond"})


@dataclass(frozen=True)
class SpineCalendar:
    """A MetricFlow time spine with custom granularities, as a dosi calendar dataset."""

    dataset: str
    date_field: str
    grains: dict[str, str] = field(default_factory=dict)  # MetricFlow name -> dosi grain
    columns: dict[str, str] = field(default_factory=dict)  # dosi grain -> the spine's column
    source: str = ""

    def dataset_obj(self) -> dict[str, Any]:
        """The Ossie dataset: the day (a `Date`, the primary key) and one field per grain."""
        fields = [
            field_obj(
                self.date_field,
                f"CAST({self.date_field} AS DATE)",
                datatype="Date",
                is_time=True,
                description="the time spine's day",
            )
        ]
        for grain, column in self.columns.items():
            fields.append(field_obj(grain, column, description=f"the custom granularity `{grain}`"))
        return {
            "name": self.dataset,
            "source": self.source,
            "primary_key": [self.date_field],
            "description": "MetricFlow's time spine: one row per day, with its custom "
            "granularities (dosi calendar-table grains)",
            "fields": fields,
        }

    def calendar(self) -> dict[str, Any]:
        """The DATUS `calendar` key naming the dataset as the model's calendar table."""
        return {
            "table": {
                "dataset": self.dataset,
                "date": self.date_field,
                "grains": {g: g for g in self.columns},
            }
        }


def dosi_date_part(part: str) -> str | None:
    """dosi's date part for MetricFlow's (`dow` -> `day_of_week`), None if it has none."""
    return MF_DATE_PARTS.get(part.lower())


def spine_calendar(manifest: PydanticSemanticManifest, taken: set[str]) -> SpineCalendar | None:
    """The day time spine that declares custom granularities, as a calendar dataset whose name
    differs from every semantic model's (`taken`); None when no spine declares any."""
    pc = manifest.project_configuration
    for ts in pc.time_spines or ():
        if not ts.custom_granularities:
            continue
        if str(getattr(ts.primary_column.time_granularity, "value", "")).lower() != "day":
            continue
        rel = ts.node_relation
        source = rel.relation_name or ".".join(
            p for p in (rel.database, rel.schema_name, rel.alias) if p
        )
        name = rel.alias
        while name in taken:
            name = f"{name}_calendar"
        grains: dict[str, str] = {}
        columns: dict[str, str] = {}
        date_field = ts.primary_column.name
        for cg in ts.custom_granularities:
            grain = cg.name
            # a name dosi already gives a grain or date part keeps clear of it
            while grain in KNOWN_GRAINS or grain in DATE_PARTS or grain == date_field:
                grain = f"{grain}_custom"
            grains[cg.name] = grain
            columns[grain] = cg.column_name or cg.name
        return SpineCalendar(name, date_field, grains, columns, source)
    return None


def default_grain(metrics: Sequence[tuple[str | None, Sequence[str | None]]]) -> str:
    """metric_time's grain when a query names none, as MetricFlow resolves it: each metric's
    declared default (`time_granularity`), else its time axes' finest grain, a sub-day one
    raised to `day`; the query takes the coarsest of its metrics' (so a monthly metric beside
    a daily one is asked by the month)."""
    order = ("nanosecond", "microsecond", "millisecond", *NATIVE_GRAINS)
    chosen: list[str] = []
    for declared, axes in metrics:
        if declared in order:
            chosen.append(declared)
            continue
        known = [g for g in axes if g in order]
        if known:
            finest = min(known, key=order.index)
            chosen.append(finest if order.index(finest) >= order.index("day") else "day")
    return max(chosen, key=order.index) if chosen else "day"


_MONTHS = {"month": 1, "quarter": 3, "year": 12}
_FIXED = {
    "second": dt.timedelta(seconds=1),
    "minute": dt.timedelta(minutes=1),
    "hour": dt.timedelta(hours=1),
    "day": dt.timedelta(days=1),
    "week": dt.timedelta(weeks=1),
}


def bucket_start(t: dt.datetime, grain: str) -> dt.datetime:
    """The first instant of the `grain` bucket holding `t` (weeks start on Monday, as an
    import's calendar does)."""
    if grain == "second":
        return t.replace(microsecond=0)
    if grain == "minute":
        return t.replace(second=0, microsecond=0)
    if grain == "hour":
        return t.replace(minute=0, second=0, microsecond=0)
    day = dt.datetime.combine(t.date(), dt.time())
    if grain == "week":
        return day - dt.timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    if grain == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    if grain == "year":
        return day.replace(month=1, day=1)
    return day


def bucket_end(t: dt.datetime, grain: str) -> dt.datetime:
    """The first instant after the `grain` bucket holding `t` (an exclusive range end)."""
    first = bucket_start(t, grain)
    if grain in _FIXED:
        return first + _FIXED[grain]
    y, m = divmod(first.month - 1 + _MONTHS[grain], 12)
    return first.replace(year=first.year + y, month=m + 1)
