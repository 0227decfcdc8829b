"""The `frame` family: ordered re-aggregation over a window frame (WM "General form — frame",
WIN-FRM-01..21; 1.9 `scope`, WIN-19-01/02). The `rolling` and `cumulative` sugars desugar here
(`dosi.ext.window.rolling`, `dosi.ext.window.cumulative`) and share `parse_reset` and the
function check (`dosi.ext.window.functions.frame_function`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from dosi.ext.envelope import json_type
from dosi.ext.window.functions import (
    FRACTION_FUNCTIONS,
    TWO_ARG_FUNCTIONS,
    frame_function,
)
from dosi.ext.window.modifiers import parse_order, parse_partition
from dosi.ext.window.period_value import PeriodValue, parse_period_value
from dosi.ext.window.reader import WindowReader, alternatives, is_int, present, show
from dosi.ext.window.spec import (
    RESET_GRAINS,
    Grain,
    OrderSpec,
    PartitionSpec,
    WindowSlot,
    WindowSpec,
    key_in_object,
)

FRAME_KEYS: tuple[str, ...] = (
    "function",
    "preceding",
    "reset",
    "require_full_window",
    "order",
    "partition",
    "units",
    "second",
    "scope",
    "following",
    "exclusion",
    "fraction",
    "period_value",
)
UNITS: tuple[str, ...] = ("rows", "range", "groups")
#: SQL:2011 frame exclusion (1.14); `no_others` is the default and renders no clause
EXCLUSIONS: tuple[str, ...] = ("current_row", "group", "ties", "no_others")
#: Top-level payload keys of the general frame form.
TOP_KEYS: tuple[str, ...] = ("frame",)

FRAME_DEFAULT_ORDER = OrderSpec("time", "asc")
FRAME_DEFAULT_PARTITION = PartitionSpec("query_dimensions")

_UNBOUNDED = "unbounded"


@dataclass(frozen=True)
class FrameWindow(WindowSpec):
    """Ordered re-aggregation (WM "General form — frame"; `rolling` / `cumulative` desugar here).

    `preceding is None` means UNBOUNDED PRECEDING. With `scope == "partition"` (1.9) the frame is
    the whole partition: `preceding`, `reset`, `units` and `order` do not apply. 1.14:
    `following` (0 = CURRENT ROW, the default; None with `following_unbounded`), GROUPS units,
    `exclusion`, and `fraction` for the percentiles; `period_value` (issue 22): the frame
    accumulates at its grain, and a coarser query bucket reports the first, last or average of
    those running values (`dosi.ext.window.period_value`).
    """

    function: str
    preceding: int | None
    reset: Grain | None = None
    require_full_window: bool = False
    order: OrderSpec = FRAME_DEFAULT_ORDER
    partition: PartitionSpec = FRAME_DEFAULT_PARTITION
    units: Literal["rows", "range"] = "rows"
    second: str | None = None
    scope: Literal["partition"] | None = None
    sugar: str | None = None
    following: int = 0
    following_unbounded: bool = False
    exclusion: Literal["current_row", "group", "ties", "no_others"] | None = None
    fraction: float | None = None
    period_value: PeriodValue | None = None
    family: ClassVar[str] = "frame"
    default_partition: ClassVar[PartitionSpec | None] = FRAME_DEFAULT_PARTITION

    @property
    def window_function(self) -> str | None:
        return self.function

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def second_metric(self) -> str | None:
        return self.second

    @property
    def ordered_by_time(self) -> bool:
        return self.order.by == "time" and self.scope is None

    @property
    def window_features(self) -> tuple[str, ...]:
        """Frame clauses a dialect may lack (1.14): GROUPS units, an EXCLUDE clause."""
        out: list[str] = []
        if self.units == "groups" and self.scope is None:
            out.append("groups")
        if self.exclusion not in (None, "no_others"):
            out.append("exclude")
        return tuple(out)

    @property
    def reads_ahead(self) -> bool:
        """A time-ordered frame whose end bound follows the current row (1.14)."""
        return self.time_ordered and (self.following > 0 or self.following_unbounded)

    @property
    def bucket_lookahead(self) -> int | None:
        """The buckets after the current one a time-ordered frame reads (None: unbounded, or
        none at all when `reads_ahead` is false)."""
        if not self.reads_ahead or self.following_unbounded:
            return None
        return self.following if self.units in ("rows", "groups") else None

    @property
    def wants_total_order(self) -> bool:
        """A ROWS frame over several rows per bucket would read the warehouse's peer order."""
        return self.scope is None and self.units == "rows"

    @property
    def time_ordered(self) -> bool:
        return self.scope is None and self.order.by == "time"

    @property
    def needs_time_axis(self) -> bool:
        """Time-ordered, reset, or partitioned by time bucket (WIN-FRM-21)."""
        return self.time_ordered or self.reset is not None or self.partition.mode == "time_bucket"

    @property
    def partition_global(self) -> bool:
        """Value-ordered frames (WIN-RES-05) and whole-partition `scope` frames (1.9)."""
        return self.scope is not None or self.order.by == "value"

    @property
    def is_running(self) -> bool:
        """Time-ordered, unbounded, never reset (WIN-RES-04)."""
        return self.time_ordered and self.preceding is None and self.reset is None

    @property
    def expands_scan(self) -> bool:
        """A reset aligns the scan to the reset boundary (WIN-FRM-17)."""
        return self.reset is not None

    @property
    def reset_grain(self) -> Grain | None:
        return self.reset

    @property
    def masked_outside_range(self) -> bool:
        return self.time_ordered

    @property
    def bucket_lookback(self) -> int | None:
        if not self.time_ordered or self.units == "range":
            return None
        return self.preceding

    @property
    def listed_function(self) -> str:
        return self.function

    @property
    def sampled(self) -> PeriodValue | None:
        return self.period_value

    def describe(self) -> str:
        if self.scope == "partition":
            return f"frame {self.function} over the whole partition"
        start = "unbounded" if self.preceding is None else self.preceding
        order = f"order={self.order.by} {self.order.direction}"
        fn = self.function if self.fraction is None else f"{self.function}({self.fraction:g})"
        text = f"frame {fn} {self.units} {start} preceding"
        if self.following or self.following_unbounded:
            end = "unbounded" if self.following_unbounded else self.following
            text += f" {end} following"
        text += f" {order}"
        if self.exclusion is not None:
            text += f" exclude={self.exclusion}"
        if self.reset:
            text += f" reset={self.reset}"
        if self.require_full_window:
            text += " full-window"
        if self.period_value is not None:
            text += f" {self.period_value.describe()}"
        return text


def parse(r: WindowReader, window: dict[str, Any]) -> FrameWindow | None:
    """The general form's `frame` object."""
    return parse_frame_object(r, window["frame"])


def parse_frame_object(r: WindowReader, value: Any) -> FrameWindow | None:
    """General frame form (WIN-FRM-01..13, WIN-19-01/02)."""
    kp = "window.frame"
    raw = r.obj(kp, value)
    if raw is None:
        return None
    r.deny_unknown(kp, raw, FRAME_KEYS)
    start = r.errors
    fn = frame_function(r, f"{kp}.function", raw.get("function"), allow_two_arg=True)
    scope: str | None = None
    if present(raw, "scope"):
        r.feature("window.frame.scope")
        scope = r.enum(f"{kp}.scope", raw["scope"], ("partition",))
    preceding: int | str | None = None
    if present(raw, "preceding"):
        preceding = _preceding(r, f"{kp}.preceding", raw["preceding"])
    elif not present(raw, "scope"):
        r.err(
            f"{kp}.preceding",
            'is required: an integer >= 0 or "unbounded" (or set scope: "partition")',
            hint='e.g. "preceding": "unbounded" for a running total',
        )
    reset = parse_reset(r, f"{kp}.reset", raw["reset"]) if present(raw, "reset") else None
    rfw = False
    if present(raw, "require_full_window"):
        rfw = bool(r.boolean(f"{kp}.require_full_window", raw["require_full_window"]))
    order: OrderSpec | None = FRAME_DEFAULT_ORDER
    if present(raw, "order"):
        r.feature("window.frame.order")
        order = parse_order(r, f"{kp}.order", raw["order"], "time")
    partition: PartitionSpec | None = FRAME_DEFAULT_PARTITION
    if present(raw, "partition"):
        r.feature("window.frame.partition")
        partition = parse_partition(r, f"{kp}.partition", raw["partition"])
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
        following = _bound(r, f"{kp}.following", raw["following"], "following")
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
    fraction = _fraction(r, kp, raw, fn)

    if present(raw, "scope"):
        for k in ("preceding", "reset", "require_full_window", "units", "order", "following",
                  "exclusion"):
            if present(raw, k):
                r.err(
                    f"{kp}.{k}",
                    f'cannot be combined with `{kp}.scope: "partition"`: scope makes the '
                    "frame the whole partition (no ORDER BY, no frame clause)",
                    hint=f"remove `{kp}.{k}`, or remove scope for an ordered frame",
                )
    else:
        if rfw and preceding == _UNBOUNDED:
            r.err(
                f"{kp}.require_full_window",
                'cannot be true with preceding "unbounded": an unbounded frame is never '
                "partial",
                hint="drop require_full_window, or give preceding a number",
            )
        if rfw and following == _UNBOUNDED:
            r.err(
                f"{kp}.require_full_window",
                'cannot be true with following "unbounded": an unbounded frame is never '
                "partial",
                hint="drop require_full_window, or give following a number",
            )
        if (
            present(raw, "following")
            and following != 0
            and order is not None
            and order.by == "time"
            and order.direction == "desc"
        ):
            p_text = "\"unbounded\"" if preceding == _UNBOUNDED else str(preceding)
            f_text = "\"unbounded\"" if following == _UNBOUNDED else str(following)
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
            if preceding is not None and preceding != _UNBOUNDED:
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
                f'only applies to covar_pop / covar_samp / corr and the regr_* functions, not '
                f'"{fn}"',
                hint="remove window.frame.second",
            )
    period = None
    if present(raw, "period_value"):
        period = parse_period_value(r, f"{kp}.period_value", raw["period_value"])
        if present(raw, "scope") or (order is not None and order.by == "value"):
            r.err(
                f"{kp}.period_value",
                "needs a frame ordered by time: it picks among the running values of the "
                "buckets inside a coarser one",
                hint='drop period_value, or order the frame by "time"',
            )
    if r.errors != start or fn is None or order is None or partition is None:
        return None
    if following is None:
        return None
    return FrameWindow(
        function=fn,
        preceding=None if preceding in (None, _UNBOUNDED) else int(preceding),  # type: ignore[arg-type]
        reset=reset,  # type: ignore[arg-type]
        require_full_window=rfw,
        order=order,
        partition=partition,
        units=units,  # type: ignore[arg-type]
        second=second,
        scope="partition" if scope else None,
        sugar=None,
        following=following if isinstance(following, int) else 0,
        following_unbounded=following == _UNBOUNDED,
        exclusion=exclusion,  # type: ignore[arg-type]
        fraction=fraction,
        period_value=period,
    )


def _preceding(r: WindowReader, key: str, value: Any) -> int | str | None:
    return _bound(r, key, value, "preceding")


def _bound(r: WindowReader, key: str, value: Any, side: str) -> int | str | None:
    if value == _UNBOUNDED:
        return _UNBOUNDED
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


def _fraction(r: WindowReader, kp: str, raw: dict[str, Any], fn: str | None) -> float | None:
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
        r.err(key, f"only applies to percentile_cont / percentile_disc, not {what}",
              hint="remove window.frame.fraction")
    return None


def parse_reset(r: WindowReader, key: str, value: Any) -> str | None:
    """A reset grain: week .. year, and (issue 22) the fiscal / retail grains."""
    if value == "day":
        r.err(
            key,
            'cannot be "day": a day reset is never coarser than the query grain (WIN-FRM-04)',
            hint=f"use {alternatives(RESET_GRAINS)}, or drop the reset",
        )
        return None
    return r.enum(key, value, RESET_GRAINS)



def _bind_preceding(spec: WindowSpec, value: int) -> WindowSpec:
    if not isinstance(spec, FrameWindow):
        raise AssertionError(f"slot frame.preceding does not fit a {spec.family} window")
    return replace(spec, preceding=value)


#: D-PARAM slots (PARAM-SLOT-02): `frame.preceding`.
SLOTS: tuple[WindowSlot, ...] = (
    WindowSlot("frame.preceding", 0, key_in_object("frame", "preceding"), _bind_preceding),
)
