"""Encoding answers (REST, MCP) in the request's worker thread, never on the event loop (issue 29,
item 1): JSON, CSV, Parquet or an Arrow IPC stream, a slice of rows at a time, each slice checked
against the request's budget (its byte limit, its deadline, a client that went away).

The bytes are the ones `JSONResponse` would send (compact, UTF-8, no NaN), so an answer reads
the same as before; only where the work happens and that it stops on time changed."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from dosi.execute.budget import ResultBudget
from dosi.execute.values import json_ready
from dosi.frontends.contract import csv_cell

ARROW_STREAM = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
JSON_TYPE = "application/json"
CSV_TYPE = "text/csv; charset=utf-8"
#: rows encoded between two looks at the budget
SLICE = 5_000


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_json(value: Any, budget: ResultBudget | None = None) -> bytes:
    """A JSON answer; a result's `rows` are encoded a slice at a time under the budget."""
    rows = value.get("rows") if isinstance(value, dict) else None
    if not isinstance(rows, list) or budget is None:
        data = _dumps(json_ready(dict(value) if isinstance(value, dict) else value))
        out = data.encode("utf-8")
        if budget is not None:
            budget.check_bytes(len(out), 0)
        return out
    head = _dumps(json_ready({k: v for k, v in value.items() if k != "rows"}))
    parts = [head[:-1] + ("," if len(head) > 2 else "") + '"rows":[']
    size = len(parts[0])
    for lo in range(0, len(rows), SLICE):
        text = _dumps(json_ready(rows[lo : lo + SLICE]))[1:-1]
        part = ("," if lo else "") + text
        size += len(part.encode("utf-8"))
        budget.check_bytes(size, lo)
        parts.append(part)
    parts.append("]}")
    return "".join(parts).encode("utf-8")


def encode_csv(result: Any, budget: ResultBudget | None = None) -> bytes:
    """The result's rows as CSV (a header line, then one line per row)."""
    cols = result["columns"]
    rows = result["rows"]
    out = bytearray()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    for lo in range(0, max(1, len(rows)), SLICE):
        for row in rows[lo : lo + SLICE]:
            writer.writerow([csv_cell(row.get(c)) for c in cols])
        out += buf.getvalue().encode("utf-8")
        buf.seek(0)
        buf.truncate()
        if budget is not None:
            budget.check_bytes(len(out), lo)
    return bytes(out)


def _write_batches(
    writer: Any, sink: pa.BufferOutputStream, table: pa.Table, budget: ResultBudget | None
) -> bytes:
    """The table through `writer` a record batch at a time, the budget checked after each."""
    with writer:
        done = 0
        for batch in table.to_batches(max_chunksize=SLICE * 10):
            writer.write_batch(batch)
            done += batch.num_rows
            if budget is not None:
                budget.check_bytes(sink.tell(), done)
    return bytes(sink.getvalue().to_pybytes())


def encode_arrow(table: pa.Table, budget: ResultBudget | None = None) -> bytes:
    """The result's Arrow table as an IPC stream, a record batch at a time."""
    sink = pa.BufferOutputStream()
    return _write_batches(pa.ipc.new_stream(sink, table.schema), sink, table, budget)


def encode_parquet(table: pa.Table, budget: ResultBudget | None = None) -> bytes:
    """The result's Arrow table as a Parquet file (exact decimals, typed dates), a row group
    at a time."""
    sink = pa.BufferOutputStream()
    return _write_batches(pq.ParquetWriter(sink, table.schema), sink, table, budget)


def encode_result(fmt: str, result: Any, budget: ResultBudget | None) -> tuple[bytes, str]:
    """(body, media type) of a query result in `fmt` (json, csv, arrow, parquet)."""
    if fmt == "parquet":
        return encode_parquet(result.arrow, budget), PARQUET
    if fmt == "csv":
        return encode_csv(result, budget), CSV_TYPE
    if fmt == "arrow":
        return encode_arrow(result.arrow, budget), ARROW_STREAM
    return encode_json(result, budget), JSON_TYPE
