"""The `pop` sugar: a period-over-period comparison, desugared to the `offset` family with the
calculation defaulting to `percent_change` (WM "Sugar — pop", WIN-POP-01..04)."""

from __future__ import annotations

from typing import Any

from dosi.ext.window.offset import CALCULATIONS, OffsetWindow, parse_offset_family
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.spec import WindowSlot

#: Top-level payload keys this sugar takes (besides `type`).
TOP_KEYS: tuple[str, ...] = ("offset", "calculation", "period_value")
#: Hints for its keys written in the general form (none: they are the offset family's too).
GENERAL_HINTS: dict[str, str] = {}
SLOTS: tuple[WindowSlot, ...] = ()


def parse(r: WindowReader, raw: dict[str, Any]) -> OffsetWindow | None:
    """`pop` → offset, calculation defaulting to percent_change (WIN-POP-01..04)."""
    if not present(raw, "offset"):
        r.err(
            "window.offset",
            'is required with "type": "pop"',
            hint='e.g. "offset": "1 month" or {"count": 1, "granularity": "year"}',
        )
        if present(raw, "calculation"):
            r.enum("window.calculation", raw["calculation"], CALCULATIONS)
        return None
    return parse_offset_family(r, raw, "pop")
