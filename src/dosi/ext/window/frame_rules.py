"""The `frame` family's bounds and the rules between its keys (WIN-FRM-01..21, 1.9 `scope`,
1.14 `following`, GROUPS, `exclusion`, `fraction`; 1.15 `history`): what `dosi.ext.window.frame` parses is
checked here as a whole, so a contradiction names both keys and the frame that works.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dosi.ext.envelope import json_type
from dosi.ext.window.functions import FRACTION_FUNCTIONS, TWO_ARG_FUNCTIONS
from dosi.ext.window.reader import WindowReader, alternatives, is_int, present, show
from dosi.ext.window.spec import (
    RESET_GRAINS,
    SUB_DAY_RESETS,
    OrderSpec,
    WindowSlot,
    WindowSpec,
    key_in_object,
)

UNBOUNDED = "unbounded"
UNITS: tuple[str, ...] = ("rows", "range", "groups")
#: SQL:2011 frame exclusion (1.14); `no_others` is the default and renders no clause
EXCLUSIONS: tuple[str, ...] = ("current_row", "group", "ties", "no_others")
#: `history` (1.15): where an unbounded running frame starts under a time_range start
HISTORIES: tuple[str, ...] = ("range", "all")


def bound(r: WindowReader, key: str, value: Any, side: str) -> int | str | None:
    if value == UNBOUNDED:
        return UNBOUNDED
    if is_int(value) and value >= 0:
        return int(value)
    example = (
        '"preceding": 2 for a 3-bucket trailing frame, "unbounded" for a running one'
        if side == "preceding"
        else '"preceding": 1, "following": 1 for a centered 3-bucket frame'
    )
    r.err(
        key,
        f'must be an integer >= 0 or "unbounded" (got {json_type(value)} {show(value)})',
        hint=f"e.g. {example}",
    )
    return None


def parse_fraction(r: WindowReader, kp: str, raw: dict[str, Any], fn: str | None) -> float | None:
    """`fraction` of percentile_cont / percentile_disc: a number in [0, 1] (1.14)."""
    key = f"{kp}.fraction"
    if fn in FRACTION_FUNCTIONS:
        if not present(raw, "fraction"):
            r.err(
                key,
                f'is required with "{fn}": the percentile as a number between 0 and 1',
                hint=f'e.g. {{"function": "{fn}", "fraction": 0.9, "preceding": 6}}',
            )
            return None
        r.feature("window.frame.fraction")
        value = raw["fraction"]
        if (is_int(value) or isinstance(value, float)) and 0 <= value <= 1:
            return float(value)
        r.err(
            key,
            f"must be a number between 0 and 1 (got {json_type(value)} {show(value)})",
            hint="e.g. 0.5 for the median, 0.9 for the 90th percentile",
        )
        return None
    if present(raw, "fraction"):
        what = "median (always 0.5)" if fn == "median" else f'"{fn}"'
        r.err(
            key,
            f"only applies to percentile_cont / percentile_disc, not {what}",
            hint="remove window.frame.fraction",
        )
    return None


def check_combinations(
    r: WindowReader,
    kp: str,
    raw: dict[str, Any],
    fn: str | None,
    preceding: int | str | None,
    following: int | str | None,
    order: OrderSpec | None,
    units: str,
    rfw: bool,
) -> None:
    """The rules between a frame's keys: scope against an ordered frame, full windows against
    unbounded or GROUPS / RANGE frames, following against a descending or RANGE order, and the
    second series of the two-argument functions."""
    if present(raw, "scope"):
        for k in (
            "preceding",
            "reset",
            "require_full_window",
            "units",
            "order",
            "following",
            "exclusion",
        ):
            if present(raw, k):
                r.err(
                    f"{kp}.{k}",
                    f'cannot be combined with `{kp}.scope: "partition"`: scope makes the '
                    "frame the whole partition (no ORDER BY, no frame clause)",
                    hint=f"remove `{kp}.{k}`, or remove scope for an ordered frame",
                )
    else:
        if rfw and preceding == UNBOUNDED:
            r.err(
                f"{kp}.require_full_window",
                'cannot be true with preceding "unbounded": an unbounded frame is never partial',
                hint="drop require_full_window, or give preceding a number",
            )
        if rfw and following == UNBOUNDED:
            r.err(
                f"{kp}.require_full_window",
                'cannot be true with following "unbounded": an unbounded frame is never partial',
                hint="drop require_full_window, or give following a number",
            )
        if (
            present(raw, "following")
            and following != 0
            and order is not None
            and order.by == "time"
            and order.direction == "desc"
        ):
            p_text = '"unbounded"' if preceding == UNBOUNDED else str(preceding)
            f_text = '"unbounded"' if following == UNBOUNDED else str(following)
            r.err(
                f"{kp}.following",
                'is not allowed with order {"by": "time", "direction": "desc"}: a following '
                "bound would read earlier buckets; the same frame reads forward in time "
                "ascending",
                hint=f'write "preceding": {f_text}, "following": {p_text} with the default '
                "ascending time order",
            )
        if units == "groups" and rfw:
            r.err(
                f"{kp}.require_full_window",
                'cannot be true under units "groups": a group holds any number of rows',
                hint='drop require_full_window, or use units "rows"',
            )
        if units == "range" and present(raw, "following"):
            r.err(
                f"{kp}.following",
                'is not allowed under units "range" (a value-ordered cumulative frame ends at '
                "the current row's peers)",
                hint='use units "rows" or "groups" for a frame that reads ahead, or scope '
                '"partition" for the whole partition',
            )
        if units == "range":
            if rfw:
                r.err(
                    f"{kp}.require_full_window",
                    'cannot be true under units "range": frame-row counting is undefined '
                    "over tie peers",
                    hint='drop require_full_window, or use units "rows"',
                )
            if preceding is not None and preceding != UNBOUNDED:
                r.err(
                    f"{kp}.units",
                    '"range" requires preceding "unbounded" (a value-ordered cumulative frame)',
                    hint='set "preceding": "unbounded", or use units "rows"',
                )
            if order is not None and order.by != "value":
                r.err(
                    f"{kp}.units",
                    '"range" requires order.by "value" (a time-ordered series has one row '
                    "per bucket, where RANGE equals ROWS)",
                    hint='add "order": {"by": "value"}, or use units "rows"',
                )
        if present(raw, "reset") and order is not None and order.by == "value":
            r.err(
                f"{kp}.reset",
                'is not allowed with order.by "value": a time partition without time order '
                "is incoherent",
                hint='drop the reset, or order by "time"',
            )
    if fn is not None:
        if fn in TWO_ARG_FUNCTIONS and not present(raw, "second"):
            r.err(
                f"{kp}.second",
                f'is required for the two-argument function "{fn}": name the second input '
                "series (a plain single-aggregate metric of this model)",
                hint=f'add "second": "<metric name>" next to "function": "{fn}"',
            )
        elif fn not in TWO_ARG_FUNCTIONS and present(raw, "second"):
            r.err(
                f"{kp}.second",
                f"only applies to covar_pop / covar_samp / corr and the regr_* functions, not "
                f'"{fn}"',
                hint="remove window.frame.second",
            )
    if present(raw, "period_value") and (
        present(raw, "scope") or (order is not None and order.by == "value")
    ):
        r.err(
            f"{kp}.period_value",
            "needs a frame ordered by time: it picks among the running values of the "
            "buckets inside a coarser one",
            hint='drop period_value, or order the frame by "time"',
        )


def parse_reset(r: WindowReader, key: str, value: Any) -> str | None:
    """A reset grain: week .. year, and (issue 22) the fiscal / retail grains."""
    if value == "day":
        r.err(
            key,
            'cannot be "day": a day reset is never coarser than the query grain (WIN-FRM-04)',
            hint=f"use {alternatives(RESET_GRAINS)}, or drop the reset",
        )
        return None
    if value in SUB_DAY_RESETS:
        r.feature("window.frame.reset (sub-day)")
    return r.enum(key, value, RESET_GRAINS)


def parse_history(
    r: WindowReader,
    kp: str,
    raw: dict[str, Any],
    preceding: int | str | None,
    order: OrderSpec | None,
    reset: Any,
    scope: str | None,
) -> bool:
    """`history` (1.15): `"all"` on a time-ordered frame unbounded back, without a reset."""
    if not present(raw, "history"):
        return False
    r.feature("window.frame.history")
    value = r.enum(
        f"{kp}.history",
        raw["history"],
        HISTORIES,
        hint='"all" accumulates the rows before a time_range start; "range" (the default) '
        "starts at it",
    )
    if value != "all":
        return False
    if (
        preceding not in (None, UNBOUNDED)
        or scope
        or reset is not None
        or (order is not None and order.by != "time")
    ):
        r.err(
            f"{kp}.history",
            '"all" applies to a running total: a frame ordered by time, unbounded back '
            '(preceding: "unbounded"), without a reset',
            hint='drop history, or make the frame "preceding": "unbounded" with no reset',
        )
        return False
    return True


def _bind_preceding(spec: WindowSpec, value: int) -> WindowSpec:
    if spec.family != "frame":
        raise AssertionError(f"slot frame.preceding does not fit a {spec.family} window")
    return replace(spec, preceding=value)


#: D-PARAM slots (PARAM-SLOT-02): `frame.preceding`.
SLOTS: tuple[WindowSlot, ...] = (
    WindowSlot("frame.preceding", 0, key_in_object("frame", "preceding"), _bind_preceding),
)


def parse_frame_keys(
    r: WindowReader, kp: str, raw: dict[str, Any]
) -> tuple[str, str | None, int | str | None, str | None]:
    """`units`, `second` (1.3), `following` and `exclusion` (1.14) of a frame object."""
    units = "rows"
    if present(raw, "units"):
        r.feature("window.frame.units")
        units = r.enum(f"{kp}.units", raw["units"], UNITS) or "rows"
    second: str | None = None
    if present(raw, "second"):
        r.feature("window.frame.second")
        second = r.metric_name(f"{kp}.second", raw["second"])
    following: int | str | None = 0
    if present(raw, "following"):
        r.feature("window.frame.following")
        following = bound(r, f"{kp}.following", raw["following"], "following")
    if units == "groups":
        r.feature("window.frame.units (groups)")
    exclusion: str | None = None
    if present(raw, "exclusion"):
        r.feature("window.frame.exclusion")
        exclusion = r.enum(
            f"{kp}.exclusion",
            raw["exclusion"],
            EXCLUSIONS,
            hint='e.g. "exclusion": "current_row" for the neighbours without the bucket itself',
        )
    return units, second, following, exclusion
