"""The shared modifiers of the ordered families: `order` and `partition` (WM "Shared
modifiers", WIN-MOD-01..03; `order.nulls` is 1.9, WIN-19-03)."""

from __future__ import annotations

from typing import Any

from dosi.ext.envelope import json_type
from dosi.ext.window.reader import WindowReader, alternatives, present, show
from dosi.ext.window.spec import (
    NULLS,
    ORDER_BY,
    ORDER_DIRECTIONS,
    ORDER_KEYS,
    PARTITION_KEYS,
    PARTITION_MODES,
    OrderSpec,
    PartitionSpec,
)


def parse_order(r: WindowReader, key: str, value: Any, default_by: str) -> OrderSpec | None:
    """`{by, direction, nulls}`; direction defaults per `by` (WIN-MOD-01, WIN-19-03)."""
    raw = r.obj(key, value)
    if raw is None:
        return None
    r.deny_unknown(key, raw, ORDER_KEYS)
    start = r.errors
    by = r.enum(f"{key}.by", raw["by"], ORDER_BY) if present(raw, "by") else default_by
    direction: str | None = None
    if present(raw, "direction"):
        direction = r.enum(f"{key}.direction", raw["direction"], ORDER_DIRECTIONS)
    elif by is not None:
        direction = "asc" if by == "time" else "desc"
    nulls: str | None = None
    if present(raw, "nulls"):
        r.feature("window.order.nulls")
        nulls = r.enum(f"{key}.nulls", raw["nulls"], NULLS)
    if r.errors != start or by is None or direction is None:
        return None
    return OrderSpec(by, direction, nulls)  # type: ignore[arg-type]


def parse_partition(r: WindowReader, key: str, value: Any) -> PartitionSpec | None:
    """`{mode, exclude}`; `exclude` only with `query_dimensions_except` (WIN-MOD-02/03)."""
    raw = r.obj(key, value)
    if raw is None:
        return None
    r.deny_unknown(key, raw, PARTITION_KEYS)
    start = r.errors
    mode: str | None = None
    if present(raw, "mode"):
        mode = r.enum(f"{key}.mode", raw["mode"], PARTITION_MODES)
    else:
        r.err(f"{key}.mode", f"is required ({alternatives(PARTITION_MODES)})")
    exclude: tuple[str, ...] = ()
    except_mode = "query_dimensions_except"
    if present(raw, "exclude"):
        if mode is not None and mode != except_mode:
            r.err(
                f"{key}.exclude",
                f'only pairs with mode "{except_mode}" (mode is "{mode}")',
                hint=f'remove exclude, or set "mode": "{except_mode}"',
            )
        else:
            exclude = _exclude(r, f"{key}.exclude", raw["exclude"])
    elif mode == except_mode:
        r.err(
            f"{key}.exclude",
            f'is required with mode "{except_mode}": list the dimensions to leave out of the '
            'partition as "dataset.field"',
        )
    if r.errors != start or mode is None:
        return None
    return PartitionSpec(mode, exclude)  # type: ignore[arg-type]


def _is_qualified(name: Any) -> bool:
    if not isinstance(name, str) or name.count(".") != 1:
        return False
    return all(part and part == part.strip() for part in name.split("."))


def _exclude(r: WindowReader, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        r.err(
            key,
            "must be a non-empty array of qualified dimension names "
            f"(got {json_type(value)} {show(value)})",
            hint='e.g. "exclude": ["orders.region"]',
        )
        return ()
    out: list[str] = []
    for i, item in enumerate(value):
        if _is_qualified(item):
            out.append(item)
        else:
            r.err(
                f"{key}[{i}]",
                f'must be a qualified "dataset.field" name (got {show(item)}); the bare '
                "field spelling is reserved",
                hint='e.g. "orders.region"',
            )
    return tuple(out)
