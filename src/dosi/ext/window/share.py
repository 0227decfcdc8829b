"""The `share` family: each row's contribution to a partition total, `v / SUM(v) OVER
(PARTITION BY ...)` with safe division (WM "Family roadmap", `share`; DATUS 1.13).

Written `{"share": {"partition": {...}}}` (general form) or `{"type": "share", "partition":
{...}}` (the reserved window type). The partition names the population the total runs over:
`time_bucket` (default: each time bucket is one whole; the whole queried range when the query
groups by no time bucket), `none` (one grand total) or `query_dimensions_except` (the total
across the excluded dimensions, within the rest: a product's share of its region's month).
`query_dimensions` is rejected: every row would be its own total (a share of 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dosi.ext.window.modifiers import parse_partition
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.spec import PartitionSpec, WindowSlot, WindowSpec

SHARE_KEYS: tuple[str, ...] = ("partition",)
#: Top-level payload keys of the general share form.
TOP_KEYS: tuple[str, ...] = ("share",)
#: Top-level keys of the `"type": "share"` spelling.
TYPE_KEYS: tuple[str, ...] = ("partition",)
SHARE_DEFAULT_PARTITION = PartitionSpec("time_bucket")
SHARE_MODES: tuple[str, ...] = ("time_bucket", "none", "query_dimensions_except")


@dataclass(frozen=True)
class ShareWindow(WindowSpec):
    """A row's share of its partition's total (NULL when the total is 0 or NULL)."""

    partition: PartitionSpec = SHARE_DEFAULT_PARTITION
    sugar: str | None = None
    family: ClassVar[str] = "share"
    default_partition: ClassVar[PartitionSpec | None] = SHARE_DEFAULT_PARTITION

    @property
    def needs_time_axis(self) -> bool:
        """A share needs no time axis: without a grouped time bucket the whole range is one
        bucket."""
        return False

    @property
    def reads_time_bucket(self) -> bool:
        return self.partition.mode == "time_bucket"

    @property
    def window_function(self) -> str | None:
        return "sum"

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def masked_outside_range(self) -> bool:
        """Buckets loaded only for another metric's lookback never join the total: the
        time_range is the share's population (as in D-LOD)."""
        return True

    @property
    def listed_function(self) -> str:
        return "share"

    def describe(self) -> str:
        mode = self.partition.mode
        if mode == "time_bucket":
            return "share of each time bucket's total"
        if mode == "none":
            return "share of the grand total"
        return f"share of the total across {', '.join(self.partition.exclude)}"


def parse(r: WindowReader, window: dict[str, Any]) -> ShareWindow | None:
    """The general form's `share` object."""
    r.feature("window.share")
    raw = r.obj("window.share", window["share"])
    if raw is None:
        return None
    r.deny_unknown("window.share", raw, SHARE_KEYS)
    return _share(r, "window.share", raw, None)


def parse_type(r: WindowReader, window: dict[str, Any]) -> ShareWindow | None:
    """`{"type": "share", "partition": {...}}`: the reserved window type's spelling."""
    r.feature("window.share")
    return _share(r, "window", window, "share")


def _share(r: WindowReader, kp: str, raw: dict[str, Any], sugar: str | None) -> ShareWindow | None:
    start = r.errors
    part = SHARE_DEFAULT_PARTITION
    if present(raw, "partition"):
        parsed = parse_partition(r, f"{kp}.partition", raw["partition"])
        if parsed is not None and parsed.mode not in SHARE_MODES:
            r.err(
                f"{kp}.partition.mode",
                f'"{parsed.mode}" makes every row its own total (a share of 1): a share needs '
                "a population wider than the row",
                hint='use "time_bucket" (default: the share within each time bucket), "none" '
                '(of the grand total) or "query_dimensions_except" with the dimensions the '
                "share is taken across",
                candidates=list(SHARE_MODES),
            )
        elif parsed is not None:
            part = parsed
    if r.errors != start:
        return None
    return ShareWindow(part, sugar)


#: D-PARAM slots: none (a share has no integer argument).
SLOTS: tuple[WindowSlot, ...] = ()
