"""Snowflake (compile only): sqlglot's rendering as is; streaming windows are not verified on
Snowflake, so they are refused before any SQL is produced."""

from __future__ import annotations

from dosi.sql.dialects.base import Dialect, sqlglot_null_ordering

SNOWFLAKE = Dialect("snowflake", null_ordering=sqlglot_null_ordering("snowflake"))
