"""The `streak` family: the length of the current run of consecutive time buckets whose value
(or change) satisfies a condition (WM "Family roadmap", `streak`; DATUS 1.13).

Written `{"streak": {"compare": "value" | "change", "op": ">", "target": 0}}` (general form)
or `{"type": "streak", "op": ">=", "target": 1000}` (the reserved window type):

* `compare: "value"` (default) tests the bucket's own value: `value <op> target`;
* `compare: "change"` tests its change against the calendar-previous bucket:
  `value - previous <op> target` (`"op": ">"` with the default target 0 is growth); a bucket
  whose previous bucket has no row has no change and breaks the run.

Runs count calendar-adjacent buckets of the query grain: a missing bucket breaks a run, as
does a NULL value. The result is the run length ending at each bucket (0 when the bucket fails).
Partitioned by the query's other dimensions by default (`partition` as the shared modifier).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, ClassVar, Literal

from dosi.ext.envelope import json_type
from dosi.ext.window.modifiers import parse_partition
from dosi.ext.window.reader import WindowReader, alternatives, present, show
from dosi.ext.window.spec import PartitionSpec, WindowSlot, WindowSpec

STREAK_KEYS: tuple[str, ...] = ("compare", "op", "target", "partition")
#: Top-level payload keys of the general streak form.
TOP_KEYS: tuple[str, ...] = ("streak",)
#: Top-level keys of the `"type": "streak"` spelling (`partition` is shared with share).
TYPE_KEYS: tuple[str, ...] = ("compare", "op", "target", "partition")
COMPARES: tuple[str, ...] = ("value", "change")
OPS: tuple[str, ...] = (">", ">=", "<", "<=", "=", "!=")
STREAK_DEFAULT_PARTITION = PartitionSpec("query_dimensions")
#: a run reads one row per bucket, so the partition holds every grouped dimension but the time
#: axis (query_dimensions), or the query groups by the time axis alone (none); excluding a
#: grouped dimension would put several rows in a bucket
STREAK_MODES: tuple[str, ...] = ("query_dimensions", "none")


@dataclass(frozen=True)
class StreakWindow(WindowSpec):
    """The run length of consecutive buckets meeting `<compare> <op> <target>`."""

    op: str
    target: int | float | Decimal = 0
    compare: Literal["value", "change"] = "value"
    partition: PartitionSpec = STREAK_DEFAULT_PARTITION
    sugar: str | None = None
    family: ClassVar[str] = "streak"
    default_partition: ClassVar[PartitionSpec | None] = STREAK_DEFAULT_PARTITION

    @property
    def needs_time_axis(self) -> bool:
        return True

    @property
    def ordered_by_time(self) -> bool:
        return True

    @property
    def one_row_per_bucket(self) -> bool:
        return True

    @property
    def window_function(self) -> str | None:
        return "row_number"

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def masked_outside_range(self) -> bool:
        """Buckets loaded only for another metric's lookback enter as NULL: a run starts
        inside the queried range, as a running total does."""
        return True

    @property
    def listed_function(self) -> str:
        return "streak"

    def describe(self) -> str:
        subject = "value" if self.compare == "value" else "change vs previous bucket"
        return f"streak of buckets with {subject} {self.op} {self.target}"


def parse(r: WindowReader, window: dict[str, Any]) -> StreakWindow | None:
    """The general form's `streak` object."""
    r.feature("window.streak")
    raw = r.obj("window.streak", window["streak"])
    if raw is None:
        return None
    r.deny_unknown("window.streak", raw, STREAK_KEYS)
    return _streak(r, "window.streak", raw, None)


def parse_type(r: WindowReader, window: dict[str, Any]) -> StreakWindow | None:
    """`{"type": "streak", "op": ..., ...}`: the reserved window type's spelling."""
    r.feature("window.streak")
    return _streak(r, "window", window, "streak")


def _number(r: WindowReader, key: str, value: Any) -> int | float | Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        r.err(
            key,
            f"must be a number (got {json_type(value)} {show(value)})",
            hint='e.g. "target": 1000',
        )
        return None
    if isinstance(value, float) and value != value:  # NaN never compares
        r.err(key, "must be a finite number (got NaN)")
        return None
    return value


def _streak(
    r: WindowReader, kp: str, raw: dict[str, Any], sugar: str | None
) -> StreakWindow | None:
    start = r.errors
    compare = "value"
    if present(raw, "compare"):
        compare = (
            r.enum(
                f"{kp}.compare",
                raw["compare"],
                COMPARES,
                hint='"value" tests the bucket\'s value, "change" its change against the '
                'previous bucket (growth: {"compare": "change", "op": ">"})',
            )
            or "value"
        )
    op: str | None = None
    if present(raw, "op"):
        op = r.enum(
            f"{kp}.op",
            raw["op"],
            OPS,
            hint='e.g. "op": ">" with "compare": "change" counts consecutive growth buckets',
        )
    else:
        r.err(
            f"{kp}.op",
            f"is required ({alternatives(OPS)}): the condition each bucket of a run meets",
            hint='e.g. {"op": ">", "target": 0}, or {"compare": "change", "op": ">"} for growth',
            candidates=list(OPS),
        )
    target: int | float | Decimal | None = 0
    if present(raw, "target"):
        target = _number(r, f"{kp}.target", raw["target"])
    part = STREAK_DEFAULT_PARTITION
    if present(raw, "partition"):
        parsed = parse_partition(r, f"{kp}.partition", raw["partition"])
        if parsed is not None and parsed.mode not in STREAK_MODES:
            r.err(
                f"{kp}.partition.mode",
                f'"{parsed.mode}" does not give a series of one row per time bucket: '
                + (
                    "every bucket would be its own series"
                    if parsed.mode == "time_bucket"
                    else "the excluded dimensions would put several rows in a bucket"
                ),
                hint='use "query_dimensions" (default: a run per group) or "none" (one run '
                "over the time axis alone)",
                candidates=list(STREAK_MODES),
            )
        elif parsed is not None:
            part = parsed
    if r.errors != start or op is None or target is None:
        return None
    return StreakWindow(op, target, compare, part, sugar)  # type: ignore[arg-type]


def _target_site(window: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """`target` inside the general form's `streak` object, or beside `"type": "streak"`."""
    inner = window.get("streak")
    if isinstance(inner, dict):
        return inner, "target"
    return (window, "target") if window.get("type") == "streak" else None


def _bind_target(spec: WindowSpec, value: int | float | Decimal) -> WindowSpec:
    if not isinstance(spec, StreakWindow):
        raise AssertionError(f"slot streak.target does not fit a {spec.family} window")
    return replace(spec, target=value)


#: D-PARAM slots: `streak.target` (`"target": {"param": "t"}`), an `int` or `float` param
#: with any domain: the threshold a bucket's value (or change) is compared with, bound at query
#: time (`>= :t` in effect, as a filter literal is, PARAM-SLOT-06's typing).
SLOTS: tuple[WindowSlot, ...] = (
    WindowSlot("streak.target", None, _target_site, _bind_target, ("int", "float")),
)
