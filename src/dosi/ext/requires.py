"""`requires`: the keys an entry refuses to have dropped (datus-extensions §2 requires,
ENV-REQ-01/02): read as an array of key names, then each listed key this engine would drop
(unknown, not implemented, or not read on this carrier) is `datus_ext_key_required`.
"""

from __future__ import annotations

from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.key_warnings import CARRIER_NAMES, carriers_text
from dosi.ext.lod_metric import is_lod_derive
from dosi.ext.registry import DATUS_EXT_VERSION, ENVELOPE_KEYS, REGISTRY, Carrier

INVALID = "invalid_datus_extension"
KEY_REQUIRED = "datus_ext_key_required"


def read_requires(raw: Any, sink: DiagnosticSink, path: str) -> tuple[str, ...]:
    """`requires`: an array of key names (ENV-REQ-01). Malformed → invalid; strings still count."""
    if raw is None:
        return ()
    if isinstance(raw, list) and all(isinstance(k, str) for k in raw):
        return tuple(dict.fromkeys(raw))
    sink.error(
        INVALID,
        f"`requires` must be an array of key names (strings), got {_describe(raw)}",
        path=path,
        hint='e.g. "requires": ["measure"]',
    )
    if isinstance(raw, list):
        return tuple(dict.fromkeys(k for k in raw if isinstance(k, str)))
    return ()


def check_requires(
    carrier: Carrier,
    obj: dict[str, Any],
    requires: tuple[str, ...],
    sink: DiagnosticSink,
    path: str,
) -> None:
    """`datus_ext_key_required` for each listed key this engine would drop (ENV-REQ-02)."""
    for key in requires:
        if key in ENVELOPE_KEYS:
            continue
        info = REGISTRY.get(key)
        if info is None:
            message = (
                f'`requires` lists "{key}", a key this engine (DATUS {DATUS_EXT_VERSION}) does '
                "not know; it refuses to drop it"
            )
        elif not info.implemented and not (key == "derive" and is_lod_derive(obj.get(key))):
            message = (
                f'`requires` lists "{key}" ({info.extension}, DATUS {info.since}), which this '
                "engine registers but does not implement yet; it refuses to drop it"
            )
        elif carrier not in info.carriers and obj.get(key) is not None:
            message = (
                f'`requires` lists "{key}", which is not read on a {CARRIER_NAMES[carrier]} '
                f"(only on {carriers_text(info)}); it refuses to drop it"
            )
        else:
            continue
        sink.error(
            KEY_REQUIRED,
            message,
            path=path,
            hint=f"run an engine that implements {key}, or remove it from requires if ignoring "
            "it is safe",
            candidates=(key,),
        )


def _describe(value: Any) -> str:
    if isinstance(value, list):
        bad = [v for v in value if not isinstance(v, str)]
        return f"an array with non-string entries ({', '.join(repr(b) for b in bad[:3])})"
    return f"{type(value).__name__} {value!r}"
