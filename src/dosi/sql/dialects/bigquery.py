"""BigQuery (compile only): UNIX_MICROS / TIMESTAMP_MICROS make streaming windows portable."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

BIGQUERY = Dialect("bigquery", null_ordering=sqlglot_null_ordering("bigquery"), streaming=True)
