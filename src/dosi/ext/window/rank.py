"""The `rank` family: SQL:2003 ranking over the metric value (WM "General form — rank", 1.3;
WIN-RNK-01..08). `ntile` takes `buckets`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from dosi.ext.window.functions import RANK_FUNCTIONS
from dosi.ext.window.ordered import OrderedFamily, parse_ordered_family
from dosi.ext.window.reader import WindowReader
from dosi.ext.window.spec import (
    OrderSpec,
    PartitionSpec,
    WindowSlot,
    WindowSpec,
    key_in_object,
)

RANK_KEYS: tuple[str, ...] = ("function", "buckets", "order", "partition")
#: Top-level payload keys of the general rank form.
TOP_KEYS: tuple[str, ...] = ("rank",)
RANK_DEFAULT_ORDER = OrderSpec("value", "desc")
RANK_DEFAULT_PARTITION = PartitionSpec("none")


@dataclass(frozen=True)
class RankWindow(OrderedFamily):
    """SQL:2003 ranking over the metric value (WM "General form — rank", 1.3)."""

    function: str
    buckets: int | None = None
    order: OrderSpec = RANK_DEFAULT_ORDER
    partition: PartitionSpec = RANK_DEFAULT_PARTITION
    family: ClassVar[str] = "rank"
    default_partition: ClassVar[PartitionSpec | None] = RANK_DEFAULT_PARTITION

    @property
    def argument(self) -> int | None:
        return self.buckets

    @property
    def wants_total_order(self) -> bool:
        """Positional ranks need a total order; peer-aware ranks keep their peers."""
        return self.function in ("row_number", "ntile")


def parse(r: WindowReader, window: dict[str, Any]) -> RankWindow | None:
    """The general form's `rank` object."""
    return parse_rank_object(r, window["rank"])


def parse_rank_object(r: WindowReader, value: Any) -> RankWindow | None:
    """Rank family (WIN-RNK-01..05)."""
    parsed = parse_ordered_family(
        r,
        "rank",
        value,
        RANK_KEYS,
        RANK_FUNCTIONS,
        "value",
        arg=(
            "buckets",
            "ntile",
            "e.g. 4 for quartiles",
            'e.g. {"function": "ntile", "buckets": 4} for quartiles',
        ),
    )
    if parsed is None:
        return None
    fn, buckets, order, part = parsed
    return RankWindow(fn, buckets, order or RANK_DEFAULT_ORDER, part or RANK_DEFAULT_PARTITION)


def _bind_buckets(spec: WindowSpec, value: int) -> WindowSpec:
    if not isinstance(spec, RankWindow):
        raise AssertionError(f"slot rank.buckets does not fit a {spec.family} window")
    return replace(spec, buckets=value)


#: D-PARAM slots (PARAM-SLOT-04): `rank.buckets` (ntile).
SLOTS: tuple[WindowSlot, ...] = (
    WindowSlot("rank.buckets", 1, key_in_object("rank", "buckets"), _bind_buckets),
)
