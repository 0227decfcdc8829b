"""PostgreSQL (dosi.sql.dialects.postgres): DATE_TRUNC on a plain TIMESTAMP, epochs through
EXTRACT(EPOCH), merges through the union of branch keys (the portability suite runs them)."""

from __future__ import annotations

from sqlglot import exp

from dosi.sql.dialects import get_dialect

PG = get_dialect("postgres")


def test_postgres_buckets_a_timestamp() -> None:
    sql = PG.bucket(exp.column("d"), "month").sql("postgres")
    assert sql == "DATE_TRUNC('MONTH', CAST(d AS TIMESTAMP))"
    assert not PG.null_safe_full_join and PG.null_ordering == "nulls_are_large"


def test_postgres_epoch() -> None:
    assert "EXTRACT(EPOCH FROM ts)" in PG.epoch_us(exp.column("ts")).sql("postgres")
