"""D-CALENDAR: the `calendar` key of the semantic model (dosi's own DATUS key, issue 22 items 4-6).

```json
{"v": "1.10", "calendar": {
   "week_start": "sunday",
   "fiscal_year": {"start_month": 4},
   "retail": {"pattern": "4-5-4", "year_end_month": 1, "year_end_weekday": "saturday",
              "rule": "nearest"},
   "table": {"dataset": "calendar", "date": "ds", "grains": ["fiscal_week", "alien_day"]}}}
```

* `week_start`: `monday` (the default), `sunday` or `saturday`: where every `week` bucket,
  `reset: week`, week alignment and `day_of_week` numbering start, on every dialect;
* `fiscal_year.start_month`: 1..12 or a month name; adds `fiscal_quarter` and `fiscal_year`;
* `retail`: a 52/53-week year of `pattern` weeks per quarter month (4-4-5, 4-5-4, 5-4-4),
  ending on `year_end_weekday` last on or before (`last`) or nearest to (`nearest`, the
  default) the last day of `year_end_month`; adds `retail_month`, `retail_quarter`,
  `retail_year`;
* `table`: a dataset with one row per `date` whose columns name extra grains (a list of
  field names, or `{grain: field}`).

Only the shape is checked here; the dataset and fields are the compiler's
(dosi.compiler.calendar). Ignore impact `degraded`: without the key the grains it adds do
not resolve (`unknown_grain`), and week buckets start on Monday.
"""

from __future__ import annotations

import calendar as pycal
from dataclasses import dataclass
from typing import Any, Literal

from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as show
from dosi.ext.grains import DATE_PARTS as _PARTS
from dosi.ext.grains import KNOWN_GRAINS, WEEK_STARTS, WEEKDAYS

CALENDAR_KEYS = ("week_start", "fiscal_year", "retail", "table")
FISCAL_KEYS = ("start_month",)
RETAIL_KEYS = ("pattern", "year_end_month", "year_end_weekday", "rule")
TABLE_KEYS = ("dataset", "date", "grains")
PATTERNS: dict[str, tuple[int, int, int]] = {
    "4-4-5": (4, 4, 5),
    "4-5-4": (4, 5, 4),
    "5-4-4": (5, 4, 4),
}
RULES: tuple[str, ...] = ("nearest", "last")
MONTH_NAMES: tuple[str, ...] = tuple(m.lower() for m in pycal.month_name[1:])


@dataclass(frozen=True)
class RetailSpec:
    pattern: tuple[int, int, int]
    year_end_month: int
    year_end_weekday: int  # 0 = Monday
    rule: Literal["last", "nearest"]


@dataclass(frozen=True)
class CalendarTableSpec:
    dataset: str
    date: str
    grains: tuple[tuple[str, str], ...]  # (grain name, field name)


@dataclass(frozen=True)
class CalendarSpec:
    """The `calendar` payload as declared (None: not declared)."""

    week_start: str | None = None
    fiscal_start_month: int | None = None
    retail: RetailSpec | None = None
    table: CalendarTableSpec | None = None


class _Problems:
    def __init__(self) -> None:
        self.items: list[tuple[str, str | None]] = []

    def add(self, message: str, hint: str | None = None) -> None:
        self.items.append((message, hint))


def read_calendar(value: Any) -> tuple[CalendarSpec | None, list[tuple[str, str | None]]]:
    """The spec and the problems (message, hint), each naming `calendar.<key>`."""
    p = _Problems()
    if not isinstance(value, dict):
        p.add(f"`calendar` must be an object (got {json_type(value)} {show(value)})")
        return None, p.items
    _deny(p, "calendar", value, CALENDAR_KEYS)
    week_start = None
    if value.get("week_start") is not None:
        week_start = _enum(p, "calendar.week_start", value["week_start"], WEEK_STARTS)
    fiscal = None
    if value.get("fiscal_year") is not None:
        fiscal = _fiscal(p, value["fiscal_year"])
    retail = None
    if value.get("retail") is not None:
        retail = _retail(p, value["retail"])
    table = None
    if value.get("table") is not None:
        table = _table(p, value["table"])
    if p.items:
        return None, p.items
    return CalendarSpec(week_start, fiscal, retail, table), []


def _deny(p: _Problems, key: str, value: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for k in value:
        if k not in allowed:
            p.add(f"`{key}.{k}` is not a key of `{key}` ({', '.join(allowed)})")


def _enum(p: _Problems, key: str, value: Any, allowed: tuple[str, ...]) -> Any:
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    p.add(f"`{key}` must be one of {', '.join(allowed)} (got {json_type(value)} {show(value)})")
    return None


def _month(p: _Problems, key: str, value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 12:
        return value
    if isinstance(value, str) and value.lower() in MONTH_NAMES:
        return MONTH_NAMES.index(value.lower()) + 1
    p.add(
        f"`{key}` must be a month number 1..12 or a month name (got {json_type(value)} "
        f"{show(value)})",
        'e.g. 4 or "april" for a fiscal year starting on April 1',
    )
    return None


def _fiscal(p: _Problems, value: Any) -> int | None:
    key = "calendar.fiscal_year"
    if not isinstance(value, dict) or "start_month" not in value:
        p.add(f"`{key}` must be an object {{start_month}}", 'e.g. {"start_month": 4}')
        return None
    _deny(p, key, value, FISCAL_KEYS)
    return _month(p, f"{key}.start_month", value["start_month"])


def _retail(p: _Problems, value: Any) -> RetailSpec | None:
    key = "calendar.retail"
    if not isinstance(value, dict):
        p.add(
            f"`{key}` must be an object {{pattern, year_end_month, year_end_weekday, rule?}}",
            'e.g. {"pattern": "4-5-4", "year_end_month": 1, "year_end_weekday": "saturday"}',
        )
        return None
    _deny(p, key, value, RETAIL_KEYS)
    missing = [k for k in RETAIL_KEYS[:3] if value.get(k) is None]
    for k in missing:
        p.add(f"`{key}.{k}` is required")
    if missing:
        return None
    pattern = _enum(p, f"{key}.pattern", value["pattern"], tuple(PATTERNS))
    month = _month(p, f"{key}.year_end_month", value["year_end_month"])
    weekday = _enum(p, f"{key}.year_end_weekday", value["year_end_weekday"], WEEKDAYS)
    rule = "nearest"
    if value.get("rule") is not None:
        rule = _enum(p, f"{key}.rule", value["rule"], RULES)
    if pattern is None or month is None or weekday is None or rule is None:
        return None
    return RetailSpec(PATTERNS[pattern], month, WEEKDAYS.index(weekday), rule)


def _name(p: _Problems, key: str, value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and value == value.strip():
        return value
    p.add(f"`{key}` must be a name string (got {json_type(value)} {show(value)})")
    return None


def _table(p: _Problems, value: Any) -> CalendarTableSpec | None:
    key = "calendar.table"
    if not isinstance(value, dict):
        p.add(
            f"`{key}` must be an object {{dataset, date, grains}}",
            'e.g. {"dataset": "calendar", "date": "ds", "grains": ["fiscal_week"]}',
        )
        return None
    _deny(p, key, value, TABLE_KEYS)
    dataset = _name(p, f"{key}.dataset", value.get("dataset"))
    date = _name(p, f"{key}.date", value.get("date"))
    raw = value.get("grains")
    pairs: list[tuple[str, str]] = []
    if isinstance(raw, list):
        pairs = [(g, g) for g in raw if isinstance(g, str)]
        ok = len(pairs) == len(raw)
    elif isinstance(raw, dict):
        pairs = [(g, f) for g, f in raw.items() if isinstance(f, str)]
        ok = len(pairs) == len(raw)
    else:
        ok = False
    if not ok or not pairs:
        p.add(
            f"`{key}.grains` must be a non-empty list of field names or an object "
            "{grain: field} (got " + f"{json_type(raw)} {show(raw)})"
        )
        return None
    seen: set[str] = set()
    for grain, _ in pairs:
        if grain in KNOWN_GRAINS or grain in _PARTS:
            p.add(
                f"`{key}.grains` names `{grain}`, a grain or date part dosi defines: a table "
                "grain needs a name of its own",
                'rename the grain with the object form {"my_' + grain + '": "' + grain + '"}',
            )
        elif not grain.isidentifier():
            p.add(f"`{key}.grains` names `{grain}`, which is not an identifier")
        elif grain in seen:
            p.add(f"`{key}.grains` names `{grain}` twice")
        seen.add(grain)
    if dataset is None or date is None or len(p.items):
        return None
    return CalendarTableSpec(dataset, date, tuple(pairs))
