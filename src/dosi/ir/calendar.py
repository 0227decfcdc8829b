"""The compiled calendar (issue 22 items 4-6): the week start, the fiscal year, the retail
calendar and the calendar table a model declares (DATUS `calendar`, dosi.ext.calendar), and
the grains they add to every time axis.

`ModelIr.calendar` holds the model's; a query's `week_start` makes a copy with another week
start (dosi.query.calendar), so every layer below reads one `CalendarIr`. The Python bucket
arithmetic on bounds is dosi.plan.calendar; the SQL is dosi.sql.calendar.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from dosi.ext.grains import (
    DATE_PARTS,
    FISCAL_GRAINS,
    NATIVE_GRAINS,
    RETAIL_GRAINS,
    WEEKDAYS,
    is_native,
)

GrainKind = Literal["native", "fiscal", "retail", "table"]


@dataclass(frozen=True)
class RetailCalendar:
    """A 52/53-week retail year: it ends on `year_end_weekday` (0 = Monday) closest to
    (`nearest`) or last on or before (`last`) the last day of `year_end_month`; its months
    follow `pattern` weeks per quarter (4-4-5, 4-5-4 or 5-4-4), the 53rd week joining the
    last month."""

    pattern: tuple[int, int, int]
    year_end_month: int  # 1..12
    year_end_weekday: int  # 0 = Monday .. 6 = Sunday
    rule: Literal["last", "nearest"]

    @property
    def week_start(self) -> int:
        """Retail weeks start the day after the year-end weekday."""
        return (self.year_end_weekday + 1) % 7

    @property
    def month_weeks(self) -> tuple[int, ...]:
        """Weeks in each of the 12 months of a 52-week year."""
        return self.pattern * 4

    def describe(self) -> str:
        weekday = WEEKDAYS[self.year_end_weekday]
        which = "last" if self.rule == "last" else "nearest the end of"
        pattern = "-".join(str(n) for n in self.pattern)
        return f"retail {pattern}, the year ends on the {which} {weekday} of month {self.year_end_month}"


@dataclass(frozen=True)
class CalendarTable:
    """A calendar dataset: one row per day (`date_field`, unique), each extra grain a column
    naming the period that day belongs to (MetricFlow's custom granularities)."""

    dataset: str
    date_field: str
    grains: tuple[tuple[str, str], ...]  # (grain name, field of `dataset`)

    def field_of(self, grain: str) -> str | None:
        return next((f for g, f in self.grains if g == grain), None)


@dataclass(frozen=True)
class CalendarIr:
    week_start: int = 0  # 0 = Monday .. 6 = Sunday (Python's weekday())
    fiscal_start_month: int | None = None  # 1..12; None: no fiscal grains declared
    retail: RetailCalendar | None = None
    table: CalendarTable | None = None

    def kind(self, grain: str) -> GrainKind | None:
        """What buckets `grain` on this calendar, or None when it has no such grain."""
        if is_native(grain):
            return "native"
        if grain in FISCAL_GRAINS and self.fiscal_start_month is not None:
            return "fiscal"
        if grain in RETAIL_GRAINS and self.retail is not None:
            return "retail"
        if self.table is not None and self.table.field_of(grain) is not None:
            return "table"
        return None

    def grains(self) -> tuple[str, ...]:
        """Every grain a time axis takes on this calendar, finest first within each kind."""
        out = list(NATIVE_GRAINS)
        if self.fiscal_start_month is not None:
            out.extend(FISCAL_GRAINS)
        if self.retail is not None:
            out.extend(RETAIL_GRAINS)
        if self.table is not None:
            out.extend(g for g, _ in self.table.grains)
        return tuple(out)

    def parts(self) -> tuple[str, ...]:
        return DATE_PARTS

    def with_week_start(self, week_start: int) -> CalendarIr:
        return self if week_start == self.week_start else replace(self, week_start=week_start)

    @property
    def week_start_name(self) -> str:
        return WEEKDAYS[self.week_start]


DEFAULT_CALENDAR = CalendarIr()
