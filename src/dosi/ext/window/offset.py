"""The `offset` family: a calendar-shifted comparison (WM "General form — offset",
WIN-OFF-01..12; `pop` desugars here, `dosi.ext.window.pop`).

`offset` is `"<count> <granularity>"` (one trailing `s` accepted) or `{count, granularity,
direction?}`; the general form requires `calculation` (the pop sugar defaults it). An offset
spans at most 10,000 years, so shifted bounds and INTERVALs stay in range on every engine.

`{"period_start": "month"}` (1.15, in place of count and granularity) reads the first bucket
of the current month instead of a shifted one: the value at the start of the period
(MetricFlow's `offset_to_grain`), the same self-join on another key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from dosi.errors import closest
from dosi.ext.envelope import json_type
from dosi.ext.window.period_value import OFFSET_PICKS, PeriodValue, parse_period_value
from dosi.ext.window.reader import WindowReader, alternatives, present, show
from dosi.ext.window.spec import (
    GRAINS,
    RESET_GRAINS,
    Direction,
    Grain,
    Shift,
    SlotOutOfRange,
    WindowSlot,
    WindowSpec,
    key_in_object,
)

Calculation = Literal["value", "delta", "percent_change", "ratio"]

CALCULATIONS: tuple[str, ...] = ("value", "delta", "percent_change", "ratio")
DIRECTIONS: tuple[str, ...] = ("back", "forward")
OFFSET_KEYS: tuple[str, ...] = ("count", "granularity", "direction", "period_start")
#: The periods whose first bucket `period_start` reads (1.15).
PERIOD_STARTS: tuple[str, ...] = ("minute", "hour", "day", *RESET_GRAINS)
#: Top-level payload keys of the general offset form (the family's object and its calculation).
TOP_KEYS: tuple[str, ...] = ("offset", "calculation", "period_value")

#: The longest window offset per granularity: 10,000 years.
MAX_OFFSET_UNITS: dict[str, int] = {
    "second": 10_000 * 366 * 86_400,
    "minute": 10_000 * 366 * 1_440,
    "hour": 10_000 * 366 * 24,
    "day": 10_000 * 366,
    "week": 10_000 * 53,
    "month": 10_000 * 12,
    "quarter": 10_000 * 4,
    "year": 10_000,
    "fiscal_quarter": 10_000 * 4,
    "fiscal_year": 10_000,
    "retail_year": 10_000,
}


@dataclass(frozen=True)
class OffsetWindow(WindowSpec):
    """Calendar-shifted comparison (WM "General form — offset"; `pop` desugars here)."""

    count: int
    granularity: Grain
    direction: Direction = "back"
    calculation: Calculation = "percent_change"
    sugar: str | None = None
    #: 1.15: read the first bucket of this period instead of shifting (count is then 0)
    to_period_start: Grain | None = None
    #: 1.15: a query grain the shift does not land on is answered per this grain's buckets
    period_value: PeriodValue | None = None
    family: ClassVar[str] = "offset"

    @property
    def ordered_by_time(self) -> bool:
        return True

    @property
    def needs_time_axis(self) -> bool:
        """Offsets always need the time axis (WIN-OFF-12)."""
        return True

    @property
    def expands_scan(self) -> bool:
        """Offset lookback / lookahead widens the input scan (WIN-QRY-04)."""
        return True

    @property
    def shift(self) -> Shift | None:
        if self.to_period_start is not None:
            return None
        return Shift(self.count, self.granularity, self.direction)

    @property
    def period_start(self) -> Grain | None:
        return self.to_period_start

    @property
    def reset_grain(self) -> Grain | None:
        """The scan of a period-start offset starts at the period's first day, as a reset's."""
        return self.to_period_start

    @property
    def sampled(self) -> PeriodValue | None:
        return self.period_value

    @property
    def listed_function(self) -> str:
        return self.calculation

    def describe(self) -> str:
        if self.to_period_start is not None:
            return f"offset to the {self.to_period_start} start {self.calculation}"
        return f"offset {self.count} {self.granularity} {self.direction} {self.calculation}"


def parse(r: WindowReader, window: dict[str, Any]) -> OffsetWindow | None:
    """The general form's `offset` (a `calculation` is required)."""
    return parse_offset_family(r, window, None)


def parse_offset_family(
    r: WindowReader, raw: dict[str, Any], sugar: str | None
) -> OffsetWindow | None:
    off = _offset(r, raw["offset"])
    calc: str | None
    if present(raw, "calculation"):
        calc = r.enum("window.calculation", raw["calculation"], CALCULATIONS)
    elif sugar == "pop":
        calc = "percent_change"
    else:
        r.err(
            "window.calculation",
            "is required with window.offset in the general form (defaults belong to the pop sugar)",
            hint=f'add "calculation": one of {alternatives(CALCULATIONS)}, or write '
            '{"type": "pop", "offset": ...}',
        )
        calc = None
    period = None
    if present(raw, "period_value"):
        period = parse_period_value(r, "window.period_value", raw["period_value"], OFFSET_PICKS)
        if period is None:
            return None
    if off is None or calc is None:
        return None
    if isinstance(off, str):  # 1.15 period_start
        return OffsetWindow(0, off, "back", calc, sugar, off, period)  # type: ignore[arg-type]
    count, grain, direction = off
    return OffsetWindow(count, grain, direction, calc, sugar, None, period)  # type: ignore[arg-type]


def _offset(r: WindowReader, value: Any) -> tuple[int, Grain, Direction] | str | None:
    """`"<count> <granularity>"` (one trailing `s` accepted) or `{count, granularity,
    direction?}` (WIN-OFF-01..04, WIN-POP-02); `{period_start}` (1.15) is the period."""
    key = "window.offset"
    if isinstance(value, str):
        return _offset_string(r, value)
    if not isinstance(value, dict):
        r.err(
            key,
            f'must be a string like "1 month" or an object {{count, granularity}} '
            f"(got {json_type(value)} {show(value)})",
        )
        return None
    if "ignore_nulls" in value:
        # 1.14: the value family's key; an offset is a calendar-exact self-join (never LAG), so
        # "the previous non-NULL bucket" is not an offset
        r.err(
            f"{key}.ignore_nulls",
            "is not a key of an offset: offsets read the bucket at exactly the shifted calendar "
            "key (a self-join, never LAG), so there is no previous non-NULL row to skip to",
            hint='for a partition\'s first or last non-NULL value use {"value": {"function": '
            '"last_value", "ignore_nulls": true}}; to read gaps as a value, fill the base '
            "(D-FILL)",
        )
        value = {k: v for k, v in value.items() if k != "ignore_nulls"}
    r.deny_unknown(key, value, OFFSET_KEYS)
    if "period_start" in value:
        return _period_start(r, key, value)
    start = r.errors
    count = grain = None
    if present(value, "count"):
        count = r.int_min(f"{key}.count", value["count"], 1, "shift by at least one unit")
    else:
        r.err(f"{key}.count", "is required (an integer >= 1)")
    if present(value, "granularity"):
        grain = r.enum(f"{key}.granularity", value["granularity"], GRAINS)
    else:
        r.err(f"{key}.granularity", f"is required ({alternatives(GRAINS)})")
    direction = "back"
    if present(value, "direction"):
        r.feature("window.offset.direction")
        direction = r.enum(f"{key}.direction", value["direction"], DIRECTIONS) or "back"
    if r.errors != start or count is None or grain is None:
        return None
    if not _in_range(r, key, count, grain):
        return None
    return count, grain, direction  # type: ignore[return-value]


def _period_start(r: WindowReader, key: str, value: dict[str, Any]) -> str | None:
    """`{"period_start": "month"}`: alone, since it replaces the shift."""
    r.feature("window.offset.period_start")
    others = [k for k in ("count", "granularity", "direction") if k in value]
    if others:
        r.err(
            f"{key}.period_start",
            "reads the first bucket of the period instead of shifting: it takes no "
            + ", ".join(others),
            hint='write {"period_start": "month"} alone, or a shift {"count": 1, '
            '"granularity": "month"}',
        )
        return None
    return r.enum(f"{key}.period_start", value["period_start"], PERIOD_STARTS)


def _in_range(r: WindowReader, key: str, count: int, grain: str) -> bool:
    """An offset spans at most 10,000 years, so shifted bounds and INTERVALs stay in range
    on every engine (issue 9: range-checked intervals)."""
    most = MAX_OFFSET_UNITS.get(grain)
    if most is not None and count > most:
        r.err(key, f"shifts more than 10,000 years ({most} {grain}s at most)")
        return False
    return True


def _offset_string(r: WindowReader, text: str) -> tuple[int, Grain, Direction] | None:
    key = "window.offset"
    parts = text.split(" ")
    hint = 'write "<count> <granularity>", e.g. "1 month" or "2 weeks", or the object form '
    hint += '{"count": 1, "granularity": "month"}'
    if len(parts) != 2 or not parts[0] or not parts[1]:
        r.err(key, f'must be "<count> <granularity>" (got "{text}")', hint)
        return None
    count_s, unit = parts
    unit_ok = unit if unit in GRAINS else unit[:-1] if unit.endswith("s") else None
    ok = True
    if not count_s.isascii() or not count_s.isdigit():
        r.err(key, f'count "{count_s}" in "{text}" must be an integer >= 1', hint)
        ok = False
    elif len(count_s) > 15:
        r.err(key, f'count in "{text[:40]}" is out of range', hint)
        ok = False
    elif int(count_s) < 1:
        r.err(key, f'count in "{text}" must be >= 1 (got {int(count_s)})', hint)
        ok = False
    if unit_ok not in GRAINS:
        r.err(
            key,
            f'granularity "{unit}" in "{text}" must be {alternatives(GRAINS)} (one trailing "s" '
            "accepted)",
            hint,
            closest(unit, GRAINS),
        )
        ok = False
    if not ok or not _in_range(r, key, int(count_s), str(unit_ok)):
        return None
    return int(count_s), unit_ok, "back"  # type: ignore[return-value]


def _bind_count(spec: WindowSpec, value: int) -> WindowSpec:
    if not isinstance(spec, OffsetWindow) or spec.to_period_start is not None:
        raise AssertionError(f"slot offset.count does not fit a {spec.family} window")
    most = MAX_OFFSET_UNITS.get(spec.granularity)
    if most is not None and value > most:
        raise SlotOutOfRange(
            f"an offset of {value} {spec.granularity}s shifts more than 10,000 years"
        )
    return replace(spec, count=value)


#: D-PARAM slots (PARAM-SLOT-01): `offset.count` in the object form.
SLOTS: tuple[WindowSlot, ...] = (
    WindowSlot("offset.count", 1, key_in_object("offset", "count"), _bind_count),
)
