"""Trino, Presto and Athena (compile only): NULLs sort last in both directions, as sqlglot's
Presto and Trino dialects state."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import MYSQL_TOKENS, TimeParser
from dosi.sql.dialects.window_support import PRESTO_LACKS, TRINO_LACKS

# D-FORMAT: date_parse reads MySQL-style formats into a TIMESTAMP (a date layout is cast)
PARSER = TimeParser(ts_fn="DATE_PARSE", tokens=MYSQL_TOKENS)

# a time spine is UNNEST(SEQUENCE(lo, hi, step)) (their recursive WITH stops at 10 steps)
_SPINE = "unnest_sequence"
TRINO = Dialect(
    "trino",
    null_ordering=sqlglot_null_ordering("trino"),
    time_parser=PARSER,
    spine_series=_SPINE,
    unsupported_window_functions=TRINO_LACKS,
    percentile_style=None,
)
PRESTO = Dialect(
    "presto",
    unsupported_window_functions=PRESTO_LACKS,
    null_ordering=sqlglot_null_ordering("presto"),
    time_parser=PARSER,
    spine_series=_SPINE,
    percentile_style=None,  # approx_percentile only
)
ATHENA = Dialect(
    "athena",
    unsupported_window_functions=PRESTO_LACKS,
    null_ordering=sqlglot_null_ordering("athena"),
    time_parser=PARSER,
    spine_series=_SPINE,
    percentile_style=None,  # approx_percentile only
)
