"""The one error and result contract every frontend speaks (REST, MCP, CLI --format json).

An error body is `{"code", "message", "candidates", "hint", "suggested_retry", ...}` with
`null` where a key has nothing to say; caller mistakes map to 4xx statuses.
"""

from __future__ import annotations

import json
import math
from typing import Any

from dosi import DATUS_EXT_VERSION, SPEC_VERSION, __version__
from dosi.engine import validate
from dosi.errors import AccessError, ExecuteError, ModelError, OsiError, QueryError
from dosi.execute.values import json_ready, text_value
from dosi.ext import IMPACTS, capabilities

# the served model's pool lives in dosi.frontends.holder; importable from here as before
from dosi.frontends.holder import EngineHolder as EngineHolder
from dosi.frontends.holder import EnginePool as EnginePool
from dosi.query.features import query_features

ENDPOINTS = (
    "GET /v1/capabilities",
    "GET /v1/metrics",
    "GET /v1/metrics/{name}",
    "GET /v1/dimensions",
    "GET /v1/datasets",
    "GET /v1/datasets/{name}",
    "GET /v1/lineage",
    "POST /v1/compile",
    "POST /v1/query",
    "POST /v1/chart",
    "POST /v1/explain",
    "POST /v1/select",
    "POST /v1/attribute",
    "POST /v1/validate",
    "POST /v1/sql",
)
RESULT_FORMATS = (
    "application/json",
    "text/csv",
    "application/vnd.apache.parquet",
    "application/vnd.apache.arrow.stream",
)


def error_body(
    code: str,
    message: str,
    *,
    candidates: list[str] | None = None,
    hint: str | None = None,
    suggested_retry: Any = None,
    kind: str = "error",
) -> dict[str, Any]:
    return {
        "error": kind,
        "code": code,
        "message": message,
        "candidates": candidates or [],
        "hint": hint,
        "suggested_retry": suggested_retry,
    }


def osi_error_body(err: OsiError) -> dict[str, Any]:
    out = err.to_dict()
    for key in ("candidates", "hint", "suggested_retry"):
        out.setdefault(key, None)
    if out["candidates"] is None:
        out["candidates"] = []
    return json_safe(out)


_NOT_FOUND = {"unknown_metric", "unknown_dataset"}


def http_status(err: OsiError, *, lookup: bool = False) -> int:
    """Caller mistakes are 4xx; a lookup of a missing name is 404; a value the database refused
    and an answer over the server's limits are 422; execution problems on the server side are
    5xx (504 on a timeout, 503 when the warehouse connection broke or does not answer)."""
    if isinstance(err, AccessError):  # a hidden member, a policy that fails for this user
        return 401 if err.code == "unauthorized" else 403
    if isinstance(err, QueryError):
        if lookup and err.code in _NOT_FOUND:
            return 404
        return 400
    if isinstance(err, ModelError):
        return 422
    if isinstance(err, ExecuteError):
        if err.code == "timeout":
            return 504
        if err.code == "cancelled":
            return 499
        if err.code == "value_rejected":  # the database refused one of the query's values
            return 422
        if err.code == "result_too_large":  # a valid query whose answer is over the limits
            return 422
        if err.code in ("connection_lost", "warehouse_unavailable"):  # retry later
            return 503
        return 500
    return 400


def json_safe(value: Any) -> Any:
    """A value as strict JSON in the one rule of `dosi.execute.values.json_value`: NaN and
    infinities are null; a decimal is a number where a double reads it back exactly, else a
    string of its digits; integers of any size are numbers."""
    return json_ready(value)


def csv_cell(v: Any) -> str:
    """One CSV value: empty for NULL, exact digits for numbers (a DECIMAL at its scale),
    true / false, lists joined with commas, objects as JSON."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return ""
    number = text_value(v)
    if number is not None:
        return number
    if isinstance(v, (list, tuple)):
        if all(not isinstance(x, (dict, list, tuple)) for x in v):
            return ",".join(csv_cell(x) for x in v)
        return json.dumps(json_safe(v), ensure_ascii=False, allow_nan=False)
    if isinstance(v, dict):
        return json.dumps(json_safe(v), ensure_ascii=False, allow_nan=False)
    return str(v)


def sql_request(body: Any) -> tuple[str, list[Any] | None]:
    """`{"sql": "SELECT ...", "params": [...]}` of REST `/v1/sql` and the MCP `sql` tool."""
    if isinstance(body, str):
        return body, None
    if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
        raise QueryError(
            "invalid_query",
            'send {"sql": "SELECT ...", "params": [...]}',
            hint="the statement reads the model's virtual table; see docs/serving/sql.md",
        )
    params = body.get("params")
    if params is not None and not isinstance(params, list):
        raise QueryError("invalid_query", "params must be a list (the values of $1, $2, ...)")
    extra = sorted(set(body) - {"sql", "params"})
    if extra:
        raise QueryError("invalid_query", f"unknown keys {extra}", candidates=["sql", "params"])
    return body["sql"], params


def engine_capabilities() -> dict[str, Any]:
    """`GET /v1/capabilities` (SURF-REST-01): version, key impacts, history, params support."""
    return {
        "engine": "dosi",
        "engine_version": __version__,
        "spec_version": SPEC_VERSION,
        "datus_ext_version": DATUS_EXT_VERSION,
        "version": DATUS_EXT_VERSION,
        "modes": ["datus", "basic"],
        "impacts": dict(IMPACTS),
        "params": True,
        "endpoints": list(ENDPOINTS),
        "result_formats": list(RESULT_FORMATS),
        "query_features": query_features(),
        **capabilities(),
    }


class OsiErrorBody(Exception):
    """A request problem found before the engine runs (bad JSON, bad envelope)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body["message"])
        self.status = status
        self.body = body


def validate_body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise OsiErrorBody(
            400,
            error_body(
                "invalid_request",
                'the body is {"model": "<model YAML or JSON text>"}',
                candidates=["model", "mode"],
            ),
        )
    extra = set(body) - {"model", "mode", "sources"}
    if extra:
        raise OsiErrorBody(
            400,
            error_body(
                "unknown_request_key",
                f"unknown key `{sorted(extra)[0]}`",
                candidates=["model", "mode", "sources"],
            ),
        )
    mode = body.get("mode", "datus")
    if mode not in ("datus", "basic"):
        raise OsiErrorBody(
            400,
            error_body(
                "invalid_request", '`mode` is "datus" or "basic"', candidates=["datus", "basic"]
            ),
        )
    if not isinstance(body.get("sources", False), bool):
        raise OsiErrorBody(
            400,
            error_body(
                "invalid_request",
                "`sources` is true (also check the model against the server's warehouse) or false",
            ),
        )
    return validate(body["model"], mode)
