"""BigQuery (compile only): UNIX_MICROS / TIMESTAMP_MICROS make streaming windows portable."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import TimeParser
from dosi.sql.dialects.window_support import BIGQUERY_LACKS

# D-FORMAT: PARSE_DATE / PARSE_DATETIME take the format first
PARSER = TimeParser(date_fn="PARSE_DATE", ts_fn="PARSE_DATETIME", format_first=True)

BIGQUERY = Dialect(
    "bigquery",
    unsupported_window_functions=BIGQUERY_LACKS,
    null_ordering=sqlglot_null_ordering("bigquery"),
    streaming=True,
    time_parser=PARSER,
    week_unit="ISOWEEK",  # WEEK is WEEK(SUNDAY) on BigQuery
    percentile_style=None,  # PERCENTILE_CONT is analytic (OVER) only
)
