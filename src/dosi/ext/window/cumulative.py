"""The `cumulative` sugar: a running total, desugared to an unbounded `frame` with an optional
`reset` grain (WM "Sugar — cumulative", WIN-CUM-01..03) and `history` (1.15)."""

from __future__ import annotations

from typing import Any

from dosi.ext.window.frame import FRAME_DEFAULT_ORDER, FrameWindow
from dosi.ext.window.frame_rules import parse_history, parse_reset
from dosi.ext.window.functions import frame_function
from dosi.ext.window.period_value import parse_period_value
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.spec import WindowSlot

#: Top-level payload keys this sugar takes (besides `type`).
TOP_KEYS: tuple[str, ...] = ("function", "reset", "period_value", "history")
#: Hints for its keys written in the general form (where they belong there).
GENERAL_HINTS: dict[str, str] = {
    "function": "put it inside the family object (window.frame.function), or use "
    '"type": "rolling" / "cumulative"',
    "reset": 'put it at window.frame.reset, or use "type": "cumulative"',
    "period_value": "put it at window.frame.period_value",
    "history": "put it at window.frame.history",
}
SLOTS: tuple[WindowSlot, ...] = ()


def parse(r: WindowReader, raw: dict[str, Any]) -> FrameWindow | None:
    """`cumulative` → unbounded frame, optional reset (WIN-CUM-01..03)."""
    start = r.errors
    fn = frame_function(r, "window.function", raw.get("function"), allow_two_arg=False)
    reset = parse_reset(r, "window.reset", raw["reset"]) if present(raw, "reset") else None
    period = None
    if present(raw, "period_value"):
        period = parse_period_value(r, "window.period_value", raw["period_value"])
    history = parse_history(r, "window", raw, None, FRAME_DEFAULT_ORDER, reset, None)
    if r.errors != start or fn is None:
        return None
    return FrameWindow(
        fn,
        None,
        reset,  # type: ignore[arg-type]
        sugar="cumulative",
        period_value=period,
        history=history,
    )
