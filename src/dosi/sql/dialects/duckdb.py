"""DuckDB: the embedded default. sqlglot's rendering is native; streaming windows use
UNIX_MICROS / MAKE_TIMESTAMP through sqlglot's UnixMicros / UnixToTime."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import TimeParser

# D-FORMAT: STRPTIME reads strftime layouts (a TIMESTAMP; a date layout is cast to DATE)
PARSER = TimeParser(ts_fn="STRPTIME")

DUCKDB = Dialect(
    "duckdb",
    column_catalog="current_schema",
    null_ordering=sqlglot_null_ordering("duckdb"),
    streaming=True,
    time_parser=PARSER,
    pre_aggregate_count_guard=True,
    canonical_result_types=True,
    spine_series="unnest_generate_series",
    percentile_style="duckdb",
)
