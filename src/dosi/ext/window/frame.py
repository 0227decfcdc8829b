"""The `frame` family: ordered re-aggregation over a window frame (WM "General form — frame",
WIN-FRM-01..21; 1.9 `scope`, WIN-19-01/02). The `rolling` and `cumulative` sugars desugar here
(`dosi.ext.window.rolling`, `dosi.ext.window.cumulative`) and share `parse_reset` and the
function check (`dosi.ext.window.functions.frame_function`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from dosi.ext.window.frame_rules import SLOTS as SLOTS  # the family's D-PARAM slots
from dosi.ext.window.frame_rules import (
    UNBOUNDED,
    bound,
    check_combinations,
    parse_fraction,
    parse_frame_keys,
    parse_history,
    parse_reset,
)
from dosi.ext.window.functions import frame_function
from dosi.ext.window.modifiers import parse_order, parse_partition
from dosi.ext.window.period_value import PeriodValue, parse_period_value
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.span import Span, check_span, parse_span
from dosi.ext.window.spec import (
    Grain,
    OrderSpec,
    PartitionSpec,
    WindowSpec,
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
    "history",
    "span",
)
#: Top-level payload keys of the general frame form.
TOP_KEYS: tuple[str, ...] = ("frame",)

FRAME_DEFAULT_ORDER = OrderSpec("time", "asc")
FRAME_DEFAULT_PARTITION = PartitionSpec("query_dimensions")


@dataclass(frozen=True)
class FrameWindow(WindowSpec):
    """Ordered re-aggregation (WM "General form — frame"; `rolling` / `cumulative` desugar here).

    `preceding is None` means UNBOUNDED PRECEDING. With `scope == "partition"` (1.9) the frame is
    the whole partition: `preceding`, `reset`, `units` and `order` do not apply. 1.14:
    `following` (0 = CURRENT ROW, the default; None with `following_unbounded`), GROUPS units,
    `exclusion`, and `fraction` for the percentiles; `period_value` (issue 22): the frame
    accumulates at its grain, and a coarser query bucket reports the first, last or average of
    those running values (`dosi.ext.window.period_value`). `history` (1.15): a running frame
    also counts every row before a time_range start (MetricFlow's cumulative metrics).
    `span` (1.15): the frame is the trailing calendar interval, a RANGE over the time key
    (`dosi.ext.window.span`); `preceding` is then None and means nothing.
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
    history: bool = False
    span: Span | None = None
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
        """Frame clauses a dialect may lack (1.14): GROUPS units, an EXCLUDE clause; (1.15)
        a RANGE frame over time with an INTERVAL bound (`span`)."""
        out: list[str] = ["range_interval"] if self.span is not None else []
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
        """A ROWS frame over several rows per bucket would read the warehouse's peer order (a
        span is a RANGE over the time key alone: peers share the frame)."""
        return self.scope is None and self.units == "rows" and self.span is None

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
        return self.time_ordered and self.preceding is None and self.reset is None and not self.span

    @property
    def reads_history(self) -> bool:
        """Accumulates every row before a time_range start (1.15 `history: "all"`)."""
        return self.history

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
        if not self.time_ordered or self.units == "range" or self.span is not None:
            return None
        return self.preceding

    @property
    def lookback_span(self) -> Span | None:
        """The calendar interval a `span` frame reads back from each bucket (1.15)."""
        return self.span

    @property
    def listed_function(self) -> str:
        return self.function

    @property
    def sampled(self) -> PeriodValue | None:
        return self.period_value

    def describe(self) -> str:
        if self.scope == "partition":
            return f"frame {self.function} over the whole partition"
        if self.span is not None:
            text = f"frame {self.function} span {self.span.describe()}"
            text += f" reset={self.reset}" if self.reset else ""
            if self.period_value is not None:
                text += f" {self.period_value.describe()}"
            return text
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
        text += " history=all" if self.history else ""
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
    span: Span | None = None
    if present(raw, "span"):
        span = parse_span(r, f"{kp}.span", raw["span"])
        check_span(r, kp, raw)
    if present(raw, "preceding"):
        preceding = bound(r, f"{kp}.preceding", raw["preceding"], "preceding")
    elif not present(raw, "scope") and not present(raw, "span"):
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
    units, second, following, exclusion = parse_frame_keys(r, kp, raw)
    fraction = parse_fraction(r, kp, raw, fn)
    check_combinations(r, kp, raw, fn, preceding, following, order, units, rfw)
    period = None
    if present(raw, "period_value"):
        period = parse_period_value(r, f"{kp}.period_value", raw["period_value"])
    history = parse_history(r, kp, raw, preceding, order, reset, scope)
    if r.errors != start or fn is None or order is None or partition is None:
        return None
    if following is None:
        return None
    return FrameWindow(
        function=fn,
        preceding=None if preceding in (None, UNBOUNDED) else int(preceding),  # type: ignore[arg-type]
        reset=reset,  # type: ignore[arg-type]
        require_full_window=rfw,
        order=order,
        partition=partition,
        units=units,  # type: ignore[arg-type]
        second=second,
        scope="partition" if scope else None,
        sugar=None,
        following=following if isinstance(following, int) else 0,
        following_unbounded=following == UNBOUNDED,
        exclusion=exclusion,  # type: ignore[arg-type]
        fraction=fraction,
        period_value=period,
        history=history,
        span=span,
    )
