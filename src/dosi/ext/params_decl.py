"""D-PARAM declarations (datus-extensions §3 "D-PARAM", PARAM-DEC-*): a metric's `params`
list read into typed `ParamDecl`s (name, type, default, a domain), and the record of which
slots each fills (`MetricParams`). Parameters fill typed holes only, never SQL text
(PARAM-DEC-09): `typed_value` is the one conversion of a bound value.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import DiagnosticSink

INVALID = "invalid_datus_extension"

ParamType = Literal["int", "float", "string"]
Scalar = int | float | str
PARAM_TYPES: tuple[str, ...] = ("int", "float", "string")
DECL_KEYS: tuple[str, ...] = ("name", "type", "default", "allowed", "min", "max", "description")
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class ParamDecl:
    """One declared parameter; `allowed` xor `minimum`/`maximum` is its domain."""

    name: str
    type: ParamType
    default: Scalar
    allowed: tuple[Scalar, ...] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    description: str | None = None

    @property
    def bounded(self) -> bool:
        return self.allowed is not None or self.minimum is not None or self.maximum is not None

    def lowest(self) -> int | float | None:
        """The domain's lower bound (None: unbounded below)."""
        if self.allowed is not None:
            return min(self.allowed)  # type: ignore[type-var]
        return self.minimum

    def admits(self, value: Scalar) -> bool:
        if self.allowed is not None:
            return value in self.allowed
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            return False
        return not (self.maximum is not None and value > self.maximum)  # type: ignore[operator]

    def domain_text(self) -> str:
        if self.allowed is not None:
            return "one of [" + ", ".join(show(v) for v in self.allowed) + "]"
        low = "-inf" if self.minimum is None else show(self.minimum)
        high = "+inf" if self.maximum is None else show(self.maximum)
        return f"in [{low}, {high}]"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default}
        if self.allowed is not None:
            out["allowed"] = list(self.allowed)
        if self.minimum is not None:
            out["min"] = self.minimum
        if self.maximum is not None:
            out["max"] = self.maximum
        if self.description is not None:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class ParamSlot:
    """A hole a param fills: `slot` is a WINDOW_SLOT_MIN key or `filter.literal`."""

    slot: str
    param: str


@dataclass(frozen=True)
class MetricParams:
    """What a metric's `params` key says once read: declarations and the slots they fill."""

    decls: tuple[ParamDecl, ...]
    slots: tuple[ParamSlot, ...] = ()

    def decl(self, name: str) -> ParamDecl | None:
        return next((d for d in self.decls if d.name == name), None)

    def defaults(self) -> dict[str, Scalar]:
        return {d.name: d.default for d in self.decls}

    def to_list(self) -> list[dict[str, Any]]:
        """PARAM-CAT-01: each declaration plus the slots it fills."""
        return [
            {**d.to_dict(), "slots": [s.slot for s in self.slots if s.param == d.name]}
            for d in self.decls
        ]


def show(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and not (
        isinstance(v, float) and not math.isfinite(v)
    )


def typed_value(ptype: str, v: Any) -> Scalar | None:
    """`v` as a value of `ptype`, or None. The only conversion: a float accepts a JSON integer
    (PARAM-BIND-05)."""
    if ptype == "int":
        return int(v) if _is_int(v) else None
    if ptype == "float":
        return float(v) if _is_number(v) else None
    return v if isinstance(v, str) else None


def read_decls(raw: Any, path: str | None, sink: DiagnosticSink) -> tuple[ParamDecl, ...] | None:
    """The declarations of a `params` list; None when any is invalid (errors in `sink`)."""
    return _Reader(path, sink).decls(raw)


class _Reader:
    def __init__(self, path: str | None, sink: DiagnosticSink) -> None:
        self.path = path
        self.sink = sink
        self.failed = False

    def err(self, message: str, hint: str | None = None) -> None:
        self.failed = True
        self.sink.error(INVALID, message, path=self.path, hint=hint)

    def decls(self, raw: Any) -> tuple[ParamDecl, ...] | None:
        if not isinstance(raw, list):
            self.err(
                "`params` must be a list of {name, type, default, allowed | min/max, "
                "description} objects",
                hint='e.g. "params": [{"name": "n", "type": "int", "default": 3, "min": 1}]',
            )
            return None
        out: list[ParamDecl] = []
        for i, item in enumerate(raw):
            d = self.decl(i, item)
            if d is None:
                continue
            if any(o.name == d.name for o in out):
                self.err(f'param "{d.name}": declared twice', hint="param names are unique")
                continue
            out.append(d)
        return None if self.failed else tuple(out)

    def decl(self, i: int, item: Any) -> ParamDecl | None:
        if not isinstance(item, dict):
            self.err(f"`params[{i}]` must be an object {{name, type, default, ...}}")
            return None
        extra = [k for k in item if k not in DECL_KEYS]
        if extra:
            self.err(
                f"`params[{i}]` has unknown key `{extra[0]}` (expected one of "
                f"{', '.join(DECL_KEYS)})"
            )
            return None
        name = item.get("name")
        if not isinstance(name, str) or PARAM_NAME.fullmatch(name) is None:
            self.err(f"param name {show(name)} must match [a-z][a-z0-9_]*")
            return None
        ptype = item.get("type")
        if ptype not in PARAM_TYPES:
            self.err(
                f'param "{name}": type {show(ptype)} is not one of int, float, string',
                hint='"type": "int" for window slots',
            )
            return None
        if "default" not in item or item["default"] is None:
            self.err(f'param "{name}": `default` is required')
            return None
        desc = item.get("description")
        if desc is not None and not isinstance(desc, str):
            self.err(f'param "{name}": description must be a string')
            return None
        default = self.value(name, ptype, "default", item["default"])
        allowed = self.allowed(name, ptype, item.get("allowed"))
        low = self.bound(name, ptype, "min", item.get("min"))
        high = self.bound(name, ptype, "max", item.get("max"))
        if self.failed:
            return None
        if allowed is not None and (low is not None or high is not None):
            self.err(f'param "{name}": allowed and min/max are mutually exclusive')
            return None
        if ptype == "string" and allowed is None:
            self.err(
                f'param "{name}": a string param must declare `allowed` (an unbounded string is '
                "any dimension value)",
                hint=f'e.g. "allowed": [{show(default)}]',
            )
            return None
        if low is not None and high is not None and low > high:
            self.err(f'param "{name}": min {show(low)} > max {show(high)}')
            return None
        assert default is not None
        d = ParamDecl(name, ptype, default, allowed, low, high, desc)  # type: ignore[arg-type]
        if not d.admits(default):
            self.err(
                f'default out of domain: parameter "{name}" must be {d.domain_text()} '
                f"(default {show(default)})"
            )
            return None
        return d

    def value(self, name: str, ptype: str, key: str, raw: Any) -> Scalar | None:
        v = typed_value(ptype, raw)
        if v is None:
            self.err(f'param "{name}": {key} must be a {ptype} value, got {show(raw)}')
        return v

    def allowed(self, name: str, ptype: str, raw: Any) -> tuple[Scalar, ...] | None:
        if raw is None:
            return None
        if not isinstance(raw, list):
            self.err(f'param "{name}": allowed must be a list of {ptype} values')
            return None
        if not raw:
            self.err(f'param "{name}": allowed must not be empty')
            return None
        values = [self.value(name, ptype, "allowed", v) for v in raw]
        if any(v is None for v in values):
            return None
        return tuple(dict.fromkeys(v for v in values if v is not None))

    def bound(self, name: str, ptype: str, key: str, raw: Any) -> int | float | None:
        if raw is None:
            return None
        if ptype == "string":
            self.err(f'param "{name}": {key} must be a string value, got {show(raw)}')
            return None
        v = self.value(name, ptype, key, raw)
        return v  # type: ignore[return-value]
