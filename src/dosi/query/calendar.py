"""Grains and calendars at query time (issue 22 items 2-6): which grains and date parts a time
field takes on the model's calendar, the D-GRAIN floor (`grain_too_fine`), and the query's
own `week_start`, which replaces the model's for that query only.

A grain is checked here once, against `ModelIr.calendar`: native grains need a time field
(sub-day grains a timestamp one), fiscal / retail grains a declared fiscal year / retail
calendar, table grains a declared calendar table; a date part (`day_of_week`, ...) is a
grouping of its own, never a bucket. `unknown_grain` lists what the calendar offers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.ext.grains import (
    CALENDAR_GRAINS,
    DATE_PARTS,
    FISCAL_GRAINS,
    SUB_DAY_PARTS,
    WEEK_STARTS,
    built_from,
    grain_rank,
    is_date_part,
    is_sub_day,
    weekday_number,
)
from dosi.ir.model import FieldIr, ModelIr

# declared datatypes a date truncation cannot read (Opaque and undeclared types may be dates)
_UNBUCKETABLE = frozenset({"String", "Integer", "Decimal", "Float", "Boolean"})
_TEMPORAL = ("Date", "DateTime", "DateTimeTz")

#: the base grain each date part is read from (a D-GRAIN floor: a month-stored field has a
#: month_of_year but no day_of_week)
PART_BASE: dict[str, str] = {
    "minute_of_hour": "minute",
    "hour_of_day": "hour",
    "day_of_week": "day",
    "day_of_month": "day",
    "day_of_year": "day",
    "week_of_year": "week",
    "month_of_year": "month",
    "quarter_of_year": "quarter",
    "year_number": "year",
}


def parse_week_start(value: Any) -> str | None:
    """The query key `week_start`: monday, sunday or saturday (None: the model's)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in WEEK_STARTS:
        return value.strip().lower()
    raise QueryShapeError(
        "invalid_query",
        f"`week_start` must be one of {', '.join(WEEK_STARTS)} (got {value!r})",
        candidates=closest(str(value), WEEK_STARTS) or list(WEEK_STARTS),
        hint='e.g. "week_start": "sunday"',
    )


def with_week_start(model: ModelIr, week_start: str | None) -> ModelIr:
    """The model as one query sees it: its calendar with the query's week start."""
    if week_start is None:
        return model
    cal = model.calendar.with_week_start(weekday_number(week_start))
    return model if cal is model.calendar else replace(model, calendar=cal)


def floor_of(grain: str) -> str:
    """The native grain a field must be stored at (or finer) to be grouped by `grain`."""
    return PART_BASE[grain] if is_date_part(grain) else built_from(grain)


def check_known(model: ModelIr, grain: str, spelling: str) -> None:
    """`unknown_grain` for a name the model's calendar does not define."""
    if is_date_part(grain) or model.calendar.kind(grain) is not None:
        return
    offered = [*model.calendar.grains(), *DATE_PARTS]
    if grain in CALENDAR_GRAINS:
        what = "fiscal year" if grain in FISCAL_GRAINS else "retail calendar"
        key = "fiscal_year" if grain in FISCAL_GRAINS else "retail"
        raise QueryShapeError(
            "unknown_grain",
            f"`{grain}` in `{spelling}` needs a {what}, and the model declares none",
            candidates=offered,
            hint=f"declare one in the model's DATUS `calendar.{key}` (docs/calendar.md)",
        )
    raise QueryShapeError(
        "unknown_grain",
        f"unknown time grain `{grain}` in `{spelling}`",
        candidates=closest(grain, offered) or offered,
        hint="grains: "
        + ", ".join(model.calendar.grains())
        + "; date parts: "
        + ", ".join(DATE_PARTS),
    )


def check_grain(model: ModelIr, f: FieldIr, grain: str, spelling: str) -> None:
    """D-GRAIN: a grain finer than the stored one is `grain_too_fine` (a grain or date part
    is checked by the native grain it is read from). A grain truncates dates and timestamps,
    so an is_time field whose declared datatype is not temporal (TPC-DS `d_year` Integer)
    takes none: refused here rather than compiled to a truncation the warehouse rejects."""
    check_known(model, grain, spelling)
    if f.datatype in _UNBUCKETABLE and not f.encoded:  # D-FORMAT decodes strings / ints
        dates = [
            x.qualified
            for x in model.datasets[f.dataset].fields.values()
            if x.is_time and x.datatype in _TEMPORAL
        ]
        raise QueryError(
            "grain_on_non_time_dimension",
            f"`{f.qualified}` is a time field of datatype {f.datatype}; a grain truncates dates "
            f"and timestamps, so `{spelling}` does not apply",
            candidates=[f"{x}:{grain}" for x in dates],
            hint=f"group by `{f.qualified}` without a grain"
            + (f", or by `{dates[0]}:{grain}`" if dates else ""),
        )
    native = stored_grain(f)
    base = floor_of(grain)
    if native is not None and grain_rank(base) < grain_rank(native):
        ok = [g for g in model.calendar.grains() if grain_rank(floor_of(g)) >= grain_rank(native)]
        ok += [p for p in DATE_PARTS if grain_rank(PART_BASE[p]) >= grain_rank(native)]
        stored = (
            f' (D-FORMAT time.format "{f.time_format.format}")'
            if f.time_format is not None and f.encoded
            else ""
        )
        sub_day = is_sub_day(grain) or grain in SUB_DAY_PARTS
        why = " (a DATE has no time of day)" if sub_day and native == "day" else ""
        raise QueryError(
            "grain_too_fine",
            f"`{f.qualified}` is stored at {native} grain{stored}{why}; `{spelling}` asks for "
            f"{grain}",
            candidates=ok,
            hint=f"use {native} or a coarser grain ({', '.join(ok[:8])})"
            + (", or a timestamp field" if sub_day else ""),
        )


def stored_grain(f: FieldIr) -> str | None:
    """The finest grain `f` holds: its D-GRAIN, else day for a DATE (GRAIN-03: a DATE holds
    no time of day), else None (a timestamp: every grain down to the second)."""
    if f.time_granularity is not None:
        return f.time_granularity
    return "day" if _is_date_typed(f) else None


def _is_date_typed(f: FieldIr) -> bool:
    if f.time_format is not None:
        return not f.time_format.has_time
    return f.datatype == "Date"
