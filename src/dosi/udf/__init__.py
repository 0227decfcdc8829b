"""Streaming window boundary functions (window-udf.md): tumble, hop, session, cumulate.

* `register_duckdb(connection)` creates the seven functions as DuckDB temp macros;
* `register_datafusion(session_context)` registers them as DataFusion scalar UDFs;
* `dosi.udf.reference` computes the same boundaries in Python on epoch milliseconds;
* `parse_interval_ms` turns "5 minutes", "INTERVAL '1' HOUR", "PT30S"... into milliseconds.

Decisions on the points the spec leaves open (CHECKLIST UDF-GAP-01..05) are in
`dosi.udf.validation` (arguments and errors) and `dosi.udf.reference` (formulas). The same
boundaries as plain SQL for any dialect are `dosi.sql.stream_window_bounds`.

Layer: the window UDFs' semantics and their engine registrations, right above `dosi.errors`:
it may import `dosi.errors` only (and the engines' Python clients, lazily); nothing of
`dosi.sql`, so query resolution can use its interval and argument rules.
"""

from __future__ import annotations

from dosi.udf import reference
from dosi.udf.datafusion_udfs import register_datafusion, rewrite_for_datafusion
from dosi.udf.duckdb_macros import register_duckdb
from dosi.udf.intervals import parse_interval_ms
from dosi.udf.validation import (
    INVALID_WINDOW_ARGUMENT,
    WINDOW_FUNCTION_ARITIES,
    WINDOW_FUNCTION_PARAMETERS,
    error_from_engine,
)

__all__ = [
    "INVALID_WINDOW_ARGUMENT",
    "WINDOW_FUNCTION_ARITIES",
    "WINDOW_FUNCTION_PARAMETERS",
    "error_from_engine",
    "parse_interval_ms",
    "reference",
    "register_datafusion",
    "register_duckdb",
    "rewrite_for_datafusion",
]
