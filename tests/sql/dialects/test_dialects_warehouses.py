"""Compile-only warehouses (Snowflake, BigQuery, Trino / Presto / Athena, Redshift, Oracle,
SQL Server): their facts, and the gates they raise before any SQL exists."""

from __future__ import annotations

import pytest

from dosi.sql.dialects import get_dialect


def test_redshift_gates_covariance() -> None:
    assert not get_dialect("redshift").supports_window_function("corr")
    assert not get_dialect("redshift").null_safe_full_join


def test_tsql_has_no_nulls_clause() -> None:
    keys = get_dialect("tsql").ordered(__import__("sqlglot").exp.column("x"), False, "last")
    assert len(keys) == 2


@pytest.mark.parametrize("key", ["snowflake", "trino", "redshift", "oracle", "tsql"])
def test_unverified_streaming_is_refused(key: str) -> None:
    assert not get_dialect(key).streaming
