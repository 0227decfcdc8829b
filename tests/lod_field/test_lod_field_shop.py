"""The shop model's cohort example (docs/extensions/d-lod.md): each customer's first order
month as a D-LOD fixed field (orders.first_order_day) and row-level fields over it, against
hand-written SQL on the generated shop data (CHECKLIST LOD-FLD-03/11, LOD-FLT-01/07)."""

from __future__ import annotations

from typing import Any

import pytest
from enginekit import SHOP_MODEL, Ref, assert_rows_equal, result_rows, shop_db, shop_ref  # noqa: F401

import dosi

FIRST = "SELECT customer_id, MIN(order_date) AS first_order_day FROM orders GROUP BY customer_id"
FIRST_2024 = (
    "SELECT customer_id, MIN(order_date) AS first_order_day FROM orders"
    " WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01' GROUP BY 1"
)


@pytest.fixture(scope="module")
def shop_engine() -> Any:
    e = dosi.Engine(model_path=SHOP_MODEL)
    yield e
    e.close()


CASES: list[tuple[str, dict[str, Any], list[str], str]] = [
    (
        "customers per acquisition cohort (two-stage: the rollup alone)",
        {"metrics": ["customer_count"], "group_by": ["orders.cohort_month"]},
        ["cohort_month", "customer_count"],
        f"SELECT CAST(DATE_TRUNC('month', first_order_day) AS DATE), COUNT(DISTINCT customer_id)"
        f" FROM ({FIRST}) f GROUP BY 1",
    ),
    (
        "revenue per cohort and order year (broadcast onto the order rows)",
        {"metrics": ["revenue"], "group_by": ["orders.cohort_month", "metric_time:year"]},
        ["cohort_month", "metric_time__year", "revenue"],
        "SELECT CAST(DATE_TRUNC('month', f.first_order_day) AS DATE),"
        " CAST(DATE_TRUNC('year', o.order_date) AS DATE), SUM(o.amount) FROM orders o"
        f" LEFT JOIN ({FIRST}) f ON o.customer_id IS NOT DISTINCT FROM f.customer_id"
        " GROUP BY 1, 2",
    ),
    (
        "first versus repeat orders",
        {"metrics": ["revenue", "order_count"], "group_by": ["orders.order_kind"]},
        ["order_kind", "revenue", "order_count"],
        "SELECT CASE WHEN o.order_date = f.first_order_day THEN 'first' ELSE 'repeat' END,"
        f" SUM(o.amount), COUNT(o.order_id) FROM orders o LEFT JOIN ({FIRST}) f"
        " ON o.customer_id IS NOT DISTINCT FROM f.customer_id GROUP BY 1",
    ),
    (
        "the 2023 cohorts' revenue by channel (a cohort filter on the fixed value)",
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.first_order_day < DATE '2024-01-01'",
        },
        ["channel", "revenue"],
        f"SELECT o.channel, SUM(o.amount) FROM orders o LEFT JOIN ({FIRST}) f"
        " ON o.customer_id IS NOT DISTINCT FROM f.customer_id"
        " WHERE f.first_order_day < DATE '2024-01-01' GROUP BY 1",
    ),
    (
        "time_range is the context: first orders within 2024",
        {
            "metrics": ["customer_count"],
            "group_by": ["orders.order_kind"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
        ["order_kind", "customer_count"],
        "SELECT CASE WHEN o.order_date = f.first_order_day THEN 'first' ELSE 'repeat' END,"
        f" COUNT(DISTINCT o.customer_id) FROM orders o LEFT JOIN ({FIRST_2024}) f"
        " ON o.customer_id IS NOT DISTINCT FROM f.customer_id"
        " WHERE o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2025-01-01'"
        " GROUP BY 1",
    ),
]


@pytest.mark.parametrize(("why", "query", "cols", "sql"), CASES, ids=[c[0][:40] for c in CASES])
def test_shop_cohorts_match_hand_sql(
    shop_engine: Any,
    shop_db: Any,  # noqa: F811
    shop_ref: Ref,  # noqa: F811
    why: str,
    query: dict[str, Any],
    cols: list[str],
    sql: str,
) -> None:
    got = shop_engine.execute(query, db_path=shop_db)
    assert_rows_equal(result_rows(got, cols), shop_ref.rows(sql))
