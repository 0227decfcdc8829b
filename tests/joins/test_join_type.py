"""D-JOIN `join_type` (issue 3): `inner` drops orphan many-side rows; `left` is the default.

Requirement IDs: JOIN-01..05, JOIN-08 (basic mode: see tests/ext/test_ext_engine_modes.py).
Mini data: the orphan order 6 (customer 99, 40) and customer 3 with a NULL region (order 4, 30).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, by_key, mini_yaml, result_rows

from dosi.engine import Engine
from dosi.errors import ModelError

INNER = {"orders_to_customers": {"join_type": "inner"}}
Run = Callable[..., Any]


def test_join_04_inner_drops_orphan_rows(mini_engine: Callable[..., Any], mini_ref: Any) -> None:
    """JOIN-04: with `inner`, the orphan order leaves the NULL region group (70 -> 30), while
    customer 3's real NULL region stays."""
    _, run = mini_engine(rel_ext=INNER)
    res = run({"metrics": ["revenue", "order_count"], "group_by": ["customers.region"]})
    expected = mini_ref.rows(
        "SELECT c.region, SUM(o.amount), COUNT(o.order_id) FROM orders o "
        "INNER JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)
    assert by_key(res, "region")[None] == {"region": None, "revenue": 30.0, "order_count": 1}


def test_join_04_inner_renders_an_inner_join(mini_engine: Callable[..., Any]) -> None:
    """JOIN-01/04: the relationship's join kind reaches the SQL."""
    engine, _ = mini_engine(rel_ext=INNER)
    sql = engine.compile({"metrics": ["revenue"], "group_by": ["customers.segment"]})["sql"]
    assert "JOIN" in sql.upper()
    assert "LEFT JOIN" not in sql.upper()


def test_join_02_inner_acts_only_when_the_join_is_needed(
    mini_engine: Callable[..., Any], mini_ref: Any
) -> None:
    """JOIN-02: without a dimension or filter from customers there is no join, so the orphan
    still counts (reference §3.6)."""
    _, run = mini_engine(rel_ext=INNER)
    res = run({"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]})
    expected = mini_ref.rows("SELECT channel, SUM(amount), COUNT(*) FROM orders GROUP BY 1")
    assert_rows_equal(result_rows(res), expected)
    assert by_key(res, "channel")["phone"]["order_count"] == 1


def test_join_04_inner_on_a_filter_join(mini_engine: Callable[..., Any], mini_ref: Any) -> None:
    """JOIN-02: a join that exists only for a where_sql filter uses the declared kind too."""
    _, run = mini_engine(rel_ext=INNER)
    res = run({"metrics": ["order_count"], "where_sql": "customers.segment IS NULL"})
    # LEFT would also count the orphan (NULL segment through the missing customer)
    expected = mini_ref.scalar(
        "SELECT COUNT(*) FROM orders o JOIN customers c ON o.customer_id = c.id "
        "WHERE c.segment IS NULL"
    )
    assert res["rows"] == [{"order_count": expected}]
    assert expected == 1


def test_join_03_left_is_the_default(mini_run: Run) -> None:
    """JOIN-01/03: the same query without the extension keeps the orphan."""
    res = mini_run({"metrics": ["order_count"], "where_sql": "customers.segment IS NULL"})
    assert res["rows"] == [{"order_count": 2}]


def test_join_01_explicit_left_equals_the_default(
    mini_engine: Callable[..., Any], mini: Engine, mini_run: Run
) -> None:
    """JOIN-01: `"join_type": "left"` is the default spelled out (same SQL, same rows)."""
    engine, run = mini_engine(rel_ext={"orders_to_customers": {"join_type": "left"}})
    q = {"metrics": ["revenue"], "group_by": ["customers.region"]}
    assert engine.compile(q)["sql"] == mini.compile(q)["sql"]
    assert run(q)["rows"] == mini_run(q)["rows"]


def test_join_04_inner_along_a_multi_hop_path(
    mini_engine: Callable[..., Any], mini_ref: Any
) -> None:
    """JOIN-02: an inner hop further up the path drops the rows it cannot match.
    refunds -> orders (inner): the refund of order 50 (no such order) is dropped."""
    _, run = mini_engine(rel_ext={"refunds_to_orders": {"join_type": "inner"}})
    res = run({"metrics": ["refund_total", "refund_count"], "group_by": ["customers.segment"]})
    expected = mini_ref.rows(
        "SELECT c.segment, SUM(r.refund_amount), COUNT(r.refund_id) FROM refunds r "
        "INNER JOIN orders o ON r.order_id = o.order_id "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)
    assert None not in by_key(res, "segment")


def test_shop_products_join_is_inner(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 6: order_items -> products is declared `inner` in the shop model."""
    res = shop_run(
        {
            "metrics": ["line_revenue", "items_sold", "order_line_count"],
            "group_by": ["products.category"],
            "order_by": [{"key": "line_revenue", "desc": True}],
        }
    )
    expected = shop_ref.exact(
        """
        SELECT p.category, SUM(i.quantity * i.unit_price), SUM(i.quantity), COUNT(*)
        FROM main.order_items i INNER JOIN main.products p ON i.product_id = p.product_id
        GROUP BY 1 ORDER BY 2 DESC
        """
    )
    assert [tuple(r.values()) for r in res["rows"]] == expected
    assert "INNER JOIN" in res["sql"].upper()


@pytest.mark.parametrize("value", ["INNER", "outer", "", 1, True])
def test_join_05_value_outside_the_enum_is_invalid(value: Any) -> None:
    """JOIN-05: `join_type` is exactly "left" or "inner" (case-sensitive)."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(rel_ext={"orders_to_customers": {"join_type": value}}))
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "relationships[orders_to_customers]")
    ]
