"""The time grain vocabulary every layer shares (issue 22): which buckets a time axis can be
grouped into, how grains nest, and the date parts that are groupings but not buckets.

Three kinds of grain:
* native grains (`second` .. `year`): a truncation every dialect renders (`Dialect.bucket`);
  `week` starts on the calendar's `week_start` (Monday unless the model or query says so);
* calendar grains, declared by the model's DATUS `calendar` (dosi.ext.calendar): the fiscal
  `fiscal_quarter` / `fiscal_year` (a year starting in any month) and the retail
  `retail_month` / `retail_quarter` / `retail_year` (4-4-5, 4-5-4, 5-4-4 weeks);
* table grains: columns of a calendar dataset the model names (custom granularities); any
  name the calendar declares.

Every bucket is named by its first instant (a DATE for Date axes, else a timestamp), so buckets
of every grain sort in time. Densification asks one question (`spine_step`): the native step a
series of every bucket is built at before each step is bucketed again.

Date parts (`day_of_week`, ...) are integers, never buckets: they group but do not order a
series, so a window along time, a time spine or a reset never reads them.
"""

from __future__ import annotations

SUB_DAY_GRAINS: tuple[str, ...] = ("second", "minute", "hour")
#: The 1.x Granularity enum (CORE-Q-03): what D-GRAIN, D-WINDOW and time_range share.
DAY_GRAINS: tuple[str, ...] = ("day", "week", "month", "quarter", "year")
NATIVE_GRAINS: tuple[str, ...] = SUB_DAY_GRAINS + DAY_GRAINS
FISCAL_GRAINS: tuple[str, ...] = ("fiscal_quarter", "fiscal_year")
RETAIL_GRAINS: tuple[str, ...] = ("retail_month", "retail_quarter", "retail_year")
CALENDAR_GRAINS: tuple[str, ...] = FISCAL_GRAINS + RETAIL_GRAINS
#: Every grain name that needs no calendar table (native and declared-calendar grains).
KNOWN_GRAINS: tuple[str, ...] = NATIVE_GRAINS + CALENDAR_GRAINS

#: Date parts as groupings: integers (documented numbering in docs/calendar.md).
#: day_of_week is 1..7 from the calendar's week_start (ISO 1=Monday..7=Sunday by default);
#: week_of_year is the ISO 8601 week (1..53) whatever the week start.
DATE_PARTS: tuple[str, ...] = (
    "minute_of_hour",
    "hour_of_day",
    "day_of_week",
    "day_of_month",
    "day_of_year",
    "week_of_year",
    "month_of_year",
    "quarter_of_year",
    "year_number",
)
#: The date parts finer than a day: they need a timestamp axis.
SUB_DAY_PARTS: frozenset[str] = frozenset({"minute_of_hour", "hour_of_day"})

WEEKDAYS: tuple[str, ...] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
#: The week starts the `week_start` keys accept (issue 22 item 4); Monday is the default.
WEEK_STARTS: tuple[str, ...] = ("monday", "sunday", "saturday")

_RANK: dict[str, int] = {g: 10 * i for i, g in enumerate(NATIVE_GRAINS)}
# calendar grains rank with the native grain of their size (reset / time-key choices)
_RANK.update(
    fiscal_quarter=_RANK["quarter"],
    fiscal_year=_RANK["year"],
    retail_month=_RANK["month"],
    retail_quarter=_RANK["quarter"],
    retail_year=_RANK["year"],
)
_TABLE_RANK = _RANK["day"] + 5  # a table grain: whole days, sizes unknown

#: Native grains of a fixed length, in seconds (offset alignment; streaming intervals).
FIXED_SECONDS: dict[str, int] = {
    "second": 1,
    "minute": 60,
    "hour": 3_600,
    "day": 86_400,
    "week": 7 * 86_400,
}
#: Grains measured in calendar months (a shift by them is an INTERVAL of months).
MONTHS: dict[str, int] = {
    "month": 1,
    "quarter": 3,
    "year": 12,
    "fiscal_quarter": 3,
    "fiscal_year": 12,
}


def is_native(grain: str) -> bool:
    return grain in _NATIVE


def is_sub_day(grain: str) -> bool:
    return grain in SUB_DAY_GRAINS


def is_date_part(name: str) -> bool:
    return name in DATE_PARTS


def grain_rank(grain: str) -> int:
    """An order by size: second < minute < hour < day < table grains < week < month (=
    retail_month) < quarter (= fiscal / retail quarters) < year (= fiscal / retail years)."""
    return _RANK.get(grain, _TABLE_RANK)


def built_from(grain: str) -> str:
    """The finest native grain whose buckets this grain is a union of: a field stored at
    that grain (D-GRAIN) or finer can be grouped by it. Fiscal periods are whole months;
    retail periods (weeks starting the day after the year-end weekday, not necessarily the
    calendar's week_start) and table grains are whole days."""
    if grain in _NATIVE:
        return grain
    if grain in FISCAL_GRAINS:
        return "month"
    return "day"


def spine_step(grain: str) -> str | None:
    """The native grain a dense series of `grain` buckets is generated at (issue 22 item 1):
    the grain itself for native grains, one day for calendar and table grains. Bucketing
    every step with the same bucketing as the aggregate and keeping the distinct buckets
    gives every bucket of the grain once. None for a date part: it does not bucket time, so
    densification treats its column as categorical."""
    if is_date_part(grain):
        return None
    return grain if grain in _NATIVE else "day"


def weekday_number(name: str) -> int:
    """`monday` -> 0 .. `sunday` -> 6 (Python's `date.weekday()`)."""
    return WEEKDAYS.index(name)


_NATIVE = frozenset(NATIVE_GRAINS)
