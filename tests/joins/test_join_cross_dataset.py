"""Measures on a dataset the fact table reaches many-to-one (the "one" side).

A duplicate-insensitive aggregate (COUNT DISTINCT, MIN, MAX) may be evaluated through the
join that repeats its rows, so it shares the fact branch: `COUNT(DISTINCT customers.id)` per
order channel counts the customers who ordered through each channel, and a ratio over both
datasets is computed in one branch. A duplicate-sensitive aggregate never is (fan-out).
Expected values come from hand-written SQL over the mini shop (tests/kit/enginekit.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from enginekit import Ref, assert_rows_equal, metric, mini_yaml, result_rows

from dosi.engine import Engine
from dosi.errors import QueryError

EXTRA = [
    metric("revenue_per_customer", "SUM(orders.amount) / COUNT(DISTINCT customers.id)"),
    metric("customer_rows", "COUNT(customers.id)"),
    metric("first_region", "MIN(customers.region)"),
]


@pytest.fixture(scope="module")
def eng() -> Engine:
    return Engine(model_text=mini_yaml(extra_metrics=EXTRA))


def run(eng: Engine, db: Path, query: dict) -> dict:
    return eng.execute(query, db_path=str(db))


def test_count_distinct_of_the_one_side_by_a_fact_dimension(
    eng: Engine, mini_db: Path, mini_ref: Ref
) -> None:
    """CORE-FAN-01: customers who ordered, per order channel (the orphan order's customer
    does not exist, so `phone` counts 0)."""
    res = run(eng, mini_db, {"metrics": ["customer_count"], "group_by": ["orders.channel"]})
    expected = mini_ref.rows(
        "SELECT o.channel, COUNT(DISTINCT c.id) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_count_distinct_of_the_one_side_by_its_own_dimension(
    eng: Engine, mini_db: Path, mini_ref: Ref
) -> None:
    """Grouped by its own dataset's field the measure reads its own rows: every customer."""
    res = run(eng, mini_db, {"metrics": ["customer_count"], "group_by": ["customers.region"]})
    expected = mini_ref.rows("SELECT region, COUNT(DISTINCT id) FROM customers GROUP BY 1")
    assert_rows_equal(result_rows(res), expected)


def test_ratio_across_datasets_reads_each_side_where_it_can(
    eng: Engine, mini_db: Path, mini_ref: Ref
) -> None:
    """CORE-FAN-03: grouped by the one side's own field, each measure reads its own dataset
    (the reference engine's reading, checked on 0.1.14): revenue through the join, customers
    from the customer table, buyers or not; division by a zero count is NULL."""
    q = {"metrics": ["revenue_per_customer"], "group_by": ["customers.region"]}
    res = run(eng, mini_db, q)
    expected = mini_ref.rows(
        "WITH s AS (SELECT c.region, SUM(o.amount) AS rev FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1), "
        "n AS (SELECT region, COUNT(DISTINCT id) AS k FROM customers GROUP BY 1) "
        "SELECT COALESCE(s.region, n.region), CAST(s.rev AS DOUBLE) / NULLIF(n.k, 0) "
        "FROM s FULL JOIN n ON s.region IS NOT DISTINCT FROM n.region"
    )
    assert_rows_equal(result_rows(res), expected)


def test_ratio_across_datasets_is_one_branch_by_a_fact_dimension(
    eng: Engine, mini_db: Path, mini_ref: Ref
) -> None:
    """CORE-FAN-03: grouped by a field only the fact reaches, the count of the one side runs
    through the join, in the metric's one branch (reference: the same SQL shape)."""
    q = {"metrics": ["revenue_per_customer"], "group_by": ["orders.channel"]}
    res = run(eng, mini_db, q)
    expected = mini_ref.rows(
        "SELECT o.channel, CAST(SUM(o.amount) AS DOUBLE) / NULLIF(COUNT(DISTINCT c.id), 0) "
        "FROM orders o LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)
    assert "FULL OUTER JOIN" not in res["sql"]


def test_min_of_the_one_side_by_a_fact_dimension(eng: Engine, mini_db: Path, mini_ref: Ref) -> None:
    """MIN is duplicate-insensitive too."""
    res = run(eng, mini_db, {"metrics": ["first_region"], "group_by": ["orders.status"]})
    expected = mini_ref.rows(
        "SELECT o.status, MIN(c.region) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_duplicate_sensitive_one_side_measure_is_fan_out(eng: Engine) -> None:
    """A COUNT of customer rows by an order field would count a customer once per order."""
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["customer_rows"], "group_by": ["orders.channel"]})
    assert info.value.code == "fan_out_risk"
    assert info.value.metrics == ["customer_rows"]


def test_other_metrics_never_change_where_a_measure_is_evaluated(
    eng: Engine, mini_db: Path
) -> None:
    """The branch a one-side measure lands in depends on the query's dimensions only: asking
    for refunds beside it must not turn "customers who ordered" into "customers refunded"."""
    q = {"metrics": ["customer_count"], "group_by": ["orders.channel"]}
    alone = {r["channel"]: r["customer_count"] for r in run(eng, mini_db, q)["rows"]}
    both = run(eng, mini_db, {**q, "metrics": ["refund_total", "customer_count"]})
    assert {r["channel"]: r["customer_count"] for r in both["rows"]} == alone
