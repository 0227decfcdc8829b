"""JSON Schemas of the REST request bodies, for the OpenAPI document (`/v1/openapi.json`).

Documentation only: the engine checks every body itself and answers its structured errors."""

from __future__ import annotations

from typing import Any

QUERY_SCHEMA = {
    "type": "object",
    "description": "A metric query, the same JSON as Engine.execute",
    "properties": {
        "metrics": {"type": "array", "items": {"type": "string"}},
        "group_by": {"type": "array", "items": {}},
        "where_sql": {"type": "string"},
        "context_filter": {"type": "string"},
        "densify": {
            "description": "fill empty time buckets: time, all, windows, covered, or false",
            "enum": ["time", "all", "windows", "covered", "none", True, False],
        },
        "week_start": {
            "description": "the first day of a week bucket (over the model's calendar)",
            "enum": ["monday", "sunday", "saturday"],
        },
        "time_range": {
            "type": "object",
            "properties": {
                "start": {"type": "string"},
                "end": {"type": "string"},
                "dimension": {"type": "string"},
            },
        },
        "order_by": {"type": "array", "items": {}},
        "limit": {"type": "integer", "minimum": 0},
        "cache": {
            "type": "boolean",
            "description": "false: read the warehouse, bypassing the result cache",
        },
    },
    "required": ["metrics"],
}
SQL_SCHEMA = {
    "type": "object",
    "properties": {"sql": {"type": "string"}, "params": {"type": "array", "items": {}}},
    "required": ["sql"],
}
SELECT_SCHEMA = {
    "type": "object",
    "properties": {
        "from": {"type": "string"},
        "fields": {"type": "array", "items": {"type": "string"}},
        "where_sql": {"type": "string"},
        "time_range": {"type": "object"},
        "order_by": {"type": "array", "items": {}},
        "limit": {"type": "integer", "minimum": 0},
        "distinct": {"type": "boolean"},
    },
    "required": ["from", "fields"],
}
WINDOW_SCHEMA = {
    "type": "object",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
ATTRIBUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "metric": {"type": "string"},
        "current": WINDOW_SCHEMA,
        "baseline": WINDOW_SCHEMA,
        "dimensions": {"type": "array", "items": {"type": "string"}},
        "where_sql": {"type": "string"},
        "top_n": {"type": "integer", "minimum": 1},
    },
    "required": ["metric", "current", "baseline", "dimensions"],
}
VALIDATE_SCHEMA = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "mode": {"enum": ["datus", "basic"]},
        "sources": {"type": "boolean", "default": False},
    },
    "required": ["model"],
}


def body_doc(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema}},
        }
    }
