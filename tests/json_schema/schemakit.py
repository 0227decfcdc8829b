"""Validating a model document against the shipped JSON Schema with the `jsonschema`
validator, DATUS payloads included (their `data` strings decoded and checked against the
carrier's `contentSchema`, which validators treat as an annotation)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from dosi.exporters.json_schema import build_schema, payload_schema

_DOC = jsonschema.Draft202012Validator(build_schema())
_PAYLOADS = {
    c: jsonschema.Draft202012Validator(payload_schema(c))
    for c in ("semantic_model", "dataset", "field", "relationship", "metric")
}


def _carriers(doc: Any) -> Iterator[tuple[str, str, Any]]:
    for model in doc.get("semantic_model") or [] if isinstance(doc, dict) else []:
        if not isinstance(model, dict):
            continue
        yield "semantic_model", "semantic_model", model
        for ds in model.get("datasets") or []:
            yield "dataset", f"datasets[{ds.get('name')}]", ds
            for f in ds.get("fields") or []:
                yield "field", f"datasets[{ds.get('name')}].fields[{f.get('name')}]", f
        for r in model.get("relationships") or []:
            yield "relationship", f"relationships[{r.get('name')}]", r
        for m in model.get("metrics") or []:
            yield "metric", f"metrics[{m.get('name')}]", m


def schema_errors(doc: Any) -> list[str]:
    """Every way `doc` breaks the schema (empty: it validates), payloads included."""
    out = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _DOC.iter_errors(doc)]
    if out:
        return out
    for carrier, path, obj in _carriers(doc):
        for ext in obj.get("custom_extensions") or []:
            if str(ext.get("vendor_name", "")).upper() != "DATUS":
                continue
            try:
                payload = json.loads(ext["data"])
            except ValueError as exc:
                out.append(f"{path}: data is not JSON ({exc})")
                continue
            out += [f"{path}: {e.message}" for e in _PAYLOADS[carrier].iter_errors(payload)]
    return out
