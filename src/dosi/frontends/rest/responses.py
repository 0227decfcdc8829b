"""REST responses: errors as JSON bodies of the error contract, and a result as JSON, CSV,
Parquet or an Arrow IPC stream (by `?format=` or `Accept`)."""

from __future__ import annotations

import csv
import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from fastapi import Request
from fastapi.responses import JSONResponse, Response

from dosi.frontends.contract import csv_cell, error_body, json_safe

ARROW_STREAM = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"


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


def result_response(request: Request, result: Any) -> Response:
    fmt = wanted_format(request)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        cols = result["columns"]
        w.writerow(cols)
        for row in result["rows"]:
            w.writerow([csv_cell(row.get(c)) for c in cols])
        return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")
    if fmt == "arrow":
        table: pa.Table = result.arrow
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return Response(sink.getvalue().to_pybytes(), media_type=ARROW_STREAM)
    if fmt == "parquet":  # the engine's Arrow table as written: exact decimals, typed dates
        out = pa.BufferOutputStream()
        pq.write_table(result.arrow, out)
        return Response(out.getvalue().to_pybytes(), media_type=PARQUET)
    return JSONResponse(json_safe(dict(result)))


def too_large(limit: int) -> JSONResponse:
    return error_response(
        413,
        error_body(
            "request_too_large",
            f"the request body is larger than {limit} bytes",
            hint="send a smaller query; the limit is set with `dosi serve --max-body`",
        ),
    )
