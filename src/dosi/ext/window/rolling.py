"""The `rolling` sugar: a trailing frame of `periods` buckets, desugared to the `frame` family
with `preceding = periods - 1` (WM "Sugar — rolling", WIN-ROL-01..04), or (1.15) of a calendar
`span` (`dosi.ext.window.span`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dosi.ext.window.frame import FrameWindow
from dosi.ext.window.functions import frame_function
from dosi.ext.window.period_value import parse_period_value
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.span import Span, parse_span
from dosi.ext.window.spec import WindowSlot, WindowSpec

#: Top-level payload keys this sugar takes (besides `type`).
TOP_KEYS: tuple[str, ...] = (
    "function",
    "periods",
    "require_full_window",
    "period_value",
    "span",
)
#: Hints for its keys written in the general form (where they belong there).
GENERAL_HINTS: dict[str, str] = {
    "function": "put it inside the family object (window.frame.function), or use "
    '"type": "rolling" / "cumulative"',
    "periods": 'in the general form write window.frame.preceding = periods - 1, or use "type": '
    '"rolling"',
    "require_full_window": "put it at window.frame.require_full_window",
    "period_value": "put it at window.frame.period_value",
    "span": "put it at window.frame.span",
}


def parse(r: WindowReader, raw: dict[str, Any]) -> FrameWindow | None:
    """`rolling` → frame with preceding = periods - 1 (WIN-ROL-01..04)."""
    start = r.errors
    fn = frame_function(r, "window.function", raw.get("function"), allow_two_arg=False)
    periods: int | None = None
    span: Span | None = None
    if present(raw, "span"):  # 1.15: the trailing calendar interval instead of n buckets
        span = parse_span(r, "window.span", raw["span"])
        for k in ("periods", "require_full_window"):
            if present(raw, k):
                r.err(
                    f"window.{k}",
                    "cannot be combined with `window.span`: a span frames the trailing "
                    "calendar interval, not a count of buckets",
                    hint=f"remove `window.{k}`, or remove span",
                )
    elif present(raw, "periods"):
        periods = r.int_min(
            "window.periods", raw["periods"], 1, "periods counts buckets, current included"
        )
    else:
        r.err(
            "window.periods",
            'is required with "type": "rolling" (an integer >= 1), unless a `span` is given',
        )
    rfw = False
    if present(raw, "require_full_window"):
        rfw = bool(r.boolean("window.require_full_window", raw["require_full_window"]))
    period = None
    if present(raw, "period_value"):
        period = parse_period_value(r, "window.period_value", raw["period_value"])
    if r.errors != start or fn is None or (periods is None and span is None):
        return None
    if span is not None:
        return FrameWindow(fn, None, sugar="rolling", period_value=period, span=span)
    assert periods is not None
    return FrameWindow(fn, periods - 1, None, rfw, sugar="rolling", period_value=period)


def _periods_site(window: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    return (window, "periods") if window.get("type") == "rolling" else None


def _bind_periods(spec: WindowSpec, value: int) -> WindowSpec:
    if not isinstance(spec, FrameWindow):
        raise AssertionError(f"slot rolling.periods does not fit a {spec.family} window")
    return replace(spec, preceding=value - 1)


#: D-PARAM slots (PARAM-SLOT-03): `periods`.
SLOTS: tuple[WindowSlot, ...] = (WindowSlot("rolling.periods", 1, _periods_site, _bind_periods),)
