"""D-DERIVE payload reading: the `derive` key and `window.base` (datus-extensions D-DERIVE).

`derive` is a JSON object with a `type` discriminator. Each family has its own reader in
`DERIVE_READERS` (family -> reader), so a new family (the `lod` family, D-LOD) registers one
entry without touching the others. Reserved families (`reagg`) are `not_implemented` naming
their milestone; an unknown type is `invalid_datus_extension`. What the names and predicates
mean (metrics, fields, cycles, the expression gate) is checked by `dosi.compiler.derive`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

INVALID = "invalid_datus_extension"
NOT_IMPLEMENTED = "not_implemented"


@dataclass(frozen=True)
class FilterDerive:
    """`{"type": "filter", "base": <metric>, "where": <predicate>}` (DRV-FIL-01)."""

    base: str
    where: str
    family: str = "filter"


@dataclass(frozen=True)
class ComposeDerive:
    """`{"type": "compose", "expr": <arithmetic>, "fill": <n>}` (DRV-CMP-01)."""

    expr: str
    fill: float | int | None = None
    family: str = "compose"


class _Reader:
    def __init__(self, path: str | None, sink: DiagnosticSink) -> None:
        self.path = path
        self.sink = sink
        self.ok = True

    def bad(self, message: str, hint: str | None = None, code: str = INVALID) -> None:
        self.sink.error(code, message, path=self.path, hint=hint)
        self.ok = False

    def keys(self, raw: dict[str, Any], family: str, allowed: tuple[str, ...]) -> None:
        for k in raw:
            if k not in allowed:
                self.bad(
                    f"`derive.{k}` is not a key of the {family} family (expected one of "
                    + ", ".join(f"`{a}`" for a in allowed)
                    + ")",
                    "remove it",
                )

    def text(self, raw: dict[str, Any], key: str, example: str) -> str:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if value is None:
            self.bad(f"`derive.{key}` is required", f"e.g. {example}")
        else:
            self.bad(
                f"`derive.{key}` must be a non-empty string (got {json_type(value)} "
                f"{_show(value)})",
                f"e.g. {example}",
            )
        return ""


def _filter(r: _Reader, raw: dict[str, Any]) -> FilterDerive | None:
    r.keys(raw, "filter", ("type", "base", "where"))
    base = r.text(raw, "base", '"base": "revenue"')
    where = r.text(raw, "where", '"where": "status = \'completed\'"')
    return FilterDerive(base.strip(), where) if r.ok else None


def _compose(r: _Reader, raw: dict[str, Any]) -> ComposeDerive | None:
    r.keys(raw, "compose", ("type", "expr", "fill"))
    expr = r.text(raw, "expr", '"expr": "revenue - total_refunds"')
    fill = raw.get("fill")
    if fill is not None and not (
        isinstance(fill, int | float) and not isinstance(fill, bool) and math.isfinite(fill)
    ):
        r.bad(
            f"`derive.fill` must be a finite JSON number (got {json_type(fill)} {_show(fill)})",
            '"fill": 0 (unquoted)',
        )
    return ComposeDerive(expr, fill) if r.ok else None


def _reserved(family: str, successor: str) -> Callable[[_Reader, dict[str, Any]], None]:
    def read(r: _Reader, raw: dict[str, Any]) -> None:
        r.bad(
            f'derive type "{family}" is reserved and not implemented in this engine',
            successor,
            NOT_IMPLEMENTED,
        )

    return read


# family -> reader; the `lod` family (D-LOD, 1.10) registers its reader here
DERIVE_READERS: dict[str, Callable[[_Reader, dict[str, Any]], Any]] = {
    "filter": _filter,
    "compose": _compose,
    "reagg": _reserved(
        "reagg", "two-level aggregation lands in D-DERIVE M3; use a `lod` metric meanwhile"
    ),
}


def read_derive(raw: Any, path: str | None, sink: DiagnosticSink) -> tuple[bool, Any]:
    """(ok, the family's typed payload) for a `derive` value."""
    r = _Reader(path, sink)
    if not isinstance(raw, dict):
        r.bad(
            f"`derive` must be a JSON object with a `type` (got {json_type(raw)} {_show(raw)})",
            '"derive": {"type": "compose", "expr": "revenue - total_refunds"}',
        )
        return False, None
    family = raw.get("type")
    reader = DERIVE_READERS.get(family) if isinstance(family, str) else None
    if reader is None:
        known = sorted(f for f in DERIVE_READERS if f != "reagg")
        r.bad(
            f"unknown derive type {_show(family)}; expected "
            + ", ".join(f'"{f}"' for f in known)
            + ' ("reagg" is reserved)',
            'e.g. "derive": {"type": "filter", "base": "revenue", "where": "..."}',
        )
        return False, None
    value = reader(r, raw)
    return r.ok and value is not None, value


def read_window_base(obj: dict[str, Any]) -> str | None:
    """The `window.base` metric name of a decoded metric payload (validated by the window
    parser, which reports a non-string)."""
    window = obj.get("window")
    if not isinstance(window, dict):
        return None
    base = window.get("base")
    return base.strip() if isinstance(base, str) and base.strip() else None
