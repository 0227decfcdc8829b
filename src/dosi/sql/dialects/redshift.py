"""Redshift (compile only): no COVAR/CORR window functions, and FULL JOIN needs merge- or
hash-joinable conditions (PostgreSQL's rule)."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering
from dosi.sql.dialects.time_format import ORACLE_TOKENS, TimeParser
from dosi.sql.dialects.window_support import REDSHIFT_LACKS

REDSHIFT = Dialect(
    "redshift",
    null_ordering=sqlglot_null_ordering("redshift"),
    unsupported_window_functions=frozenset({"covar_pop", "covar_samp", "corr"}) | REDSHIFT_LACKS,
    null_safe_full_join=False,
    # D-FORMAT: TO_DATE / TO_TIMESTAMP (zoned: cast back to TIMESTAMP), PostgreSQL patterns
    time_parser=TimeParser(
        date_fn="TO_DATE", ts_fn="TO_TIMESTAMP", tokens=ORACLE_TOKENS, ts_cast=True
    ),
    # a time spine: generate_series runs on the leader node only, and a recursive WITH
    # wants a column list dosi does not write
    spine_series=None,
)
