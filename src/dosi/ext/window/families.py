"""THE window family table: each family once, with its spec class, payload parser and D-PARAM
slots; each sugar once, with the family it desugars to.

Adding a family is two new files and two lines, one per layer:

1. `dosi/ext/window/<family>.py`: the spec (a frozen dataclass subclassing `WindowSpec`, its
   `family` ClassVar the family name), `parse(reader, window)`, `TOP_KEYS` (its object's key,
   named after it, first) and `SLOTS`; a row in `WINDOW_FAMILIES` below.
2. `dosi/sql/window/<family>.py`: its SQL renderer; a row in `dosi.sql.window.families`.

The SQL table is keyed by the family names here and checked complete against this table when
`dosi.sql.window` is imported, so a family can never be read but not rendered (the table
cannot hold the renderer itself: `dosi.ext` is below `dosi.sql` and imports nothing of it).
The payload grammar (`dosi.ext.window.payload`: which top-level keys a shape owns, the family
list in messages), the D-PARAM slots (`dosi.ext.params`, `dosi.query.params`) and the general
form's dispatch are all derived from these rows. A new in-family shape is also dated in
`dosi.ext.registry.WINDOW_FEATURES` (the version gate, datus-extensions §7).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dosi.ext.window import cumulative, frame, offset, pop, rank, rolling, share, streak, value
from dosi.ext.window.reader import WindowReader
from dosi.ext.window.spec import WindowSlot, WindowSpec

Parser = Callable[[WindowReader, dict[str, Any]], WindowSpec | None]


@dataclass(frozen=True)
class WindowFamily:
    """A general-form family: `window.<name>` holds its object."""

    name: str
    spec: type[WindowSpec]
    parse: Parser
    top_keys: tuple[str, ...]  # its top-level payload keys, its own object's first
    slots: tuple[WindowSlot, ...] = ()


@dataclass(frozen=True)
class WindowSugar:
    """A sugar: `"type": <name>` with top-level keys, desugared to one family's spec."""

    name: str
    family: str
    parse: Parser
    top_keys: tuple[str, ...]
    general_hints: Mapping[str, str] = field(default_factory=dict)
    slots: tuple[WindowSlot, ...] = ()


WINDOW_FAMILIES: tuple[WindowFamily, ...] = (
    WindowFamily("offset", offset.OffsetWindow, offset.parse, offset.TOP_KEYS, offset.SLOTS),
    WindowFamily("frame", frame.FrameWindow, frame.parse, frame.TOP_KEYS, frame.SLOTS),
    WindowFamily("rank", rank.RankWindow, rank.parse, rank.TOP_KEYS, rank.SLOTS),
    WindowFamily("value", value.ValueWindow, value.parse, value.TOP_KEYS, value.SLOTS),
    WindowFamily("share", share.ShareWindow, share.parse, share.TOP_KEYS, share.SLOTS),
    WindowFamily("streak", streak.StreakWindow, streak.parse, streak.TOP_KEYS, streak.SLOTS),
)
WINDOW_SUGARS: tuple[WindowSugar, ...] = (
    WindowSugar("pop", "offset", pop.parse, pop.TOP_KEYS, pop.GENERAL_HINTS, pop.SLOTS),
    WindowSugar(
        "rolling", "frame", rolling.parse, rolling.TOP_KEYS, rolling.GENERAL_HINTS, rolling.SLOTS
    ),
    WindowSugar(
        "cumulative", "frame", cumulative.parse, cumulative.TOP_KEYS, cumulative.GENERAL_HINTS
    ),
    # the reserved window types of the share / streak families (their keys at the top level)
    WindowSugar("share", "share", share.parse_type, share.TYPE_KEYS),
    WindowSugar("streak", "streak", streak.parse_type, streak.TYPE_KEYS),
)

FAMILIES: tuple[str, ...] = tuple(f.name for f in WINDOW_FAMILIES)
SUGARS: tuple[str, ...] = tuple(s.name for s in WINDOW_SUGARS)
FAMILY_BY_NAME: dict[str, WindowFamily] = {f.name: f for f in WINDOW_FAMILIES}
SUGAR_BY_NAME: dict[str, WindowSugar] = {s.name: s for s in WINDOW_SUGARS}


def _check() -> None:
    for f in WINDOW_FAMILIES:
        if f.spec.family != f.name or not f.top_keys or f.top_keys[0] != f.name:
            raise TypeError(f"window family {f.name!r}: spec family / top keys disagree")
    for s in WINDOW_SUGARS:
        if s.family not in FAMILY_BY_NAME:
            raise TypeError(f"window sugar {s.name!r} desugars to unknown family {s.family!r}")


_check()


def _top_owners() -> dict[str, tuple[str, ...]]:
    """Top-level key -> the shapes that own it ("general" or a sugar name), general first:
    the general form's keys in family order, then the sugars' own keys, the first key of every
    sugar before the second (so violations are reported in a stable order)."""
    owners: dict[str, list[str]] = {}
    for f in WINDOW_FAMILIES:
        for key in f.top_keys:
            owners.setdefault(key, []).append("general")
    declared = sorted(
        (pos, i, key) for i, s in enumerate(WINDOW_SUGARS) for pos, key in enumerate(s.top_keys)
    )
    for _pos, _index, key in declared:
        owners.setdefault(key, [])
    for s in WINDOW_SUGARS:
        for key in s.top_keys:
            owners[key].append(s.name)
    return {k: tuple(v) for k, v in owners.items()}


#: Which shapes own each top-level key (WM "The window payload"; forbidden keys per sugar).
TOP_OWNERS: dict[str, tuple[str, ...]] = _top_owners()


def _general_hints() -> dict[str, str]:
    out: dict[str, str] = {}
    for s in WINDOW_SUGARS:
        for key, hint in s.general_hints.items():
            out.setdefault(key, hint)
    return out


#: Where a sugar's key belongs when it is written in the general form.
GENERAL_HINTS: dict[str, str] = _general_hints()
#: Every D-PARAM window slot: per family, its own, then its sugars' (PARAM-SLOT-01..05).
WINDOW_SLOTS: tuple[WindowSlot, ...] = tuple(
    slot
    for f in WINDOW_FAMILIES
    for slot in (
        *f.slots,
        *(x for s in WINDOW_SUGARS if s.family == f.name for x in s.slots),
    )
)
SLOT_BY_NAME: dict[str, WindowSlot] = {s.name: s for s in WINDOW_SLOTS}
