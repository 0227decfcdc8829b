"""The JSON Schema of a dosi model: Ossie 0.2.0.dev0 plus every DATUS payload.

Editors (the YAML language server) complete and check a model with it; `dosi schema` prints
it, and `dosi/exporters/model.schema.json` ships it. The core follows the Ossie schema
(`dosi.model.schema` mirrors the same rules in pydantic). A DATUS entry's `data` is a JSON
*string*, so its payload is described the JSON Schema way, as `contentMediaType:
application/json` with a `contentSchema` per carrier (`DatasetPayload`, `FieldPayload`,
`RelationshipPayload`, `MetricPayload`, `ModelPayload`): validators that decode content (or
`dosi validate`) check it, and the payload schemas are reusable on their own. Every enum is
read from the engine's own tables (`dosi.ext`), so the schema cannot drift from what the
engine accepts; a test checks the shipped file equals `build_schema()`.

Run `python -m dosi.exporters.json_schema > src/dosi/exporters/model.schema.json` after changing it.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from importlib import resources
from typing import Any

from dosi.exporters.json_schema_datus import enum, payload_defs, ref, window_defs
from dosi.model.schema import DataType, OsiDialect
from dosi.model.versions import CURRENT

SCHEMA_FILE = "model.schema.json"
SCHEMA_ID = "urn:dosi:model.schema.json"
CARRIER_DEFS = {
    "semantic_model": "ModelPayload",
    "dataset": "DatasetPayload",
    "field": "FieldPayload",
    "relationship": "RelationshipPayload",
    "metric": "MetricPayload",
}

_DATUS_VENDOR = "^[Dd][Aa][Tt][Uu][Ss]$"


def _null_when_optional(obj: dict[str, Any]) -> None:
    """An optional key may also be null: the engine reads null as absent (its pydantic model
    declares every optional key `X | None`), so the schema accepts what the engine loads."""
    required = set(obj.get("required", ()))
    for key, prop in obj["properties"].items():
        if key in required:
            continue
        if isinstance(prop.get("type"), str):  # keeps errors inside lists precise
            prop["type"] = [prop["type"], "null"]
        else:
            described = {"description": prop["description"]} if "description" in prop else {}
            obj["properties"][key] = {**described, "anyOf": [prop, {"type": "null"}]}


def _core_defs() -> dict[str, Any]:
    dialects = list(OsiDialect.__args__)  # type: ignore[attr-defined]
    datatypes = list(DataType.__args__)  # type: ignore[attr-defined]

    def ext_list(carrier: str) -> dict[str, Any]:
        return {
            "type": "array",
            "description": "Vendor extensions; a DATUS entry's data is described by "
            f"{CARRIER_DEFS[carrier]}.",
            "items": ref(f"{CARRIER_DEFS[carrier][: -len('Payload')]}Extension"),
        }

    defs: dict[str, Any] = {
        "Dialect": {
            "description": "The language an expression is written in: an Ossie dialect, or an "
            "engine's name (loaded with an unknown_expression_dialect warning).",
            "anyOf": [{"enum": list(dialects)}, {"type": "string", "pattern": "^[A-Za-z_]+$"}],
        },
        "DataType": enum(datatypes, "Logical type of a field or metric (omit when unknown)."),
        "AIContext": {
            "description": "Hints for AI tools: a string, or instructions / synonyms / examples.",
            "oneOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "properties": {
                        "instructions": {"type": "string"},
                        "synonyms": {"type": "array", "items": {"type": "string"}},
                        "examples": {"type": "array", "items": {"type": "string"}},
                    },
                    "additionalProperties": True,
                },
            ],
        },
        "DialectExpression": {
            "type": "object",
            "properties": {
                "dialect": ref("Dialect"),
                "expression": {"type": "string", "description": "The SQL text."},
            },
            "required": ["dialect", "expression"],
            "additionalProperties": False,
        },
        "Expression": {
            "type": "object",
            "description": "An expression per dialect, e.g. {dialects: [{dialect: ANSI_SQL, "
            "expression: SUM(orders.amount)}]} (never a plain string).",
            "properties": {
                "dialects": {"type": "array", "items": ref("DialectExpression"), "minItems": 1}
            },
            "required": ["dialects"],
            "additionalProperties": False,
        },
        "Dimension": {
            "type": "object",
            "properties": {
                "is_time": {
                    "type": "boolean",
                    "description": "A time dimension; defaults to true for Date, Time, DateTime "
                    "and DateTimeTz fields.",
                }
            },
            "additionalProperties": False,
        },
        "Field": {
            "type": "object",
            "description": "A row-level attribute of a dataset.",
            "properties": {
                "name": {"type": "string"},
                "expression": ref("Expression"),
                "dimension": ref("Dimension"),
                "label": {"type": "string"},
                "description": {"type": "string"},
                "datatype": ref("DataType"),
                "ai_context": ref("AIContext"),
                "custom_extensions": ext_list("field"),
            },
            "required": ["name", "expression"],
            "additionalProperties": False,
        },
        "Dataset": {
            "type": "object",
            "description": "A table, view or query, and its fields.",
            "properties": {
                "name": {"type": "string"},
                "source": {
                    "type": "string",
                    "description": "A table (schema.table) or a SELECT query.",
                },
                "primary_key": {"type": "array", "items": {"type": "string"}},
                "unique_keys": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "string"}},
                },
                "description": {"type": "string"},
                "ai_context": ref("AIContext"),
                "fields": {"type": "array", "items": ref("Field")},
                "custom_extensions": ext_list("dataset"),
            },
            "required": ["name", "source"],
            "additionalProperties": False,
        },
        "Relationship": {
            "type": "object",
            "description": "A many-to-one join from `from` (many side) to `to` (one side).",
            "properties": {
                "name": {"type": "string"},
                "from": {"type": "string"},
                "to": {"type": "string"},
                "from_columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "to_columns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "ai_context": ref("AIContext"),
                "custom_extensions": ext_list("relationship"),
            },
            "required": ["name", "from", "to", "from_columns", "to_columns"],
            "additionalProperties": False,
        },
        "Metric": {
            "type": "object",
            "description": "An aggregate over fields, e.g. SUM(orders.amount).",
            "properties": {
                "name": {"type": "string"},
                "expression": ref("Expression"),
                "description": {"type": "string"},
                "datatype": ref("DataType"),
                "ai_context": ref("AIContext"),
                "custom_extensions": ext_list("metric"),
            },
            "required": ["name", "expression"],
            "additionalProperties": False,
        },
        "SemanticModel": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "ai_context": ref("AIContext"),
                "datasets": {"type": "array", "items": ref("Dataset"), "minItems": 1},
                "relationships": {"type": "array", "items": ref("Relationship")},
                "metrics": {"type": "array", "items": ref("Metric")},
                "custom_extensions": ext_list("semantic_model"),
            },
            "required": ["name", "datasets"],
            "additionalProperties": False,
        },
    }
    for name in ("Dimension", "Field", "Dataset", "Relationship", "Metric", "SemanticModel"):
        _null_when_optional(defs[name])
    for carrier, payload in CARRIER_DEFS.items():
        defs[f"{payload[: -len('Payload')]}Extension"] = {
            "type": "object",
            "description": f"A vendor extension on a {carrier.replace('_', ' ')}.",
            "properties": {
                "vendor_name": {"type": "string", "examples": ["DATUS"]},
                "data": {"type": "string", "description": "A JSON string (the payload)."},
            },
            "required": ["vendor_name", "data"],
            "additionalProperties": False,
            "if": {"properties": {"vendor_name": {"pattern": _DATUS_VENDOR}}},
            "then": {
                "properties": {
                    "data": {"contentMediaType": "application/json", "contentSchema": ref(payload)}
                }
            },
        }
    return defs


@cache
def build_schema() -> dict[str, Any]:
    """The schema (built once from the engine's tables)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "dosi semantic model (Ossie 0.2.0.dev0 with the DATUS extensions)",
        "description": "An Ossie document; DATUS payloads are described per carrier in "
        "$defs/*Payload (the data strings' contentSchema).",
        "type": "object",
        "properties": {
            "version": {"type": "string", "const": CURRENT},
            "semantic_model": {"type": "array", "items": ref("SemanticModel")},
        },
        "required": ["version", "semantic_model"],
        "additionalProperties": False,
        "$defs": {**_core_defs(), **window_defs(), **payload_defs()},
    }


def schema_text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def shipped_text() -> str:
    """The schema file installed with the package."""
    return resources.files("dosi.exporters").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def payload_schema(carrier: str) -> dict[str, Any]:
    """A carrier's payload schema on its own (resolvable: it carries the $defs)."""
    full = build_schema()
    return {
        "$schema": full["$schema"],
        "$ref": f"#/$defs/{CARRIER_DEFS[carrier]}",
        "$defs": full["$defs"],
    }


if __name__ == "__main__":
    sys.stdout.write(schema_text())
