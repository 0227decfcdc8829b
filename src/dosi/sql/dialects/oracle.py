"""Oracle (compile only)."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import ORACLE_TOKENS, TimeParser
from dosi.sql.dialects.window_support import ORACLE_LACKS

# D-FORMAT: TO_DATE (a DATE, which carries a time on Oracle) / TO_TIMESTAMP
PARSER = TimeParser(
    date_fn="TO_DATE", ts_fn="TO_TIMESTAMP", tokens=ORACLE_TOKENS, text_type="VARCHAR(32)"
)

# TRUNC(x, 'WEEK') starts on the weekday of January 1; 'IW' is the ISO (Monday) week;
# a time spine: its recursive WITH wants a column list and FROM dual, which dosi does not write
ORACLE = Dialect(
    "oracle",
    unsupported_window_functions=ORACLE_LACKS,
    null_ordering=sqlglot_null_ordering("oracle"),
    time_parser=PARSER,
    week_unit="IW",
    spine_series=None,
)
