"""The DATUS envelope: locating entries in `custom_extensions` and decoding `data`.

datus-extensions §2: a Datus extension is one `custom_extensions` entry whose `vendor_name` is
`DATUS` (case-insensitive, so the historical `datus` still works; ENV-CAR-01); other vendors are
ignored (ENV-CAR-07); `data` is a JSON *string* decoding to a single object (ENV-CAR-02); at
most one DATUS entry per object (ENV-CAR-03).

Decoding is strict JSON: `NaN` / `Infinity` are rejected (not JSON), duplicate object keys are
rejected (ambiguous), and every JSON number with a fraction or exponent keeps its source text
(`JsonFloat.text`) so the version gate can tell `1.10` from `1.1` (ENV-V-03).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DATUS_VENDOR = "DATUS"


class JsonFloat(float):
    """A JSON number with a fraction or exponent, remembering its source text."""

    text: str

    def __new__(cls, text: str) -> JsonFloat:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


class PayloadDecodeError(ValueError):
    """`data` is not strict JSON."""


def _reject_constant(name: str) -> Any:
    raise PayloadDecodeError(f"{name} is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise PayloadDecodeError(f'duplicate key "{key}"')
        out[key] = value
    return out


def decode_json(text: str) -> Any:
    """Strict JSON decode; raises `PayloadDecodeError` with a short reason."""
    try:
        return json.loads(
            text,
            parse_float=JsonFloat,
            parse_constant=_reject_constant,
            object_pairs_hook=_unique_pairs,
        )
    except PayloadDecodeError:
        raise
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
        raise PayloadDecodeError(str(exc)) from exc


@dataclass(frozen=True)
class Entry:
    """One DATUS `custom_extensions` entry: its index in the list and its raw `data`."""

    index: int
    vendor_name: str
    data: Any


def _get(item: Any, name: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def is_datus_vendor(vendor_name: Any) -> bool:
    """`vendor_name` matches DATUS case-insensitively (ENV-CAR-01, ENV-CAR-07)."""
    return isinstance(vendor_name, str) and vendor_name.upper() == DATUS_VENDOR


def datus_entries(custom_extensions: Sequence[Any] | None) -> list[Entry]:
    """Every DATUS entry, in order. Accepts raw dicts or objects with `vendor_name` / `data`."""
    if not custom_extensions:
        return []
    out: list[Entry] = []
    for i, item in enumerate(custom_extensions):
        vendor = _get(item, "vendor_name")
        if is_datus_vendor(vendor):
            out.append(Entry(i, vendor, _get(item, "data")))
    return out


def decode_entry(entry: Entry) -> dict[str, Any]:
    """Decode one entry's `data` to its payload object; raises `PayloadDecodeError`."""
    if not isinstance(entry.data, str):
        kind = type(entry.data).__name__ if entry.data is not None else "missing"
        raise PayloadDecodeError(
            f"`data` must be a JSON string (Ossie: data is a string), got {kind}"
        )
    obj = decode_json(entry.data)
    if not isinstance(obj, dict):
        raise PayloadDecodeError(f"`data` must decode to one JSON object, got {json_type(obj)}")
    return obj


def show_json(value: Any) -> str:
    """A decoded value as it was written in JSON (numbers keep their source text)."""
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
