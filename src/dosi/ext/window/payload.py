"""D-WINDOW: validation of the `window` payload and desugaring into one family's spec.

Everything here follows window-metrics-extension.md ("The window payload", each general form,
the three sugars, "Shared modifiers", "Validation") plus the later in-family growth recorded in
datus-extensions §7 (1.9: `frame.scope`, `order.nulls`). The sugars are desugared by their
parsers, so the planner only ever sees the general families (`dosi.ext.window.families`):

* `pop`        → `OffsetWindow` (calculation defaults to `percent_change`)
* `rolling`    → `FrameWindow(preceding = periods - 1)`
* `cumulative` → `FrameWindow(preceding = None /* unbounded */, reset = reset)`

Every violation is an `invalid_datus_extension` diagnostic whose message starts with the exact
key path (e.g. `window.frame.preceding`) and whose hint says how to fix it. `window.base`
(D-DERIVE M2) is checked to be a name here; `ext/derive.py` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.envelope import json_type
from dosi.ext.window.families import (
    FAMILIES,
    FAMILY_BY_NAME,
    GENERAL_HINTS,
    SUGAR_BY_NAME,
    SUGARS,
    TOP_OWNERS,
    WINDOW_FAMILIES,
)
from dosi.ext.window.reader import WindowReader, alternatives, present, show
from dosi.ext.window.spec import WindowSpec


@dataclass(frozen=True)
class WindowParse:
    """Result of `parse_window`: the IR (None on any error), in-family features used, base flag."""

    spec: WindowSpec | None
    features: tuple[str, ...] = ()
    has_base: bool = False


def parse_window(raw: Any, *, path: str | None, sink: DiagnosticSink) -> WindowParse:
    """Validate a `window` payload and desugar it to the general IR.

    Diagnostics go to `sink` (`invalid_datus_extension` per violation); the spec is `None`
    whenever anything was reported, so callers fall back to the plain base aggregate
    (ENV-CAR-09). `features` lists the in-family shapes used (`registry.WINDOW_FEATURES`) for
    the version gate.
    """
    r = WindowReader(path, sink)
    spec, has_base = _parse(r, raw)
    return WindowParse(spec, tuple(r.features), has_base)


def _parse(r: WindowReader, raw: Any) -> tuple[WindowSpec | None, bool]:
    if not isinstance(raw, dict):
        r.err(
            "window",
            f"must be a JSON object (got {json_type(raw)} {show(raw)})",
            hint='e.g. "window": {"type": "pop", "offset": "1 month"}',
        )
        return None, False
    has_base = "base" in raw
    if has_base:
        # D-DERIVE M2 `window.base`: the series is another metric's (ext/derive.py reads
        # the name; the compiler checks what it names)
        base = raw["base"]
        if not isinstance(base, str) or not base.strip():
            r.err(
                "window.base",
                f"must be a metric name string (got {json_type(base)} {show(base)})",
                hint='e.g. "window": {"base": "close_rate", "rank": {"function": "rank"}}',
            )
        raw = {k: v for k, v in raw.items() if k != "base"}
    start = r.errors
    kind = raw.get("type")
    sugar = SUGAR_BY_NAME.get(kind) if isinstance(kind, str) else None
    spec: WindowSpec | None
    if kind is None:
        spec = _general(r, raw)
    elif sugar is not None:
        _forbid_foreign(r, raw, sugar.name)
        spec = sugar.parse(r, raw)
    else:
        r.enum(
            "window.type",
            kind,
            SUGARS,
            hint=f"omit `type` for the general form (exactly one of {' / '.join(FAMILIES)})",
        )
        spec = None
    if r.errors != start:
        return None, has_base
    return spec, has_base


def _forbid_foreign(r: WindowReader, raw: dict[str, Any], shape: str) -> None:
    """Keys owned by a different shape are rejected (WIN-PAY-07, WIN-POP-03/ROL-04/CUM-03)."""
    where = "in the general form (no `type`)" if shape == "general" else f'with "type": "{shape}"'
    for key, owners in TOP_OWNERS.items():
        if shape in owners or not present(raw, key):
            continue
        owner_text = " / ".join(
            "the general form" if o == "general" else f'"type": "{o}"' for o in owners
        )
        hint = GENERAL_HINTS.get(key) if shape == "general" else None
        r.err(
            f"window.{key}",
            f"is not allowed {where}: it belongs to {owner_text}",
            hint or f"remove `window.{key}`, or write the window as {owner_text}",
        )


def _general(r: WindowReader, raw: dict[str, Any]) -> WindowSpec | None:
    """General form: exactly one family object (WIN-PAY-03)."""
    _forbid_foreign(r, raw, "general")
    fams = [f for f in FAMILIES if present(raw, f)]
    if not fams:
        r.err(
            "window",
            f"needs exactly one family ({_or(FAMILIES)}), or a sugar `type` "
            f"({alternatives(SUGARS)}); found none this engine knows",
            hint='e.g. {"frame": {"function": "sum", "preceding": "unbounded"}} or '
            '{"type": "pop", "offset": "1 month"}',
        )
    elif len(fams) > 1:
        r.err(
            "window",
            f"sets {len(fams)} families ({', '.join(fams)}); the general form takes exactly "
            f"one of {' / '.join(FAMILIES)}",
            hint="split the derivations into one metric per family",
        )
    for family in WINDOW_FAMILIES:  # a family's other top-level keys need its object
        for key in family.top_keys[1:]:
            if present(raw, key) and family.name not in fams:
                r.err(
                    f"window.{key}",
                    f"applies only to the {family.name} family",
                    hint=f"remove window.{key}, or use window.{family.name}",
                )
    specs = [FAMILY_BY_NAME[f].parse(r, raw) for f in fams]
    return specs[0] if len(specs) == 1 else None


def _or(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
