"""D-PARAM: typed query-time parameters of a metric (datus-extensions §3 "D-PARAM").

A metric declares `params` (name, type, default, a domain); a window slot holds `{"param": n}`
instead of an integer, a filter `where` holds `:n`. The compiled model is instantiated at the
defaults (PARAM-INST-01): this module swaps every slot for its param's default before the
window payload is validated, and records which slot each param fills, so the query side
(`dosi.query.params`) can instantiate the metric again at a bound value.

Parameters fill typed holes only, never SQL text (PARAM-DEC-09): a slot takes an integer, a
filter literal a typed literal, so one validation here covers every legal binding.
"""

from __future__ import annotations

from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.params_decl import (
    DECL_KEYS,
    PARAM_NAME,
    PARAM_TYPES,
    MetricParams,
    ParamDecl,
    ParamSlot,
    ParamType,
    Scalar,
    read_decls,
    show,
    typed_value,
)
from dosi.ext.params_slots import (
    BIND_MARKER,
    FILTER_SLOT,
    WINDOW_SLOT_MIN,
    bind_markers,
    fill_window_slots,
)

INVALID = "invalid_datus_extension"
UNBOUNDED = "datus_param_unbounded"
UNUSED = "datus_param_unused"

__all__ = [
    "BIND_MARKER",
    "DECL_KEYS",
    "FILTER_SLOT",
    "PARAM_NAME",
    "PARAM_TYPES",
    "WINDOW_SLOT_MIN",
    "MetricParams",
    "ParamDecl",
    "ParamSlot",
    "ParamType",
    "Scalar",
    "bind_markers",
    "fill_window_slots",
    "read_params",
    "show",
    "typed_value",
]


def read_params(
    obj: dict[str, Any], path: str | None, sink: DiagnosticSink
) -> tuple[dict[str, Any], MetricParams | None]:
    """Read a metric payload's `params` and fill the window slots with the defaults.

    Returns the payload to validate (the window holes replaced) and the params, or None when
    the declarations are invalid (their errors are in `sink`; the holes then stay and the
    window validator rejects them too)."""
    decls = read_decls(obj["params"], path, sink)
    if decls is None:
        return obj, None
    out = dict(obj)
    slots: tuple[ParamSlot, ...] = ()
    if "window" in obj:
        out["window"], slots = fill_window_slots(obj["window"], decls, path, sink)
    derive = obj.get("derive")
    if isinstance(derive, dict) and isinstance(derive.get("where"), str):
        for name in dict.fromkeys(bind_markers(derive["where"])):
            if any(d.name == name for d in decls):
                slots = (*slots, ParamSlot(FILTER_SLOT, name))
            else:
                sink.error(
                    INVALID,
                    f'derive.where references undeclared param ":{name}"',
                    path=path,
                    candidates=tuple(d.name for d in decls),
                    hint="declare it in `params`",
                )
    used = {s.param for s in slots}
    for d in decls:
        if not d.bounded:
            sink.warn(
                UNBOUNDED,
                f'parameter "{d.name}" ({d.type}) declares no domain: any value binds',
                path=path,
                hint='declare "allowed" or "min"/"max": the domain is the governance boundary',
            )
        if d.name not in used:
            sink.warn(
                UNUSED,
                f'parameter "{d.name}" is declared but fills no slot',
                path=path,
                hint="reference it from a slot, or remove it",
            )
    return out, MetricParams(decls, slots)
