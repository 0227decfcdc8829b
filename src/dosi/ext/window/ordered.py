"""What the `rank` and `value` families share (WM "General form — rank" / "— value", 1.3):
the spec's properties and the payload shape `{function, <one integer argument>, order,
partition}`, where only one function takes the argument (`buckets` for ntile, `n` for
nth_value)."""

from __future__ import annotations

from typing import Any

from dosi.ext.window.functions import FRAME_FUNCTIONS, RANK_FUNCTIONS, VALUE_FUNCTIONS
from dosi.ext.window.modifiers import parse_order, parse_partition
from dosi.ext.window.reader import WindowReader, present
from dosi.ext.window.spec import OrderSpec, PartitionSpec, WindowSpec


class OrderedFamily(WindowSpec):
    """What the rank and value families share: partition-global (WIN-RES-05), and needing the
    time axis only when time-ordered or partitioned by time bucket (WIN-RNK-08, WIN-VAL-07)."""

    function: str
    order: OrderSpec
    partition: PartitionSpec

    @property
    def needs_time_axis(self) -> bool:
        return self.order.by == "time" or self.partition.mode == "time_bucket"

    @property
    def partition_global(self) -> bool:
        return True

    @property
    def window_function(self) -> str | None:
        return self.function

    @property
    def partition_spec(self) -> PartitionSpec | None:
        return self.partition

    @property
    def ordered_by_time(self) -> bool:
        return self.order.by == "time"

    @property
    def argument(self) -> int | None:  # pragma: no cover - overridden
        return None

    @property
    def listed_function(self) -> str:
        return self.function

    def describe(self) -> str:
        arg = f"({self.argument})" if self.argument is not None else ""
        return f"{self.family} {self.function}{arg} order={self.order.by} {self.order.direction}"


def parse_ordered_family(
    r: WindowReader,
    family: str,
    value: Any,
    keys: tuple[str, ...],
    functions: tuple[str, ...],
    default_order_by: str,
    arg: tuple[str, str, str, str],
) -> tuple[str, int | None, OrderSpec | None, PartitionSpec | None] | None:
    """What the rank and value payloads share: `function`, one integer argument that only
    one function takes (`buckets` for ntile, `n` for nth_value), `order` and `partition`."""
    kp = f"window.{family}"
    r.feature(kp)
    raw = r.obj(kp, value)
    if raw is None:
        return None
    r.deny_unknown(kp, raw, keys)
    start = r.errors
    fn = _family_function(r, kp, raw, functions)
    arg_key, arg_fn, range_hint, example = arg
    argument: int | None = None
    if fn == arg_fn:
        if present(raw, arg_key):
            argument = r.int_min(f"{kp}.{arg_key}", raw[arg_key], 1, range_hint)
        else:
            r.err(
                f"{kp}.{arg_key}",
                f'is required with "{arg_fn}" (an integer >= 1)',
                hint=example,
            )
    elif fn is not None and present(raw, arg_key):
        r.err(f"{kp}.{arg_key}", f'only applies to "{arg_fn}", not "{fn}"', "remove it")
    order = (
        parse_order(r, f"{kp}.order", raw["order"], default_order_by)
        if present(raw, "order")
        else None
    )
    part = (
        parse_partition(r, f"{kp}.partition", raw["partition"])
        if present(raw, "partition")
        else None
    )
    if r.errors != start or fn is None:
        return None
    return fn, argument, order, part


def _family_function(
    r: WindowReader, kp: str, raw: dict[str, Any], allowed: tuple[str, ...]
) -> str | None:
    key = f"{kp}.function"
    if not present(raw, "function"):
        r.err(key, f"is required (one of {', '.join(allowed)})")
        return None
    value = raw["function"]
    hint = None
    if isinstance(value, str) and value in FRAME_FUNCTIONS:
        hint = (
            f'"{value}" is a frame-family function: use {{"frame": {{"function": "{value}", ...}}}}'
        )
    elif isinstance(value, str) and value in RANK_FUNCTIONS + VALUE_FUNCTIONS:
        fam = "rank" if value in RANK_FUNCTIONS else "value"
        hint = f'"{value}" belongs to the {fam} family: use window.{fam}'
    return r.enum(key, value, allowed, hint)
