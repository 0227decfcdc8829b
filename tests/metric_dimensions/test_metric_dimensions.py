"""Metric dimensions (issue 23 bed: MetricFlow's `Metric(...)` filters; docs/metric-
dimensions.md): a metric's value per entity, joined to the entity's rows and read as a field
in where_sql and group_by. Expected rows from hand-written SQL on the shop tables; the context
layer (time_range) feeds the inner query, where_sql never does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, result_rows

from dosi.errors import QueryError
from dosi.frontends.cli.commands.catalog import info_dict
from dosi.frontends.contract import engine_capabilities

Run = Callable[..., Any]
PER_CUSTOMER = {"customer_orders": {"metric": "order_count", "by": ["customers.customer_id"]}}
# the orders of each customer, over every order (the LEFT join from customers keeps NULL)
ORDERS_PER_CUSTOMER = """
    (SELECT c.customer_id, COUNT(o.order_id) AS n
     FROM main.orders o LEFT JOIN main.customers c ON o.customer_id = c.customer_id
     {where} GROUP BY c.customer_id) k
"""


def test_filter_by_a_metric_per_customer(shop_run: Run, shop_ref: Any) -> None:
    q = {
        "metrics": ["revenue"],
        "group_by": ["customers.segment"],
        "metric_dimensions": PER_CUSTOMER,
        "where_sql": "customer_orders >= 2",
    }
    want = shop_ref.exact(
        f"""
        SELECT c.segment, SUM(o.amount) FROM main.orders o
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN {ORDERS_PER_CUSTOMER.format(where="")} ON c.customer_id = k.customer_id
        WHERE k.n >= 2 GROUP BY c.segment
        """
    )
    assert_rows_equal(result_rows(shop_run(q)), want)
    assert len(want) > 1


def test_where_sql_never_reaches_the_inner_query(shop_run: Run, shop_ref: Any) -> None:
    """The count is over every status; the status condition picks the revenue rows after."""
    q = {
        "metrics": ["revenue"],
        "metric_dimensions": PER_CUSTOMER,
        "where_sql": "customer_orders >= 3 AND orders.status = 'completed'",
    }
    want = shop_ref.exact(
        f"""
        SELECT SUM(o.amount) FROM main.orders o
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN {ORDERS_PER_CUSTOMER.format(where="")} ON c.customer_id = k.customer_id
        WHERE k.n >= 3 AND o.status = 'completed'
        """
    )
    assert result_rows(shop_run(q)) == want


def test_time_range_is_context_for_the_inner_query(shop_run: Run, shop_ref: Any) -> None:
    """January's orders per customer, then January's revenue of the customers with two."""
    jan = "o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2024-02-01'"
    q = {
        "metrics": ["revenue"],
        "metric_dimensions": PER_CUSTOMER,
        "where_sql": "customer_orders >= 2",
        "time_range": {"start": "2024-01-01", "end": "2024-02-01"},
    }
    want = shop_ref.exact(
        f"""
        SELECT SUM(o.amount) FROM main.orders o
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN {ORDERS_PER_CUSTOMER.format(where="WHERE " + jan)} ON c.customer_id = k.customer_id
        WHERE k.n >= 2 AND {jan}
        """
    )
    assert result_rows(shop_run(q)) == want
    everything = shop_run({k: v for k, v in q.items() if k != "time_range"})
    assert result_rows(everything) != want


def test_group_by_a_metric_dimension_from_another_fact(shop_run: Run, shop_ref: Any) -> None:
    """Order lines per order (order_items, many-to-one into orders) as the grouping of the
    order count; an order without lines reads NULL, its own group."""
    q = {
        "metrics": ["order_count"],
        "group_by": ["lines"],
        "metric_dimensions": {"lines": {"metric": "order_line_count", "by": ["orders.order_id"]}},
    }
    res = shop_run(q)
    assert res["columns"] == ["lines", "order_count"]
    want = shop_ref.exact(
        """
        SELECT k.n, COUNT(o.order_id) FROM main.orders o
        LEFT JOIN (SELECT o2.order_id, COUNT(*) AS n FROM main.order_items i
                   LEFT JOIN main.orders o2 ON i.order_id = o2.order_id
                   GROUP BY o2.order_id) k ON o.order_id = k.order_id
        GROUP BY k.n
        """
    )
    assert_rows_equal(result_rows(res), want)


def test_a_ratio_metric_per_customer(shop_run: Run, shop_ref: Any) -> None:
    q = {
        "metrics": ["order_count"],
        "metric_dimensions": {
            "customer_aov": {"metric": "avg_order_value", "by": ["customers.customer_id"]}
        },
        "where_sql": "customer_aov > 100",
    }
    want = shop_ref.exact(
        """
        SELECT COUNT(o.order_id) FROM main.orders o
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN (SELECT c2.customer_id, SUM(o2.amount) / COUNT(o2.order_id) AS v
                   FROM main.orders o2 LEFT JOIN main.customers c2
                   ON o2.customer_id = c2.customer_id GROUP BY c2.customer_id) k
          ON c.customer_id = k.customer_id
        WHERE k.v > 100
        """
    )
    assert result_rows(shop_run(q)) == want


def test_a_query_without_metrics(shop_run: Run, shop_ref: Any) -> None:
    q = {
        "metrics": [],
        "group_by": ["customers.segment"],
        "metric_dimensions": PER_CUSTOMER,
        "where_sql": "customer_orders >= 2",
    }
    want = shop_ref.rows(
        f"""
        SELECT DISTINCT c.segment FROM main.customers c
        LEFT JOIN {ORDERS_PER_CUSTOMER.format(where="")} ON c.customer_id = k.customer_id
        WHERE k.n >= 2
        """
    )
    assert_rows_equal(result_rows(shop_run(q)), want)


@pytest.mark.parametrize(
    ("dims", "code"),
    [
        ({"x": {"metric": "nope", "by": ["customers.customer_id"]}}, "unknown_metric"),
        ({"x": {"metric": "revenue", "by": ["customers.nope"]}}, "unknown_field"),
        ({"x": {"metric": "revenue", "by": []}}, "invalid_query"),
        ({"x": {"metric": "revenue"}}, "invalid_query"),
        ({"x y": {"metric": "revenue", "by": ["customers.customer_id"]}}, "invalid_query"),
        (
            {"revenue": {"metric": "revenue", "by": ["customers.customer_id"]}},
            "duplicate_output_name",
        ),
        (
            {"x": {"metric": "revenue", "by": ["customers.customer_id", "orders.order_id"]}},
            "invalid_query",
        ),
        ([], "invalid_query"),
    ],
)
def test_refusals(shop_run: Run, dims: Any, code: str) -> None:
    with pytest.raises(QueryError) as err:
        shop_run({"metrics": ["revenue"], "metric_dimensions": dims, "where_sql": "x > 1"})
    assert err.value.code == code


def test_a_bound_param_of_the_inner_metric_is_not_a_silent_default(shop_run: Run) -> None:
    dims = {"x": {"metric": "revenue_moving_avg", "by": ["customers.customer_id"]}}
    with pytest.raises(QueryError) as err:
        shop_run(
            {
                "metrics": ["revenue"],
                "metric_dimensions": dims,
                "where_sql": "x > 1",
                "params": {"n": 6},
            }
        )
    assert err.value.code == "not_implemented" and "param(s) n " in err.value.message


def test_capability_rows_for_the_query_features() -> None:
    """`dosi info` and GET /v1/capabilities list the query-level features."""
    for caps in (info_dict(), engine_capabilities()):
        keys = {r["key"] for r in caps["query_features"]}
        assert {"metric_dimensions", "min_max_only"} <= keys
