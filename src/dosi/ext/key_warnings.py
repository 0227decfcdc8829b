"""Warnings about registered keys that this engine does not read where they stand
(datus-extensions §2.1 impacts, §5): a key on the wrong carrier, a key not implemented yet, and
a silent-impact key missing from `requires` (ENV-REQ-03). Each names what applies instead.
"""

from __future__ import annotations

from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.registry import Carrier, KeyInfo

REQUIRES_MISSING = "datus_ext_requires_missing"
KEY_NOT_IMPLEMENTED = "datus_ext_key_not_implemented"
KEY_MISPLACED = "datus_ext_key_misplaced"

CARRIER_NAMES: dict[str, str] = {
    "semantic_model": "semantic model",
    "dataset": "dataset",
    "field": "field",
    "relationship": "relationship",
    "metric": "metric",
}


def warn_misplaced(info: KeyInfo, carrier: Carrier, sink: DiagnosticSink, path: str) -> None:
    sink.warn(
        KEY_MISPLACED,
        f"`{info.key}` ({info.extension}) is not read on a {CARRIER_NAMES[carrier]}: it belongs "
        f"on a {carriers_text(info)}; ignored here",
        path=path,
        hint=f"move it into the DATUS entry of the {carriers_text(info)} it describes",
    )


def warn_not_implemented(info: KeyInfo, sink: DiagnosticSink, path: str) -> None:
    if info.requires_needed:
        hint = (
            "its impact is silent: numbers may be wrong with no other signal. Run an engine that "
            f"implements {info.extension}, and list {info.key} in requires"
        )
    else:
        hint = f"list {info.key} in requires to make this engine refuse the model instead"
    sink.warn(
        KEY_NOT_IMPLEMENTED,
        f"`{info.key}` ({info.extension}, DATUS {info.since}) is not implemented in this engine "
        f"and is ignored (ignore impact: {info.impact}); what applies instead: {info.fallback}",
        path=path,
        hint=hint,
    )


def warn_requires_missing(info: KeyInfo, sink: DiagnosticSink, path: str) -> None:
    sink.warn(
        REQUIRES_MISSING,
        f"`{info.key}` ({info.extension}) has silent ignore impact but is not listed in "
        "`requires`: an engine that lacks it would return different numbers with no signal",
        path=path,
        hint=f'add it to the entry: "requires": ["{info.key}"]',
    )


def non_empty(value: Any) -> bool:
    if value is None:
        return False
    return not (isinstance(value, str | list | dict) and len(value) == 0)


def carriers_text(info: KeyInfo) -> str:
    return " or ".join(CARRIER_NAMES[c] for c in info.carriers)
