"""Cube's time-relative measures -> D-WINDOW payloads.

* `rolling_window: {trailing: unbounded}` is a running total: `cumulative` (exact).
* `rolling_window: {type: to_date, granularity: year}` restarts each period: `cumulative` with
  `reset` (exact at any finer query grain).
* `rolling_window: {trailing: "3 month"}` is a calendar window; D-WINDOW frames count buckets
  of the query grain, so it becomes `rolling` over 3 buckets, which is the same number when
  the query is grouped by that grain and every bucket has rows (a structured warning says so).
* `multi_stage` + `time_shift: [{interval: "1 year", type: prior}]` is the value one interval
  earlier: an `offset` with `calculation: value` (`next` shifts forward).

Anything else (`leading` windows, `offset: start`, sub-day units, named calendar shifts,
several shifts) is not carried; the caller reports why.
"""

from __future__ import annotations

import re
from typing import Any

from dosi.ext.window.spec import GRAINS, RESET_GRAINS

_INTERVAL = re.compile(r"^\s*(-?\d+)\s+([a-z]+?)s?\s*$")
#: Frame functions that re-aggregate bucket values into the window's value exactly.
ADDITIVE = {"count": "sum", "sum": "sum", "min": "min", "max": "max"}


class WindowNotCarried(ValueError):
    """A rolling window or time shift D-WINDOW cannot express; the message says why."""


def interval(text: Any) -> tuple[int, str]:
    """`"3 months"` -> (3, "month"); units D-WINDOW knows (day ... year)."""
    m = _INTERVAL.match(str(text).lower())
    if m is None:
        raise WindowNotCarried(f"interval {text!r} is not `<count> <unit>`")
    count, unit = int(m.group(1)), m.group(2)
    if unit not in GRAINS:
        raise WindowNotCarried(f"unit {unit!r} is finer than a day or unknown")
    return count, unit


def rolling_payload(window: dict[str, Any], measure_type: str) -> tuple[dict[str, Any], str | None]:
    """(the `window` payload, a caveat for the warning or None when exact)."""
    function = ADDITIVE.get(measure_type)
    if function is None:
        raise WindowNotCarried(
            f"a rolling {measure_type} is not the re-aggregation of per-bucket values"
        )
    if window.get("type") == "to_date":
        grain = str(window.get("granularity", "")).lower()
        if grain not in RESET_GRAINS:
            raise WindowNotCarried(f"to_date granularity {grain!r} is not week/month/quarter/year")
        return {"type": "cumulative", "function": function, "reset": grain}, None
    if window.get("type") not in (None, "fixed"):
        raise WindowNotCarried(f"rolling window type {window.get('type')!r} is unknown")
    leading = window.get("leading")
    if leading not in (None, 0, "0") and not str(leading).strip().startswith("0 "):
        raise WindowNotCarried("a leading (forward-looking) window")
    if str(window.get("offset", "end")).lower() != "end":
        raise WindowNotCarried("offset: start (the window ends at the bucket's start)")
    trailing = window.get("trailing")
    if trailing is None or str(trailing).strip().lower() == "unbounded":
        return {"type": "cumulative", "function": function}, None
    count, unit = interval(trailing)
    if count < 1:
        raise WindowNotCarried(f"trailing {trailing!r} is not a positive window")
    caveat = (
        f"trailing {trailing} became a rolling window over {count} buckets of the query grain: "
        f"the same number when grouped by {unit} and every {unit} has rows"
    )
    return {"type": "rolling", "function": function, "periods": count}, caveat


def time_shift_payload(shifts: Any) -> tuple[dict[str, Any], str | None]:
    """(the `window` payload, the time dimension the shift is bound to, if any)."""
    if not isinstance(shifts, list) or len(shifts) != 1 or not isinstance(shifts[0], dict):
        raise WindowNotCarried("only a single time_shift entry maps to one offset window")
    shift = shifts[0]
    if "name" in shift and "interval" not in shift:
        raise WindowNotCarried(f"named calendar shift {shift['name']!r}")
    count, unit = interval(shift.get("interval"))
    kind = str(shift.get("type", "prior")).lower()
    if kind not in ("prior", "next"):
        raise WindowNotCarried(f"time_shift type {kind!r}")
    if count < 0:
        count, kind = -count, "next" if kind == "prior" else "prior"
    if count == 0:
        raise WindowNotCarried("a zero time shift")
    offset = {"count": count, "granularity": unit}
    if kind == "next":
        offset["direction"] = "forward"
    td = shift.get("time_dimension")
    return {"offset": offset, "calculation": "value"}, str(td) if td else None
