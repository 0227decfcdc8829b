"""The JSON Schema of a dosi model: Ossie 0.2.0.dev0 plus every DATUS payload.

Editors (the YAML language server) complete and check a model with it; `dosi schema` prints
it, and `dosi/model/model.schema.json` ships it. The core follows the Ossie schema
(`dosi.model.schema` mirrors the same rules in pydantic). A DATUS entry's `data` is a JSON
*string*, so its payload is described the JSON Schema way, as `contentMediaType:
application/json` with a `contentSchema` per carrier (`DatasetPayload`, `FieldPayload`,
`RelationshipPayload`, `MetricPayload`, `ModelPayload`): validators that decode content (or
`dosi validate`) check it, and the payload schemas are reusable on their own. Every enum is
read from the engine's own tables (`dosi.ext`), so the schema cannot drift from what the
engine accepts; a test checks the shipped file equals `build_schema()`.

Run `python -m dosi.model.json_schema > src/dosi/model/model.schema.json` after changing it.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from importlib import resources
from typing import Any

from dosi.ext.conform import CARDINALITIES
from dosi.ext.derive_lod import KEYWORDS, OUTER_AGGS
from dosi.ext.params import DECL_KEYS, PARAM_TYPES
from dosi.ext.payloads import JOIN_TYPES
from dosi.ext.registry import DATUS_EXT_VERSION, REGISTRY
from dosi.ext.time_format import NATIVE_FORMATS, STORAGES, TIME_KEYS
from dosi.ext.window import (
    CALCULATIONS,
    DIRECTIONS,
    FRAME_FUNCTIONS,
    FRAME_W1,
    FRAME_W2,
    GRAINS,
    NULLS,
    OFFSET_KEYS,
    ORDER_BY,
    ORDER_DIRECTIONS,
    PARTITION_MODES,
    RANK_FUNCTIONS,
    RESET_GRAINS,
    UNITS,
    VALUE_FUNCTIONS,
)
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

_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
_QUALIFIED = "^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$"
_DATUS_VENDOR = "^[Dd][Aa][Tt][Uu][Ss]$"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _enum(values: Any, description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """A payload key's value, or null (null reads as absent, datus-extensions §2)."""
    return {
        "anyOf": [schema, {"type": "null"}],
        **({"description": schema["description"]} if "description" in schema else {}),
    }


def _key_doc(key: str) -> str:
    info = REGISTRY[key]
    return (
        f"{info.extension} (DATUS {info.since}; ignore impact {info.impact}"
        f"{', list it in requires' if info.requires_needed else ''}). Without it: {info.fallback}."
    )


def _slot(minimum: int, description: str) -> dict[str, Any]:
    """An integer slot a D-PARAM parameter may fill (`{"param": name}`)."""
    return {
        "description": description,
        "oneOf": [{"type": "integer", "minimum": minimum}, _ref("ParamRef")],
    }


def _core_defs() -> dict[str, Any]:
    dialects = list(OsiDialect.__args__)  # type: ignore[attr-defined]
    datatypes = list(DataType.__args__)  # type: ignore[attr-defined]

    def ext_list(carrier: str) -> dict[str, Any]:
        return {
            "type": "array",
            "description": "Vendor extensions; a DATUS entry's data is described by "
            f"{CARRIER_DEFS[carrier]}.",
            "items": _ref(f"{CARRIER_DEFS[carrier][: -len('Payload')]}Extension"),
        }

    defs: dict[str, Any] = {
        "Dialect": _enum(dialects, "The language an expression is written in."),
        "DataType": _enum(datatypes, "Logical type of a field or metric (omit when unknown)."),
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
                "dialect": _ref("Dialect"),
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
                "dialects": {"type": "array", "items": _ref("DialectExpression"), "minItems": 1}
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
                "expression": _ref("Expression"),
                "dimension": _ref("Dimension"),
                "label": {"type": "string"},
                "description": {"type": "string"},
                "datatype": _ref("DataType"),
                "ai_context": _ref("AIContext"),
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
                "ai_context": _ref("AIContext"),
                "fields": {"type": "array", "items": _ref("Field")},
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
                "ai_context": _ref("AIContext"),
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
                "expression": _ref("Expression"),
                "description": {"type": "string"},
                "datatype": _ref("DataType"),
                "ai_context": _ref("AIContext"),
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
                "ai_context": _ref("AIContext"),
                "datasets": {"type": "array", "items": _ref("Dataset"), "minItems": 1},
                "relationships": {"type": "array", "items": _ref("Relationship")},
                "metrics": {"type": "array", "items": _ref("Metric")},
                "custom_extensions": ext_list("semantic_model"),
            },
            "required": ["name", "datasets"],
            "additionalProperties": False,
        },
    }
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
                    "data": {"contentMediaType": "application/json", "contentSchema": _ref(payload)}
                }
            },
        }
    return defs


def _window_defs() -> dict[str, Any]:
    order = {
        "type": "object",
        "properties": {
            "by": _enum(ORDER_BY, "Order rows by the time axis or by the metric value."),
            "direction": _enum(ORDER_DIRECTIONS, "asc by time, desc by value by default."),
            "nulls": _enum(NULLS, "Where NULL values sort (1.9)."),
        },
        "additionalProperties": False,
    }
    partition = {
        "type": "object",
        "properties": {
            "mode": _enum(PARTITION_MODES, "What the window restarts over."),
            "exclude": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "pattern": _QUALIFIED},
                "description": "dataset.field dimensions left out (query_dimensions_except).",
            },
        },
        "required": ["mode"],
        "additionalProperties": False,
        "if": {"properties": {"mode": {"const": "query_dimensions_except"}}},
        "then": {"required": ["exclude"]},
        "else": {"properties": {"exclude": False}},
    }
    offset = {
        "description": '"<count> <granularity>" (e.g. "1 month") or {count, granularity, '
        "direction}.",
        "oneOf": [
            {"type": "string", "pattern": f"^[0-9]+ ({'|'.join(GRAINS)})s?$"},
            {
                "type": "object",
                "properties": {
                    "count": _slot(1, "Buckets to shift by."),
                    "granularity": _enum(GRAINS, "The calendar unit."),
                    "direction": _enum(DIRECTIONS, "back (default) or forward."),
                },
                "required": [k for k in OFFSET_KEYS if k != "direction"],
                "additionalProperties": False,
            },
        ],
    }
    frame = {
        "type": "object",
        "description": "An ordered re-aggregation of the metric's buckets.",
        "properties": {
            "function": _enum(FRAME_FUNCTIONS, "How the frame's values combine."),
            "preceding": {
                "description": 'Buckets before the current one, or "unbounded".',
                "oneOf": [
                    {"type": "integer", "minimum": 0},
                    {"const": "unbounded"},
                    _ref("ParamRef"),
                ],
            },
            "reset": _enum(RESET_GRAINS, "Restart the frame each period."),
            "require_full_window": {"type": "boolean"},
            "order": _ref("WindowOrder"),
            "partition": _ref("WindowPartition"),
            "units": _enum(UNITS, "rows, or range (value-ordered cumulative frames)."),
            "second": {"type": "string", "description": "The second series of covar / corr."},
            "scope": {"const": "partition", "description": "The whole partition (1.9)."},
        },
        "required": ["function"],
        "anyOf": [{"required": ["preceding"]}, {"required": ["scope"]}],
        "additionalProperties": False,
    }

    def ordered(functions: Any, arg: str, arg_fn: str, description: str) -> dict[str, Any]:
        return {
            "type": "object",
            "description": description,
            "properties": {
                "function": _enum(functions, "The window function."),
                arg: _slot(1, f"The argument of {arg_fn}."),
                "order": _ref("WindowOrder"),
                "partition": _ref("WindowPartition"),
            },
            "required": ["function"],
            "additionalProperties": False,
            "if": {"properties": {"function": {"const": arg_fn}}},
            "then": {"required": [arg]},
            "else": {"properties": {arg: False}},
        }

    sugar_fns = [*FRAME_W1, *FRAME_W2]
    common = {"base": {"type": "string", "description": "Window another metric (D-DERIVE)."}}
    forbid = dict.fromkeys(
        ("offset", "calculation", "frame", "rank", "value", "function", "periods", "reset",
         "require_full_window"),
        False,
    )  # fmt: skip

    def shape(kind: str | None, allowed: dict[str, Any], required: list[str]) -> dict[str, Any]:
        props = {**forbid, **common, **allowed}
        if kind is not None:
            props["type"] = {"const": kind}
        out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if kind is None:
            out["not"] = {"required": ["type"]}
        return out

    general = shape(
        None,
        {
            "offset": _ref("WindowOffset"),
            "calculation": _enum(CALCULATIONS, "Compare with the shifted bucket."),
            "frame": _ref("WindowFrame"),
            "rank": _ref("WindowRank"),
            "value": _ref("WindowValue"),
        },
        [],
    )
    general["oneOf"] = [
        {"required": ["offset", "calculation"]},
        {"required": ["frame"], "properties": {"calculation": False}},
        {"required": ["rank"], "properties": {"calculation": False}},
        {"required": ["value"], "properties": {"calculation": False}},
    ]
    window = {
        "description": _key_doc("window"),
        "oneOf": [
            shape(
                "pop",
                {"offset": _ref("WindowOffset"), "calculation": _enum(CALCULATIONS, "")},
                ["type", "offset"],
            ),
            shape(
                "rolling",
                {
                    "function": _enum(sugar_fns, "How the buckets combine."),
                    "periods": _slot(1, "Buckets in the window, the current one included."),
                    "require_full_window": {"type": "boolean"},
                },
                ["type", "function", "periods"],
            ),
            shape(
                "cumulative",
                {
                    "function": _enum(sugar_fns, "How the buckets combine."),
                    "reset": _enum(RESET_GRAINS, "Restart each period."),
                },
                ["type", "function"],
            ),
            general,
        ],
    }
    return {
        "Window": window,
        "WindowOffset": offset,
        "WindowFrame": frame,
        "WindowRank": ordered(RANK_FUNCTIONS, "buckets", "ntile", "Rank the metric's rows."),
        "WindowValue": ordered(VALUE_FUNCTIONS, "n", "nth_value", "A value of another row."),
        "WindowOrder": order,
        "WindowPartition": partition,
        "ParamRef": {
            "type": "object",
            "description": "A slot filled by the metric's parameter of this name (D-PARAM).",
            "properties": {"param": {"type": "string"}},
            "required": ["param"],
            "additionalProperties": False,
        },
    }


def _payload_defs() -> dict[str, Any]:
    envelope = {
        "v": {
            "description": "The DATUS version this entry is written for (MAJOR.MINOR; the "
            f"engine implements {DATUS_EXT_VERSION}).",
            "oneOf": [
                {"type": "string", "pattern": "^(0|[1-9][0-9]*)(\\.(0|[1-9][0-9]*))?$"},
                {"type": "number"},
                {"type": "null"},
            ],
        },
        "requires": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Keys a consumer must not ignore (list every silent-impact key).",
        },
    }
    lod_metric = (
        f"^\\s*(({'|'.join(OUTER_AGGS)})\\s*\\(\\s*)?({'|'.join(KEYWORDS)})\\s*\\(.*\\)\\s*$"
    )
    param = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
            "type": _enum(PARAM_TYPES, "int for window slots."),
            "default": {"type": ["integer", "number", "string"]},
            "allowed": {
                "type": "array",
                "minItems": 1,
                "items": {"type": ["integer", "number", "string"]},
            },
            "min": {"type": "number"},
            "max": {"type": "number"},
            "description": {"type": "string"},
        },
        "required": ["name", "type", "default"],
        "additionalProperties": False,
    }
    assert set(param["properties"]) == set(DECL_KEYS)
    derive = {
        "description": _key_doc("derive"),
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "type": {"const": "filter"},
                    "base": {"type": "string", "minLength": 1},
                    "where": {"type": "string", "minLength": 1},
                },
                "required": ["type", "base", "where"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "type": {"const": "compose"},
                    "expr": {"type": "string", "minLength": 1},
                    "fill": {"type": "number"},
                },
                "required": ["type", "expr"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "description": "D-LOD on a metric: agg(include(...)), exclude(...), fixed(...).",
                "properties": {
                    "type": {"const": "lod"},
                    "expr": {"type": "string", "pattern": lod_metric},
                },
                "required": ["type", "expr"],
                "additionalProperties": False,
            },
        ],
    }
    time = {
        "type": "object",
        "description": _key_doc("time"),
        "properties": {
            "format": {
                "type": "string",
                "description": f"A native type ({', '.join(NATIVE_FORMATS)}) or a layout such "
                "as %Y%m%d.",
                "anyOf": [{"enum": list(NATIVE_FORMATS)}, {"pattern": "%[YmdHMS]"}],
            },
            "storage": _enum(STORAGES, "How a layout is stored."),
            "granularity": _enum(GRAINS, "The stored grain."),
        },
        "additionalProperties": False,
    }
    assert set(time["properties"]) == set(TIME_KEYS)

    def payload(description: str, keys: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "description": description + " Unknown keys are allowed (newer DATUS versions).",
            "properties": {**envelope, **{k: _nullable(v) for k, v in keys.items()}},
            "additionalProperties": True,
        }

    defs = {
        "ModelPayload": payload("DATUS payload of a semantic model (no keys yet).", {}),
        "DatasetPayload": payload(
            "DATUS payload of a dataset.",
            {
                "time_dimension": {
                    "type": "string",
                    "pattern": _NAME,
                    "description": _key_doc("time_dimension"),
                }
            },
        ),
        "FieldPayload": payload(
            "DATUS payload of a field.",
            {
                "time_granularity": _enum(GRAINS, _key_doc("time_granularity")),
                "is_dimension": {"type": "boolean", "description": _key_doc("is_dimension")},
                "lod": {
                    "type": "object",
                    "description": _key_doc("lod"),
                    "properties": {
                        "expr": {
                            "type": "string",
                            "pattern": "^\\s*[Ff][Ii][Xx][Ee][Dd]\\s*\\(.*\\)\\s*$",
                        }
                    },
                    "required": ["expr"],
                    "additionalProperties": False,
                },
                "time": time,
            },
        ),
        "RelationshipPayload": payload(
            "DATUS payload of a relationship.",
            {
                "join_type": _enum(JOIN_TYPES, _key_doc("join_type")),
                "cardinality": _enum(CARDINALITIES, _key_doc("cardinality")),
            },
        ),
        "MetricPayload": payload(
            "DATUS payload of a metric.",
            {
                "fill_nulls_with": {"type": "number", "description": _key_doc("fill_nulls_with")},
                "time_dimension": {
                    "type": "string",
                    "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$",
                    "description": _key_doc("time_dimension"),
                },
                "dataset": {"type": "string", "minLength": 1, "description": _key_doc("dataset")},
                "measure": {
                    "type": "object",
                    "description": _key_doc("measure"),
                    "properties": {"name": {"type": "string", "pattern": _NAME}},
                    "required": ["name"],
                    "additionalProperties": False,
                },
                "window": _ref("Window"),
                "params": {
                    "type": "array",
                    "items": _ref("ParamDecl"),
                    "description": _key_doc("params"),
                },
                "derive": derive,
            },
        ),
        "ParamDecl": param,
    }
    listed = {k for d in defs.values() for k in d.get("properties", {})} - set(envelope)
    missing = set(REGISTRY) - listed
    assert not missing, f"JSON Schema lacks DATUS keys {sorted(missing)}"
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
            "semantic_model": {"type": "array", "items": _ref("SemanticModel")},
        },
        "required": ["version", "semantic_model"],
        "additionalProperties": False,
        "$defs": {**_core_defs(), **_window_defs(), **_payload_defs()},
    }


def schema_text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def shipped_text() -> str:
    """The schema file installed with the package."""
    return resources.files("dosi.model").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


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
