"""Spark (dosi.sql.dialects.spark): every bucket truncates a TIMESTAMP_NTZ with DATE_TRUNC.
sqlglot's default TRUNC(date, 'DAY') returns NULL on Spark (TRUNC knows year, quarter, month
and week only), which made the day grain a NULL bucket; the conformance suite runs the
result on a local Spark."""

from __future__ import annotations

import pytest
from sqlglot import exp

from dosi.sql.dialects import get_dialect

SPARK = get_dialect("spark")


@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter", "year"])
def test_buckets_truncate_a_wall_clock_timestamp(grain: str) -> None:
    sql = SPARK.bucket(exp.column("order_date", "orders"), grain).sql("spark")
    assert sql == f"DATE_TRUNC('{grain.upper()}', CAST(orders.order_date AS TIMESTAMP_NTZ))"
    assert "TRUNC(orders" not in sql


def test_nulls_are_small_with_a_nulls_clause() -> None:
    assert SPARK.null_ordering == "nulls_are_small"
    keys = SPARK.ordered(exp.column("x"), desc=False, nulls="last")
    assert [k.sql("spark") for k in keys] == ["x ASC NULLS LAST"]
