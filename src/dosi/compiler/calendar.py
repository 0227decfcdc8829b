"""D-CALENDAR model compile: the `calendar` payload -> `CalendarIr` (issue 22 items 4-6).

The payload's shape is dosi.ext.calendar's; here the calendar table is checked against the
model: the dataset exists, its `date` field is a Date (or timestamp) column that is the
dataset's primary or a unique key (one row per day, so rolling day buckets up through it
never multiplies a row), and each grain names a field of it. A retail calendar's weeks start
the day after its year-end weekday: a declared `week_start` that disagrees is refused, so
every `week` bucket lies inside one retail month.
"""

from __future__ import annotations

from collections.abc import Mapping

from dosi.compiler.context import CompileContext
from dosi.errors import closest
from dosi.ext.calendar import CalendarSpec
from dosi.ext.grains import WEEKDAYS, weekday_number
from dosi.ir.calendar import DEFAULT_CALENDAR, CalendarIr, CalendarTable, RetailCalendar
from dosi.ir.model import DatasetIr

INVALID = "invalid_datus_extension"
PATH = "semantic_model"
_DAY_TYPES = (None, "Date", "DateTime", "DateTimeTz")


def compile_calendar(
    cx: CompileContext, spec: CalendarSpec | None, datasets: Mapping[str, DatasetIr]
) -> CalendarIr:
    if spec is None:
        return DEFAULT_CALENDAR
    retail = None
    if spec.retail is not None:
        r = spec.retail
        retail = RetailCalendar(r.pattern, r.year_end_month, r.year_end_weekday, r.rule)
    week_start = 0
    if spec.week_start is not None:
        week_start = weekday_number(spec.week_start)
    if retail is not None and spec.week_start is not None and week_start != retail.week_start:
        cx.sink.error(
            INVALID,
            f"`calendar.week_start` is {spec.week_start}, but the retail year ends on a "
            f"{WEEKDAYS[retail.year_end_weekday]}, so its weeks start on a "
            f"{WEEKDAYS[retail.week_start]}: week buckets would straddle retail months",
            path=PATH,
            hint=f'declare "week_start": "{WEEKDAYS[retail.week_start]}", or drop it',
        )
    table = _table(cx, spec, datasets)
    return CalendarIr(week_start, spec.fiscal_start_month, retail, table)


def _table(
    cx: CompileContext, spec: CalendarSpec, datasets: Mapping[str, DatasetIr]
) -> CalendarTable | None:
    t = spec.table
    if t is None:
        return None
    ds = datasets.get(t.dataset)
    if ds is None:
        cx.sink.error(
            INVALID,
            f"`calendar.table.dataset` names `{t.dataset}`, which is not a dataset of the model",
            path=PATH,
            candidates=tuple(closest(t.dataset, datasets) or sorted(datasets)),
        )
        return None
    ok = True
    date = ds.fields.get(t.date)
    if date is None:
        cx.sink.error(
            INVALID,
            f"`calendar.table.date` names `{t.date}`, which is not a field of `{ds.name}`",
            path=PATH,
            candidates=tuple(closest(t.date, ds.fields) or list(ds.fields)),
        )
        ok = False
    elif not date.is_time or date.datatype not in _DAY_TYPES:
        cx.sink.error(
            INVALID,
            f"`calendar.table.date` `{ds.name}.{t.date}` is not a date column (datatype "
            f"{date.datatype}); the calendar joins each day bucket to it",
            path=PATH,
            hint="name the calendar's Date field",
        )
        ok = False
    elif (t.date,) != ds.primary_key and (t.date,) not in ds.unique_keys:
        cx.sink.error(
            INVALID,
            f"`calendar.table.date` `{ds.name}.{t.date}` is not the primary key or a unique "
            f"key of `{ds.name}`: a day with two calendar rows would count its facts twice",
            path=PATH,
            hint=f"declare primary_key: [{t.date}] on `{ds.name}` (one row per day)",
        )
        ok = False
    for grain, name in t.grains:
        if name not in ds.fields:
            cx.sink.error(
                INVALID,
                f"`calendar.table.grains` names `{name}` (grain `{grain}`), which is not a "
                f"field of `{ds.name}`",
                path=PATH,
                candidates=tuple(closest(name, ds.fields) or list(ds.fields)),
            )
            ok = False
    if not ok:
        return None
    return CalendarTable(ds.name, t.date, t.grains)
