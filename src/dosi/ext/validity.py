"""D-VALIDITY `validity` (dosi 1.15, a dataset key the DATUS documents do not define): the
dataset is a slowly changing dimension, one row per version of its key, each version valid
from its `start` time (inclusive) until its `end` time (exclusive; NULL = still valid).

A join that lands on such a dataset matches, besides its key pairs, only the version valid at
the time of the fact row (dosi.sql.validity), so a fact row meets at most one version: the
join stays many-to-one. Payload: `{"start": "<field>", "end": "<field>"}`, both required (the
current version has a NULL `end`). The fields are checked against the dataset at compile time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

VALIDITY_KEYS = ("start", "end")
HINT = '"validity": {"start": "valid_from", "end": "valid_to"} (fields of this dataset)'


@dataclass(frozen=True)
class ValiditySpec:
    """The two time fields that bound each version (field names of the dataset)."""

    start: str
    end: str


def read_validity(value: Any, path: str | None, sink: DiagnosticSink) -> ValiditySpec | None:
    """The payload as written, or None after an `invalid_datus_extension` naming the flaw."""

    def bad(message: str) -> None:
        sink.error("invalid_datus_extension", f"`validity` {message}", path=path, hint=HINT)

    if not isinstance(value, dict):
        bad(f"must be an object (got {json_type(value)} {_show(value)})")
        return None
    unknown = sorted(set(value) - set(VALIDITY_KEYS))
    if unknown:
        bad(f"has unknown keys {unknown}; it takes `start` and `end`")
        return None
    start, end = value.get("start"), value.get("end")
    if not isinstance(start, str) or not start:
        bad(f"needs `start`, the field where a version begins (got {_show(start)})")
        return None
    if not isinstance(end, str) or not end:
        bad(f"needs `end`, the field where a version stops being valid (got {_show(end)})")
        return None
    if end == start:
        bad(f"`start` and `end` both name `{start}`")
        return None
    return ValiditySpec(start, end)
