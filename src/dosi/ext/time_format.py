"""D-FORMAT: the `time` block of a field (datus-extensions §3 D-FORMAT, FMT-DEC-01..24).

`time` is `{"format"?, "storage"?, "granularity"?}`. `format` is a native type name (`date`,
`datetime`, `timestamp`, `timestamp_tz`) or a layout: an ordered, contiguous, fixed-width run
of `%Y%m%d%H%M%S` (stopping at any level, none skipped, repeated or reordered) with any fixed
text around the parts and `%%` for a literal percent (FMT-DEC-04/05). Everything else (unknown
directives, `%-m`, `%f`, `%z`, epoch forms) is `invalid_datus_extension` naming the key
(FMT-DEC-06/22). Checks that need the field's datatype or `is_time` live in
`dosi.compiler.time_format`.

`TimeFormat` is the parsed layout the IR carries: where each part sits (by character), the
grain the layout derives, and how a date bound is written in the stored encoding (the filter
folding of FMT-FLT-01 happens here, in Python, never as a parse of the column).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

Storage = Literal["string", "int"]
STORAGES: tuple[Storage, ...] = ("string", "int")
NATIVE_FORMATS: dict[str, str] = {
    # native name -> the core datatype it must pair with (FMT-DEC-08)
    "date": "Date",
    "datetime": "DateTime",
    "timestamp": "DateTime",
    "timestamp_tz": "DateTimeTz",
}
TIME_KEYS = ("format", "storage", "granularity")
# the layout's parts in their only allowed order, with their widths (FMT-DEC-04)
PART_ORDER = "YmdHMS"
PART_WIDTH = {"Y": 4, "m": 2, "d": 2, "H": 2, "M": 2, "S": 2}
# the grain a layout derives from its finest part; hours and finer derive none (FMT-DEC-18)
_DERIVED = {"Y": "year", "m": "month", "d": "day"}
# the longest integer key: %Y%m%d%H%M%S (FMT-DEC-13)
MAX_INT_DIGITS = 14


class LayoutError(ValueError):
    """A `time.format` that is not a supported layout."""


@dataclass(frozen=True)
class LayoutPart:
    """One time part: its directive letter, its character offset and width in the value."""

    directive: str
    offset: int
    width: int


@dataclass(frozen=True)
class TimeFormat:
    """A field's stored time encoding (FieldIr.time_format).

    `native` formats describe DATE / TIMESTAMP columns and are never parsed or re-encoded;
    layouts (`native` False) hold `storage` ("string" or "int"), their `parts` and the fixed
    text between them (`pieces`: literal strings and parts, in order)."""

    format: str
    storage: Storage | None
    native: bool
    pieces: tuple[str | LayoutPart, ...] = ()

    @property
    def encoded(self) -> bool:
        """A string or integer layout (where_sql may not touch it; bounds are folded)."""
        return not self.native

    @property
    def parts(self) -> tuple[LayoutPart, ...]:
        return tuple(p for p in self.pieces if isinstance(p, LayoutPart))

    @property
    def finest(self) -> str:
        return self.parts[-1].directive if self.parts else "d"

    @property
    def derived_grain(self) -> str | None:
        """year / month / day from the finest part; None with hours or finer (FMT-DEC-18)."""
        if self.native:
            return "day" if self.format == "date" else None
        return _DERIVED.get(self.finest)

    @property
    def has_time(self) -> bool:
        """The decoded value is a timestamp (hours or finer), else a date (FMT-DEC-20)."""
        if self.native:
            return self.format != "date"
        return self.finest in "HMS"

    @property
    def width(self) -> int:
        return sum(len(p) if isinstance(p, str) else p.width for p in self.pieces)

    @property
    def literal_text(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))

    @property
    def decoded_datatype(self) -> str:
        """The core datatype a decoded value has (bucket and output types follow it)."""
        return "DateTime" if self.has_time else "Date"

    # -- filter folding (FMT-FLT-01) ---------------------------------------------------------
    def period_start(self, value: dt.date) -> dt.date:
        """The first day of the stored period holding `value` (the day itself for day layouts
        and finer: bounds are dates, so any finer period starts on it)."""
        if self.finest == "Y":
            return value.replace(month=1, day=1)
        if self.finest == "m":
            return value.replace(day=1)
        return value

    def next_period_start(self, value: dt.date) -> dt.date:
        """The first day of the stored period after the one holding `value`."""
        start = self.period_start(value)
        if start == value:
            return value
        if self.finest == "Y":
            return start.replace(year=start.year + 1)
        year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        return start.replace(year=year, month=month)

    def encode(self, value: dt.date | dt.datetime) -> str | int:
        """`value` written in the stored encoding: omitted parts are cut, the fixed text kept."""
        fields = {
            "Y": value.year,
            "m": value.month,
            "d": value.day,
            "H": getattr(value, "hour", 0),
            "M": getattr(value, "minute", 0),
            "S": getattr(value, "second", 0),
        }
        text = "".join(
            p if isinstance(p, str) else f"{fields[p.directive]:0{p.width}d}" for p in self.pieces
        )
        return int(text) if self.storage == "int" else text


def parse_layout(text: str) -> tuple[str | LayoutPart, ...]:
    """The pieces of a layout, or LayoutError (FMT-DEC-04..06)."""
    pieces: list[str | LayoutPart] = []
    literal: list[str] = []
    offset = 0
    i = 0
    seen = ""
    while i < len(text):
        ch = text[i]
        if ch != "%":
            literal.append(ch)
            i += 1
            continue
        if i + 1 >= len(text):
            raise LayoutError("a trailing `%` (write `%%` for a literal percent)")
        d = text[i + 1]
        i += 2
        if d == "%":
            literal.append("%")
            continue
        if d not in PART_WIDTH:
            raise LayoutError(f"`%{d}` is not a supported directive")
        expected = PART_ORDER[len(seen)] if len(seen) < len(PART_ORDER) else None
        if d != expected:
            raise LayoutError(
                f"`%{d}` is out of order: the parts run %Y, %m, %d, %H, %M, %S with none "
                "skipped, repeated or reordered"
            )
        if literal:
            pieces.append("".join(literal))
            offset += len(pieces[-1])  # type: ignore[arg-type]
            literal = []
        pieces.append(LayoutPart(d, offset, PART_WIDTH[d]))
        offset += PART_WIDTH[d]
        seen += d
    if literal:
        pieces.append("".join(literal))
    if not seen:
        raise LayoutError("a layout must include %Y")
    return tuple(pieces)


@dataclass(frozen=True)
class TimeSpec:
    """The `time` block as declared (validated in shape; datatype checks come later)."""

    format: str | None
    storage: Storage | None
    granularity: str | None
    layout: tuple[str | LayoutPart, ...] = ()

    def time_format(self, storage: Storage | None) -> TimeFormat | None:
        if self.format is None:
            return None
        if self.format in NATIVE_FORMATS:
            return TimeFormat(self.format, None, True)
        return TimeFormat(self.format, storage, False, self.layout)


def read_time(value: Any, grains: tuple[str, ...]) -> tuple[TimeSpec | None, list[str]]:
    """Validate the `time` object's shape; returns the spec and the problems (messages naming
    `time.<key>`)."""
    if not isinstance(value, dict):
        return None, ["`time` must be an object with format, storage and/or granularity"]
    problems: list[str] = []
    for k in value:
        if k not in TIME_KEYS:
            problems.append(f"`time.{k}` is not a key of `time` (format, storage, granularity)")
    if not value:
        problems.append(
            "`time` declares nothing: give it a format (the stored layout) and/or a granularity, "
            "or drop the block"
        )
    fmt = value.get("format")
    storage = value.get("storage")
    grain = value.get("granularity")
    layout: tuple[str | LayoutPart, ...] = ()
    if fmt is not None:
        if not isinstance(fmt, str):
            problems.append(f"`time.format` must be a string (got {type(fmt).__name__})")
            fmt = None
        elif fmt not in NATIVE_FORMATS:
            try:
                layout = parse_layout(fmt)
            except LayoutError as err:
                problems.append(
                    f'`time.format` "{fmt}" is not a supported layout: {err}; use a native name '
                    "(date, datetime, timestamp, timestamp_tz) or an ordered, fixed-width run of "
                    "%Y%m%d%H%M%S with fixed text (%% for a literal percent)"
                )
                fmt = None
    if storage is not None and storage not in STORAGES:
        problems.append(f'`time.storage` must be "string" or "int" (got {storage!r})')
        storage = None
    if storage is not None and value.get("format") is None:
        problems.append("`time.storage` needs a `time.format` to describe: declare the layout")
    if storage is not None and fmt in NATIVE_FORMATS:
        problems.append(
            f'`time.storage` does not apply to the native format "{fmt}": drop it, or declare '
            "a string or int layout"
        )
    if grain is not None and grain not in grains:
        problems.append(f"`time.granularity` must be one of {', '.join(grains)} (got {grain!r})")
        grain = None
    if problems:
        return None, problems
    return TimeSpec(fmt, storage, grain, layout), []
