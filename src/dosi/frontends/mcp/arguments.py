"""MCP tool arguments: checked here rather than by the SDK, so a bad one gets the error contract;
a query given as separate tool arguments is built in the query's key order (`QUERY_KEYS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dosi.frontends.contract import OsiErrorBody, error_body
from dosi.query.spec import QUERY_KEYS


def required(value: Any, name: str, kind: type | None = None) -> Any:
    """Arguments are checked here, not by the SDK, so a bad one gets the error contract."""
    if value is None:
        raise OsiErrorBody(
            400, error_body("invalid_arguments", f"the tool needs the argument `{name}`")
        )
    if kind is not None and not isinstance(value, kind):
        raise OsiErrorBody(
            400,
            error_body("invalid_arguments", f"`{name}` must be a {kind.__name__}"),
        )
    return value


def optional_string(value: Any, name: str) -> Any:
    if value is not None and not isinstance(value, str):
        raise OsiErrorBody(400, error_body("invalid_arguments", f"`{name}` must be a string"))
    return value


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def query_argument(args: Mapping[str, Any]) -> Any:
    """The query object (`args["query"]`), or one built from the query's keys given as tool
    arguments, read by name: a tool passes its `locals()`, so a new query key is one more
    parameter on the tools and nothing here."""
    given = {k: args.get(k) for k in QUERY_KEYS}
    if args.get("query") is not None or all(v is None for v in given.values()):
        return args.get("query")
    # no `metrics` with a group_by: a dimension-only query (distinct values)
    return drop_none({**given, "metrics": given["metrics"] or []})


def param_schema(metric: dict[str, Any]) -> dict[str, Any]:
    """PARAM-CAT-02: the JSON Schema of the metric's `params` map (empty: no params yet)."""
    props: dict[str, Any] = {}
    for p in metric.get("params") or []:
        schema: dict[str, Any] = {}
        if p.get("allowed") is not None:
            schema["enum"] = p["allowed"]
        if p.get("min") is not None:
            schema["minimum"] = p["min"]
        if p.get("max") is not None:
            schema["maximum"] = p["max"]
        props[p["name"]] = schema
    return {"type": "object", "properties": props, "additionalProperties": False}
