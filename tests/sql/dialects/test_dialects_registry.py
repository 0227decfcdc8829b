"""The dialect registry (dosi.sql.dialects): every fact that sqlglot also states agrees with
sqlglot's dialect class, names resolve (aliases included), and an unknown name is a structured
error naming the candidates."""

from __future__ import annotations

import pytest

from dosi.errors import QueryError
from dosi.sql.dialects import DIALECTS, get_dialect, streaming_dialects
from dosi.sql.dialects.base import sqlglot_null_ordering


@pytest.mark.parametrize("key", sorted(DIALECTS))
def test_null_ordering_is_sqlglots(key: str) -> None:
    d = DIALECTS[key]
    if key == "datafusion":  # rendered with the PostgreSQL generator; DataFusion's own rule
        assert d.null_ordering == "nulls_are_large"
        return
    assert d.null_ordering == sqlglot_null_ordering(d.name)


def test_trino_presto_athena_sort_nulls_last_both_ways() -> None:
    for key in ("trino", "presto", "athena"):
        d = get_dialect(key)
        assert d.null_ordering == "nulls_are_last"
        assert d.nulls_first_default(desc=False) is False
        assert d.nulls_first_default(desc=True) is False


def test_aliases_and_keys() -> None:
    assert get_dialect("postgresql") is get_dialect("postgres")
    assert get_dialect("chdb") is get_dialect("clickhouse")
    assert get_dialect("datafusion").name == "postgres"
    assert get_dialect("datafusion").key == "datafusion"
    assert get_dialect("mariadb").name == "mysql"
    assert get_dialect(None).key == "duckdb"


def test_unknown_dialect_is_structured() -> None:
    with pytest.raises(QueryError) as info:
        get_dialect("postgress")
    assert info.value.code == "unknown_dialect"
    assert "postgres" in info.value.candidates


def test_every_engine_dosi_runs_on_renders_streaming_windows() -> None:
    runnable = {"duckdb", "postgres", "datafusion", "sqlite", "clickhouse", "spark", "mysql"}
    assert runnable | {"mariadb"} <= set(streaming_dialects())
