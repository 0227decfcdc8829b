"""DuckDB: the embedded default. sqlglot's rendering is native; streaming windows use
UNIX_MICROS / MAKE_TIMESTAMP through sqlglot's UnixMicros / UnixToTime."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

DUCKDB = Dialect(
    "duckdb",
    null_ordering=sqlglot_null_ordering("duckdb"),
    streaming=True,
    pre_aggregate_count_guard=True,
)
