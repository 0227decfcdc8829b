"""The `value` family: first / last / nth navigation (WM "General form — value", 1.3;
WIN-VAL-01..07). `nth_value` takes `n`, counting from 1; 1.14 `ignore_nulls` navigates the
non-NULL values (the spec's reserved key, gated per dialect)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from dosi.ext.window.functions import VALUE_FUNCTIONS
from dosi.ext.window.ordered import OrderedFamily, parse_ordered_family
from dosi.ext.window.reader import WindowReader
from dosi.ext.window.spec import (
    OrderSpec,
    PartitionSpec,
    WindowSlot,
    WindowSpec,
    key_in_object,
)

VALUE_KEYS: tuple[str, ...] = ("function", "n", "order", "partition", "ignore_nulls")
#: Top-level payload keys of the general value form.
TOP_KEYS: tuple[str, ...] = ("value",)
VALUE_DEFAULT_ORDER = OrderSpec("time", "asc")
VALUE_DEFAULT_PARTITION = PartitionSpec("query_dimensions")


@dataclass(frozen=True)
class ValueWindow(OrderedFamily):
    """first/last/nth navigation (WM "General form — value", 1.3)."""

    function: str
    n: int | None = None
    order: OrderSpec = VALUE_DEFAULT_ORDER
    partition: PartitionSpec = VALUE_DEFAULT_PARTITION
    #: 1.14: navigate the non-NULL values only (SQL:2011 IGNORE NULLS)
    ignore_nulls: bool = False
    family: ClassVar[str] = "value"
    default_partition: ClassVar[PartitionSpec | None] = VALUE_DEFAULT_PARTITION

    @property
    def wants_total_order(self) -> bool:
        return True

    @property
    def argument(self) -> int | None:
        return self.n

    @property
    def window_features(self) -> tuple[str, ...]:
        return ("ignore_nulls",) if self.ignore_nulls else ()

    def describe(self) -> str:
        text = super().describe()
        return text + " ignore_nulls" if self.ignore_nulls else text


def parse(r: WindowReader, window: dict[str, Any]) -> ValueWindow | None:
    """The general form's `value` object."""
    return parse_value_object(r, window["value"])


def parse_value_object(r: WindowReader, value: Any) -> ValueWindow | None:
    """Value family (WIN-VAL-01..04)."""
    parsed = parse_ordered_family(
        r,
        "value",
        value,
        VALUE_KEYS,
        VALUE_FUNCTIONS,
        "time",
        arg=(
            "n",
            "nth_value",
            "n counts from 1 (the first value)",
            'e.g. {"function": "nth_value", "n": 2} for the second value',
        ),
    )
    ignore = False
    if isinstance(value, dict) and "ignore_nulls" in value:
        r.feature("window.value.ignore_nulls")
        ignore = r.boolean("window.value.ignore_nulls", value["ignore_nulls"])
        if ignore is None:
            return None
    if parsed is None:
        return None
    fn, n, order, part = parsed
    return ValueWindow(
        fn, n, order or VALUE_DEFAULT_ORDER, part or VALUE_DEFAULT_PARTITION, bool(ignore)
    )


def _bind_n(spec: WindowSpec, value: int) -> WindowSpec:
    if not isinstance(spec, ValueWindow):
        raise AssertionError(f"slot value.n does not fit a {spec.family} window")
    return replace(spec, n=value)


#: D-PARAM slots (PARAM-SLOT-05): `value.n` (nth_value).
SLOTS: tuple[WindowSlot, ...] = (WindowSlot("value.n", 1, key_in_object("value", "n"), _bind_n),)
