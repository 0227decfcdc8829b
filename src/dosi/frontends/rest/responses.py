"""REST responses: errors as JSON bodies of the error contract, and which format a result is
wanted in (JSON, CSV, Parquet or an Arrow IPC stream, by `?format=` or `Accept`;
`frontends.encode` writes it in the request's worker thread)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from dosi.frontends.contract import error_body, json_safe
from dosi.frontends.encode import ARROW_STREAM, PARQUET


def error_response(status: int, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(json_safe(body), status_code=status)


def wanted_format(request: Request) -> str:
    fmt = request.query_params.get("format")
    if fmt in ("json", "csv", "arrow", "parquet"):
        return fmt
    accept = request.headers.get("accept", "")
    if ARROW_STREAM in accept:
        return "arrow"
    if PARQUET in accept:
        return "parquet"
    if "text/csv" in accept:
        return "csv"
    return "json"


def too_large(limit: int) -> JSONResponse:
    return error_response(
        413,
        error_body(
            "request_too_large",
            f"the request body is larger than {limit} bytes",
            hint="send a smaller query; the limit is set with `dosi serve --max-body`",
        ),
    )
