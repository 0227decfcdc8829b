"""Detail rows (`Engine.select`): row-level fields, no rollup, the fan-out rule (SURF-CLI-07)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlglot

from dosi.errors import QueryError


def _select(shop: Any, db: Path, q: dict[str, Any]) -> Any:
    return shop.select(q, db_path=db)


def test_select_joins_many_to_one_filters_orders_and_limits(
    shop: Any, shop_db: Path, shop_ref: Any
) -> None:
    """SURF-CLI-07: fields of `from` and of datasets it reaches, filtered on a joined field."""
    r = _select(
        shop,
        shop_db,
        {
            "from": "order_items",
            "fields": ["order_items.order_id", "order_items.quantity", "regions.region_name"],
            "where_sql": "customers.segment = 'consumer' AND order_items.quantity >= 3",
            "order_by": [{"key": "order_id"}, {"key": "quantity", "desc": True}],
            "limit": 7,
        },
    )
    assert r["columns"] == ["order_id", "quantity", "regions__region_name"]
    expected = shop_ref.rows(
        """SELECT oi.order_id, oi.quantity, r.region_name
           FROM order_items oi LEFT JOIN orders o ON oi.order_id = o.order_id
           LEFT JOIN customers c ON o.customer_id = c.customer_id
           LEFT JOIN regions r ON c.region_id = r.region_id
           WHERE c.segment = 'consumer' AND oi.quantity >= 3
           ORDER BY oi.order_id, oi.quantity DESC LIMIT 7"""
    )
    got = [(x["order_id"], x["quantity"], x["regions__region_name"]) for x in r["rows"]]
    assert [g[:2] for g in got] == [e[:2] for e in expected]
    assert r["row_count"] == 7
    assert "GROUP BY" not in r["sql"].upper()
    assert r["requested_columns"][2] == {
        "requested": "regions.region_name",
        "column": "regions__region_name",
    }


def test_select_no_rollup_keeps_every_row(shop: Any, shop_db: Path, shop_ref: Any) -> None:
    """No rollup stage: one output row per `from` row inside the time range."""
    q = {
        "from": "orders",
        "fields": ["orders.channel"],
        "time_range": {"start": "2024-01-01", "end": "2024-02-01"},
        "limit": 100000,
    }
    r = _select(shop, shop_db, q)
    n = shop_ref.scalar(
        "SELECT COUNT(*) FROM orders WHERE order_date >= DATE '2024-01-01' "
        "AND order_date < DATE '2024-02-01'"
    )
    assert r["row_count"] == n > 10
    d = _select(shop, shop_db, {**q, "distinct": True})
    assert d["row_count"] == shop_ref.scalar(
        "SELECT COUNT(DISTINCT COALESCE(channel, '~')) FROM orders WHERE order_date >= "
        "DATE '2024-01-01' AND order_date < DATE '2024-02-01'"
    )


def test_select_default_limit_and_grain(shop: Any, shop_db: Path) -> None:
    r = _select(
        shop, shop_db, {"from": "orders", "fields": ["orders.order_id", "orders.order_date:month"]}
    )
    assert r["row_count"] == 100  # executions default to 100 rows, as the reference does
    assert all(
        x["order_date__month"].endswith("-01 00:00:00") or x["order_date__month"].endswith("-01")
        for x in r["rows"]
    )
    compiled = shop.compile_select(
        {"from": "orders", "fields": ["orders.order_id"]}, dialect="postgres"
    )
    assert "LIMIT" not in compiled["sql"]
    assert sqlglot.parse_one(compiled["sql"], read="postgres") is not None


def test_select_fan_out_is_rejected_with_the_finer_from() -> None:
    """Same fan-out rule as the metric plane: order_items is on the many side of orders."""
    from enginekit import SHOP_MODEL

    from dosi import Engine

    e = Engine(model_path=SHOP_MODEL)
    with pytest.raises(QueryError) as err:
        e.compile_select({"from": "orders", "fields": ["orders.order_id", "order_items.quantity"]})
    assert err.value.code == "detail_fanout"
    assert err.value.candidates == ["order_items"]
    assert '"from": "order_items"' in (err.value.hint or "")


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"from": "nope", "fields": ["orders.order_id"]}, "unknown_dataset"),
        ({"from": "orders", "fields": []}, "empty_query"),
        ({"from": "orders", "fields": ["orders.nope"]}, "unknown_dimension"),
        ({"from": "orders", "fields": ["orders.order_id"], "bogus": 1}, "unknown_query_key"),
        (
            {"from": "orders", "fields": ["orders.order_id"], "order_by": ["amount"]},
            "unknown_order_key",
        ),
        (
            {
                "from": "orders",
                "fields": ["orders.order_id"],
                "where_sql": "SUM(orders.amount) > 1",
            },
            "aggregate_in_where",
        ),
        (
            {
                "from": "customers",
                "fields": ["customers.customer_id"],
                "time_range": {"start": "2024-01-01"},
            },
            "time_range_needs_dimension",
        ),
        (
            {"from": "orders", "fields": ["orders.order_id", "orders.order_id"]},
            "duplicate_output_name",
        ),
        ({"fields": ["orders.order_id"]}, "invalid_query"),
        ({"from": "orders", "fields": ["orders.channel:month"]}, "grain_on_non_time_dimension"),
    ],
)
def test_select_errors_are_structured(shop: Any, query: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as err:
        shop.compile_select(query)
    assert err.value.code == code


def test_explain_select_has_no_aggregate(shop: Any) -> None:
    text = shop.explain_select(
        {"from": "order_items", "fields": ["order_items.quantity", "customers.segment"]}
    )
    assert "Aggregate" not in text
    assert "JoinRelated[order_items_to_orders -> orders, left]" in text
    assert text.strip().endswith("ReadDataset[order_items]")
