"""The parameterised plan cache: a query that differs from one compiled before only in its
literals (the `limit`, `time_range` date bounds, string and integer values in `where_sql`)
reuses that compile's SQL with the new literals written in (docs/performance.md, "Compile
time").

Correctness first, so a literal is a slot only where its value cannot change the plan's
shape, and a template is built only from evidence:

- **Slot classes.** A slot's value carries a class, and the class is part of the cache key:
  a `limit` from 1 to 10^9 (0, NULL and larger values are keyed as written); a date bound
  `YYYY-MM-DD` keyed by its month and day and the calendar of its year and both neighbours
  (weekday of 1 January, leap year), so two dates of one class differ only by a whole number
  of identical calendar years: every grain alignment, weekday, ISO or retail week and scan
  expansion is the same (the span's year count is in the key too); a `where_sql` string of
  1-64 letters that no engine reads as a boolean, date or number, and an integer keyed by
  its digit count (no sign, no leading zero). Anything else is part of the key as written.
- **Two compiles.** The first query of a shape is compiled and kept. A second one of the
  same shape and classes, with other values, is compiled too; the two SQL texts are split at
  the literals' spellings, and only if the pieces between them are identical (same text,
  same slots in the same order, every varying slot present, same outputs, columns and
  warnings) is that split kept as the shape's template. Slots whose values the two compiles
  share stay fixed in it. A later query of the shape whose fixed slots match is answered by
  writing its values into the template; anything else compiles in full.

The cache is an optimisation over the exact-text cache in `dosi.engine`: a query it cannot
answer compiles as before.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MAX_LIMIT_SLOT = 10**9
MAX_STRING_SLOT = 64
MAX_DIGITS_SLOT = 18
#: Letters-only words some engine or dosi reads as something other than text.
_NOT_TEXT = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "t", "f", "y", "n"}
    | {"nan", "inf", "infinity", "none", "unknown"}
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_LETTERS = re.compile(r"[A-Za-z]+\Z")
# where_sql is split only when it lexes one way: no quoted identifiers, comments, escapes or
# bind markers, so `'...'` is always a string literal and a bare digit run always a number
_UNSPLIT = re.compile(r"[\"`\\$:?;]|--|/\*|#")
_WHERE_TOKEN = re.compile(r"'(?:[^']|'')*'|(?<![\w.])\d+(?![\w.])")
_MARK = "\x00{}\x00"


@dataclass(frozen=True)
class Slot:
    kind: str  # "limit" | "date" | "string" | "int"
    value: str  # as spelled in the SQL text (a string slot with its quotes)


@dataclass(frozen=True)
class Shape:
    """A query with its slots taken out: the key (shape and classes) and the slot values."""

    key: str
    slots: tuple[Slot, ...]


def _year_type(y: int) -> tuple[int, bool]:
    return dt.date(y, 1, 1).weekday(), calendar.isleap(y)


def _date_class(text: str) -> tuple[Any, ...] | None:
    if not _DATE.match(text):
        return None
    try:
        d = dt.date.fromisoformat(text)
    except ValueError:
        return None
    if not 1901 <= d.year <= 2199:
        return None
    return (d.month, d.day, *(_year_type(y) for y in (d.year - 1, d.year, d.year + 1)))


def _string_class(body: str) -> bool:
    return (
        0 < len(body) <= MAX_STRING_SLOT
        and _LETTERS.match(body) is not None
        and body.lower() not in _NOT_TEXT
    )


def _int_class(digits: str) -> bool:
    return len(digits) <= MAX_DIGITS_SLOT and not digits.startswith("0")


def shape_of(query: Any, dialect: str | None, pretty: bool) -> Shape | None:
    """The query's shape, or None when it holds no slot (or is not a plain JSON object)."""
    if isinstance(query, str):
        try:
            query = json.loads(query)
        except (ValueError, RecursionError):
            return None
    if not isinstance(query, dict):
        return None
    body = dict(query)
    slots: list[Slot] = []
    classes: list[Any] = []

    def mark(slot: Slot, cls: Any) -> str:
        slots.append(slot)
        classes.append(cls)
        return _MARK.format(len(slots) - 1)

    limit = body.get("limit")
    if type(limit) is int and 1 <= limit <= MAX_LIMIT_SLOT:
        body["limit"] = mark(Slot("limit", str(limit)), "limit")
    tr = body.get("time_range")
    if isinstance(tr, dict):
        start, end = tr.get("start"), tr.get("end")
        cs = _date_class(start) if isinstance(start, str) else None
        ce = _date_class(end) if isinstance(end, str) else None
        if start != end:
            tr = dict(tr)
            if cs is not None:
                tr["start"] = mark(Slot("date", start), cs)
            if ce is not None:
                tr["end"] = mark(Slot("date", end), ce)
            if cs is not None and ce is not None:
                classes.append(("span", int(end[:4]) - int(start[:4])))
            body["time_range"] = tr
    where = body.get("where_sql")
    if isinstance(where, str) and not _UNSPLIT.search(where):

        def token(m: re.Match[str]) -> str:
            text = m.group(0)
            if text.startswith("'"):
                if _string_class(text[1:-1]):
                    return mark(Slot("string", text), ("string",))
                return text
            if _int_class(text):
                return mark(Slot("int", text), ("int", len(text)))
            return text

        body["where_sql"] = _WHERE_TOKEN.sub(token, where)
    if not slots:
        return None
    try:
        text = json.dumps(body, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    if text.count("\\u0000") != 2 * len(slots):
        return None  # a NUL of the caller's own could pose as a slot marker: no shape
    key = f"{(dialect or 'duckdb').lower()}|{int(pretty)}|{text}|{classes!r}"
    return Shape(key, tuple(slots))


def _holes(sql: str, value: str, numeric: bool) -> list[tuple[int, int]]:
    """Where `value` is spelled in `sql`: a number only as a whole token (never inside a
    name, a longer number or a date), a date or quoted string wherever it stands."""
    pattern = rf"(?<![\w.'-]){re.escape(value)}(?![\w.'-])" if numeric else re.escape(value)
    return [m.span() for m in re.finditer(pattern, sql)]


def _split(sql: str, slots: Sequence[Slot], varying: Sequence[int]) -> list[str | int] | None:
    """The SQL as text pieces and slot indexes, at the spellings of the varying slots; None
    when two spellings overlap or two varying slots are spelled alike."""
    if len({slots[i].value for i in varying}) != len(varying):
        return None
    spans = sorted(
        (start, end, i)
        for i in varying
        for start, end in _holes(sql, slots[i].value, slots[i].kind in ("limit", "int"))
    )
    out: list[str | int] = []
    pos = 0
    for start, end, i in spans:
        if start < pos:
            return None
        out.append(sql[pos:start])
        out.append(i)
        pos = end
    out.append(sql[pos:])
    return out


@dataclass
class Template(Generic[T]):
    varying: tuple[int, ...]
    fixed: tuple[tuple[int, str], ...]  # slot index -> value the template holds as text
    pieces: tuple[str | int, ...]
    compiled: T

    def answers(self, slots: Sequence[Slot]) -> bool:
        return all(slots[i].value == v for i, v in self.fixed)

    def fill(self, slots: Sequence[Slot]) -> str:
        return "".join(p if isinstance(p, str) else slots[p].value for p in self.pieces)


def build_template(
    first: tuple[Sequence[Slot], str, Any],
    second: tuple[Sequence[Slot], str, Any],
    compiled: T,
) -> Template[T] | None:
    """A template from two compiles of one shape: (slots, SQL, facts) each, where facts are
    what the answer shows besides the SQL (outputs, columns, warnings)."""
    (a_slots, a_sql, a_facts), (b_slots, b_sql, b_facts) = first, second
    if a_facts != b_facts or len(a_slots) != len(b_slots):
        return None
    varying = tuple(
        i for i, (a, b) in enumerate(zip(a_slots, b_slots, strict=True)) if a.value != b.value
    )
    if not varying:
        return None
    pa, pb = _split(a_sql, a_slots, varying), _split(b_sql, b_slots, varying)
    if pa is None or pa != pb or not set(varying) <= {p for p in pa if isinstance(p, int)}:
        return None
    fixed = tuple((i, a_slots[i].value) for i in range(len(a_slots)) if i not in varying)
    return Template(varying, fixed, tuple(pa), compiled)


@dataclass
class _Entry(Generic[T]):
    first: tuple[tuple[Slot, ...], str, Any]
    templates: list[Template[T]] = field(default_factory=list)
    tries: int = 0


class LiteralCache(Generic[T]):
    """Templates by shape (bounded, least recently used first out). Not locked: the engine
    holds its lock around `remember`."""

    MAX_TEMPLATES = 4  # per shape: one per set of varying slots seen
    MAX_TRIES = 8  # failed builds per shape before it stops trying

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()

    def lookup(self, shape: Shape) -> Template[T] | None:
        entry = self._entries.get(shape.key)
        if entry is None:
            return None
        for t in entry.templates:
            if t.answers(shape.slots):
                return t
        return None

    def remember(self, shape: Shape, sql: str, facts: Any, compiled: T) -> None:
        """After a full compile of `shape`: keep it as the shape's first, or try a template
        against the first."""
        entry = self._entries.get(shape.key)
        if entry is None:
            self._entries[shape.key] = _Entry((shape.slots, sql, facts))
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return
        self._entries.move_to_end(shape.key)
        if len(entry.templates) >= self.MAX_TEMPLATES or entry.tries >= self.MAX_TRIES:
            return
        t = build_template(entry.first, (shape.slots, sql, facts), compiled)
        if t is None:
            entry.tries += 1
        elif all(t.varying != o.varying or t.fixed != o.fixed for o in entry.templates):
            entry.templates.append(t)
