"""`min_max_only` on a query without metrics (issue 23 bed: MetricFlow's min_max_only): one
row with each grouped column's smallest and largest value, over the distinct rows the plain
dimension-only query answers. Expected values from hand SQL on the shop tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import result_rows

from dosi.errors import QueryError

Run = Callable[..., Any]


def test_min_max_of_a_categorical_and_a_bucketed_date(shop_run: Run, shop_ref: Any) -> None:
    """Across a join, under a filter; the month bucket keeps its date type; NULL channels do
    not count (MIN / MAX skip NULLs, as the hand SQL does)."""
    q = {
        "metrics": [],
        "group_by": ["customers.segment", "orders.order_date:month"],
        "where_sql": "orders.status = 'completed'",
        "min_max_only": True,
    }
    res = shop_run(q)
    assert res["columns"] == [
        "segment__min",
        "segment__max",
        "order_date__month__min",
        "order_date__month__max",
    ]
    expected = shop_ref.rows(
        """
        SELECT MIN(c.segment), MAX(c.segment),
               MIN(DATE_TRUNC('month', o.order_date))::DATE,
               MAX(DATE_TRUNC('month', o.order_date))::DATE
        FROM main.orders o LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        WHERE o.status = 'completed'
        """
    )
    assert result_rows(res) == expected and res["row_count"] == 1
    assert len(res["rows"][0]["order_date__month__min"]) == 10  # a DATE, not a timestamp
    names = [c["column"] for c in res["requested_columns"]]
    assert names == res["columns"]


def test_min_max_of_a_column_holding_nulls(shop_run: Run, shop_ref: Any) -> None:
    res = shop_run({"metrics": [], "group_by": ["orders.channel"], "min_max_only": True})
    assert result_rows(res) == shop_ref.rows("SELECT MIN(channel), MAX(channel) FROM main.orders")


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"order_by": ["channel"]}, "unsupported_in_dimension_query"),
        ({"limit": 3}, "unsupported_in_dimension_query"),
        ({"min_max_only": "yes"}, "invalid_query"),
    ],
)
def test_refusals(shop_run: Run, extra: dict[str, Any], code: str) -> None:
    q = {"metrics": [], "group_by": ["orders.channel"], "min_max_only": True, **extra}
    with pytest.raises(QueryError) as err:
        shop_run(q)
    assert err.value.code == code


def test_a_metric_query_refuses_min_max_only(shop_run: Run) -> None:
    with pytest.raises(QueryError) as err:
        shop_run({"metrics": ["revenue"], "group_by": ["orders.channel"], "min_max_only": True})
    assert err.value.code == "invalid_query" and "without metrics" in err.value.message


def test_false_is_the_plain_distinct_query(shop_run: Run, shop_ref: Any) -> None:
    res = shop_run({"metrics": [], "group_by": ["orders.channel"], "min_max_only": False})
    assert res["row_count"] == shop_ref.scalar(
        "SELECT COUNT(DISTINCT channel) + 1 FROM main.orders"
    )
