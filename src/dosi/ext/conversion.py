"""`conversion` on a metric (DATUS 1.12; the documents reserve no key for it, so it is this
engine's own, registered with ignore impact silent): of the entities that did a base event,
the conversion events they did within a window after it (funnel steps, activation rates).

Payload:

    "conversion": {
      "base": "<metric>",            the base event metric (a single plain aggregate)
      "conversion": "<metric>",      the conversion event metric (a single plain aggregate)
      "entity": "user_id" | {"base": "visits.user_id", "conversion": "buys.user_id"},
      "window": "7 days" | {"count": 7, "granularity": "day"},     optional: unbounded
      "calculation": "conversion_rate" | "conversions",            default conversion_rate
      "constant_properties": ["session_id" | {"base": ..., "conversion": ...}, ...]
    }

A field name written once names a field of that name on each side; the compiler resolves
every name. Unknown keys are rejected anywhere inside: the key is silent-impact, so a newer
in-family addition must fail closed rather than be dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

Calculation = Literal["conversion_rate", "conversions"]
CALCULATIONS: tuple[str, ...] = ("conversion_rate", "conversions")
WINDOW_GRAINS: tuple[str, ...] = ("day", "week", "month", "quarter", "year")
KEYS: tuple[str, ...] = (
    "base",
    "conversion",
    "entity",
    "window",
    "calculation",
    "constant_properties",
)
PAIR_KEYS: tuple[str, ...] = ("base", "conversion")
WINDOW_KEYS: tuple[str, ...] = ("count", "granularity")
#: The longest window per granularity: 10,000 years (intervals stay in range on every engine).
MAX_WINDOW: dict[str, int] = {
    "day": 3_660_000,
    "week": 530_000,
    "month": 120_000,
    "quarter": 40_000,
    "year": 10_000,
}
INVALID = "invalid_datus_extension"
HINT = (
    'e.g. "conversion": {"base": "visits", "conversion": "buys", "entity": "user_id", '
    '"window": "7 days"}'
)


@dataclass(frozen=True)
class FieldPair:
    """One property as each side spells it (a bare name or `dataset.field`)."""

    base: str
    conversion: str


@dataclass(frozen=True)
class ConversionWindow:
    count: int
    granularity: str

    def describe(self) -> str:
        return f"{self.count} {self.granularity}{'s' if self.count != 1 else ''}"


@dataclass(frozen=True)
class ConversionSpec:
    base: str
    conversion: str
    entity: FieldPair
    window: ConversionWindow | None = None
    calculation: Calculation = "conversion_rate"
    constant_properties: tuple[FieldPair, ...] = ()


class _Reader:
    def __init__(self, path: str | None, sink: DiagnosticSink) -> None:
        self.path = path
        self.sink = sink
        self.ok = True

    def bad(self, key: str, message: str, cands: list[str] | None = None) -> None:
        self.sink.error(
            INVALID, f"`{key}` {message}", path=self.path, hint=HINT, candidates=tuple(cands or ())
        )
        self.ok = False

    def deny_unknown(self, key: str, obj: dict[str, Any], allowed: tuple[str, ...]) -> None:
        for k in obj:
            if k not in allowed:
                self.bad(f"{key}.{k}", f"is not a key of `{key}`", closest(k, allowed))

    def name(self, key: str, value: Any, what: str) -> str | None:
        if isinstance(value, str) and value.strip() != "" and value == value.strip():
            return value
        self.bad(key, f"must be {what} (got {json_type(value)} {_show(value)})")
        return None

    def pair(self, key: str, value: Any) -> FieldPair | None:
        if isinstance(value, str):
            one = self.name(key, value, "a field name")
            return FieldPair(one, one) if one is not None else None
        if not isinstance(value, dict):
            self.bad(
                key,
                'must be a field name or {"base": ..., "conversion": ...} '
                f"(got {json_type(value)} {_show(value)})",
            )
            return None
        self.deny_unknown(key, value, PAIR_KEYS)
        sides = [
            self.name(f"{key}.{side}", value.get(side), "a field name string") for side in PAIR_KEYS
        ]
        if sides[0] is None or sides[1] is None:
            return None
        return FieldPair(sides[0], sides[1])

    def window(self, value: Any) -> ConversionWindow | None:
        key = "conversion.window"
        if isinstance(value, str):
            parts = value.split(" ")
            if len(parts) != 2 or not parts[0].isascii() or not parts[0].isdigit():
                self.bad(key, f'must be "<count> <granularity>", e.g. "7 days" (got "{value}")')
                return None
            count, unit = int(parts[0]), parts[1]
            grain = unit if unit in WINDOW_GRAINS else unit[:-1] if unit.endswith("s") else unit
        elif isinstance(value, dict):
            self.deny_unknown(key, value, WINDOW_KEYS)
            raw_count, grain = value.get("count"), value.get("granularity")
            if not isinstance(raw_count, int) or isinstance(raw_count, bool):
                self.bad(f"{key}.count", f"must be an integer >= 1 (got {_show(raw_count)})")
                return None
            count = raw_count
        else:
            self.bad(
                key,
                'must be "<count> <granularity>" or {"count", "granularity"} '
                f"(got {json_type(value)} {_show(value)})",
            )
            return None
        if grain not in WINDOW_GRAINS:
            cands = closest(grain, WINDOW_GRAINS) if isinstance(grain, str) else []
            self.bad(key, f"granularity must be one of {', '.join(WINDOW_GRAINS)}", cands)
            return None
        if count < 1 or count > MAX_WINDOW[grain]:
            self.bad(key, f"count must be between 1 and 10,000 years of {grain}s (got {count})")
            return None
        return ConversionWindow(count, grain)


def read_conversion(value: Any, path: str | None, sink: DiagnosticSink) -> ConversionSpec | None:
    """The validated declaration, or None after its errors are reported."""
    r = _Reader(path, sink)
    if not isinstance(value, dict):
        r.bad("conversion", f"must be an object (got {json_type(value)} {_show(value)})")
        return None
    r.deny_unknown("conversion", value, KEYS)
    metrics: list[str | None] = []
    for side in ("base", "conversion"):
        if value.get(side) is None:
            r.bad(f"conversion.{side}", f"is required: the {side} event metric")
            metrics.append(None)
        else:
            metrics.append(r.name(f"conversion.{side}", value[side], "a metric name string"))
    entity = None
    if value.get("entity") is None:
        r.bad("conversion.entity", "is required: the field linking base and conversion events")
    else:
        entity = r.pair("conversion.entity", value["entity"])
    window = r.window(value["window"]) if value.get("window") is not None else None
    calc = value.get("calculation", "conversion_rate")
    if calc not in CALCULATIONS:
        cands = closest(calc, CALCULATIONS) if isinstance(calc, str) else []
        r.bad(
            "conversion.calculation",
            f"must be one of {', '.join(CALCULATIONS)} (got {json_type(calc)} {_show(calc)})",
            cands,
        )
    props: list[FieldPair] = []
    raw_props = value.get("constant_properties", [])
    if not isinstance(raw_props, list):
        r.bad("conversion.constant_properties", f"must be an array (got {json_type(raw_props)})")
    else:
        for i, p in enumerate(raw_props):
            pair = r.pair(f"conversion.constant_properties[{i}]", p)
            if pair is not None:
                props.append(pair)
    base, conv = metrics
    if not r.ok or base is None or conv is None or entity is None:
        return None
    return ConversionSpec(base, conv, entity, window, calc, tuple(props))
