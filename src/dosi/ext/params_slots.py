"""D-PARAM slots (datus-extensions §3 "D-PARAM", PARAM-SLOT-*): the holes a param fills. A
window slot holds `{"param": n}` instead of an integer (each window family declares its slots,
`dosi.ext.window.families.WINDOW_SLOTS`) and takes n's default here, before the window payload
is validated (PARAM-INST-01); a filter `where` holds `:n` bind markers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

from dosi.errors import DiagnosticSink
from dosi.ext.params_decl import INVALID, ParamDecl, ParamSlot, show
from dosi.ext.window import WINDOW_SLOTS

# `:name` bind markers (PARAM-SLOT-06); a `::type` cast is not one.
BIND_MARKER = re.compile(r"(?<![:\w]):([a-z][a-z0-9_]*)\b")
# Slot -> the smallest value the slot accepts (PARAM-SLOT-01..05, -07; each window family
# declares its slots, dosi.ext.window.families); None: a threshold with no least value.
WINDOW_SLOT_MIN: dict[str, int | None] = {s.name: s.least for s in WINDOW_SLOTS}
WINDOW_SLOT_TYPES: dict[str, tuple[str, ...]] = {s.name: s.types for s in WINDOW_SLOTS}
FILTER_SLOT = "filter.literal"


def _window_slot_sites(
    window: dict[str, Any],
) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(slot, container, key) for every place a window may hold `{"param": n}`."""
    for slot in WINDOW_SLOTS:
        site = slot.site(window)
        if site is not None:
            yield slot.name, site[0], site[1]


def _param_ref(v: Any) -> str | Literal[False] | None:
    """The param a `{"param": n}` hole names; None for a malformed hole; False: no hole."""
    if not isinstance(v, dict) or "param" not in v:
        return False
    if set(v) != {"param"} or not isinstance(v["param"], str):
        return None
    return v["param"]


def fill_window_slots(
    window: Any,
    decls: tuple[ParamDecl, ...],
    path: str | None,
    sink: DiagnosticSink,
) -> tuple[Any, tuple[ParamSlot, ...]]:
    """The window payload with each slot's `{"param": n}` replaced by n's default, and the
    slots filled. A hole anywhere else stays, so the window validator rejects it as
    `invalid_datus_extension` (a slot anywhere else is invalid, PARAM-SLOT-10)."""
    if not isinstance(window, dict):
        return window, ()
    out = _copy(window)
    slots: list[ParamSlot] = []
    for slot, container, key in _window_slot_sites(out):
        ref = _param_ref(container.get(key))
        if ref is False:
            continue
        if ref is None:
            sink.error(
                INVALID,
                f'slot {slot}: a param hole is written {{"param": "<name>"}} (got '
                f"{container.get(key)!r})",
                path=path,
            )
            continue
        d = next((x for x in decls if x.name == ref), None)
        if d is None:
            sink.error(
                INVALID,
                f'slot {slot} references undeclared param "{ref}"',
                path=path,
                candidates=tuple(x.name for x in decls),
                hint="declare it in `params`",
            )
            continue
        if not _slot_domain_ok(slot, d, path, sink):
            continue
        container[key] = d.default
        slots.append(ParamSlot(slot, d.name))
    return out, tuple(slots)


def _slot_domain_ok(slot: str, d: ParamDecl, path: str | None, sink: DiagnosticSink) -> bool:
    """Count slots are integers: an int param whose domain has a lower bound at least the
    slot's own minimum (PARAM-SLOT-07). A threshold slot (`streak.target`) takes an int or a
    float param with any domain (an unbounded one already warns `datus_param_unbounded`)."""
    types = WINDOW_SLOT_TYPES[slot]
    if d.type not in types:
        want = " or ".join(types)
        sink.error(INVALID, f'slot {slot} takes an {want} param; "{d.name}" is {d.type}', path=path)
        return False
    least = WINDOW_SLOT_MIN[slot]
    if least is None:
        return True
    low = d.lowest()
    if low is None:
        sink.error(
            INVALID,
            f'slot {slot} requires values >= {least}; give param "{d.name}" a min or allowed',
            path=path,
            hint=f'e.g. "min": {least}',
        )
        return False
    if low < least:
        sink.error(
            INVALID,
            f'slot {slot} requires values >= {least}, but param "{d.name}" allows {show(low)}',
            path=path,
            hint=f'raise "min" to {least}',
        )
        return False
    return True


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def bind_markers(text: str) -> list[str]:
    """The `:name` bind markers in a SQL snippet (outside string literals)."""
    return BIND_MARKER.findall(_strip_strings(text))


def _strip_strings(text: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", text)
