"""Snowflake (compile only): sqlglot's rendering as is; streaming windows are not verified on
Snowflake, so they are refused before any SQL is produced."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import ORACLE_TOKENS, TimeParser
from dosi.sql.dialects.window_support import SNOWFLAKE_LACKS

# D-FORMAT: TO_DATE / TO_TIMESTAMP_NTZ with Snowflake's format elements
PARSER = TimeParser(date_fn="TO_DATE", ts_fn="TO_TIMESTAMP_NTZ", tokens=ORACLE_TOKENS)

SNOWFLAKE = Dialect(
    "snowflake",
    null_ordering=sqlglot_null_ordering("snowflake"),
    time_parser=PARSER,
    unsupported_window_functions=SNOWFLAKE_LACKS,
)
