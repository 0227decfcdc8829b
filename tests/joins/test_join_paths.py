"""Joins (issue 2): many-to-one LEFT by default, unique paths, fan-out protection.

Requirement IDs: JOIN-01/03 (default LEFT; orphans land in the NULL group), CORE-MOD-03
(relationships are many -> one), §18 fan_out_risk / no_join_path, reference §2.7.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

import pytest
from enginekit import (
    assert_rows_equal,
    by_key,
    dataset,
    metric,
    model_doc,
    rel,
    result_rows,
    to_yaml,
)

from dosi.engine import Engine
from dosi.errors import QueryError

Run = Callable[..., Any]


def query_error(engine: Engine, query: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        engine.compile(query)
    return info.value


# ------------------------------------------------------------------------------ LEFT default


def test_join_03_orphan_rows_land_in_the_null_group(mini_run: Run) -> None:
    """JOIN-03: with the default LEFT join the orphan order (customer 99, 40) survives in the
    NULL region group, next to customer 3 whose region is NULL (order 4, 30)."""
    res = mini_run({"metrics": ["revenue", "order_count"], "group_by": ["customers.region"]})
    rows = by_key(res, "region")
    assert rows[None] == {"region": None, "revenue": 70.0, "order_count": 2}
    assert rows["east"] == {"region": "east", "revenue": 170.0, "order_count": 3}
    assert rows["west"] == {"region": "west", "revenue": 70.0, "order_count": 2}


def test_join_03_left_join_totals_equal_the_unjoined_total(mini_run: Run, mini_ref: Any) -> None:
    """JOIN-03: grouping by a joined dimension loses no fact rows."""
    res = mini_run({"metrics": ["revenue", "order_count"], "group_by": ["customers.segment"]})
    total_rev = sum(r["revenue"] for r in res["rows"] if r["revenue"] is not None)
    total_cnt = sum(r["order_count"] for r in res["rows"])
    assert (total_rev, total_cnt) == mini_ref.rows("SELECT SUM(amount), COUNT(*) FROM orders")[0]


def test_join_01_default_join_is_left_in_the_sql(mini: Engine) -> None:
    """JOIN-01: the default join kind is LEFT."""
    sql = mini.compile({"metrics": ["revenue"], "group_by": ["customers.region"]})["sql"]
    assert "LEFT JOIN" in sql.upper()
    assert "INNER JOIN" not in sql.upper()


def test_null_dimension_values_form_their_own_group(shop_run: Run, shop_ref: Any) -> None:
    """NULL channel orders form one NULL group (shop: 285 orders without a channel)."""
    res = shop_run({"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]})
    expected = shop_ref.rows(
        "SELECT channel, SUM(amount), COUNT(order_id) FROM main.orders GROUP BY channel"
    )
    assert_rows_equal(result_rows(res), expected)
    assert by_key(res, "channel")[None]["order_count"] == 285


def test_multi_hop_many_to_one_path(shop_run: Run, shop_ref: Any) -> None:
    """Reference §2.7: order_items -> orders -> customers -> regions joins in one branch."""
    res = shop_run({"metrics": ["line_revenue", "items_sold"], "group_by": ["regions.region_name"]})
    expected = shop_ref.rows(
        """
        SELECT r.region_name, SUM(i.quantity * i.unit_price), SUM(i.quantity)
        FROM main.order_items i
        LEFT JOIN main.orders o ON i.order_id = o.order_id
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN main.regions r ON c.region_id = r.region_id
        GROUP BY 1
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_shop_completed_revenue_by_region_includes_orphans(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 5: LEFT joins keep orphans and NULL-region customers in the NULL group;
    the region without customers has no row."""
    res = shop_run(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["regions.region_name"],
            "where_sql": "orders.status = 'completed'",
            "order_by": [{"key": "revenue", "desc": True}],
        }
    )
    expected = shop_ref.exact(
        """
        SELECT r.region_name, SUM(o.amount), COUNT(o.order_id)
        FROM main.orders o
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        LEFT JOIN main.regions r ON c.region_id = r.region_id
        WHERE o.status = 'completed' GROUP BY 1 ORDER BY 2 DESC
        """
    )
    assert [tuple(r.values()) for r in res["rows"]] == expected
    assert "Middle East" not in [r["region_name"] for r in res["rows"]]
    assert by_key(res, "region_name")[None]["order_count"] == 169


# ------------------------------------------------------------------------------ fan-out


def test_fan_out_risk_one_side_metric_by_many_side_dimension(mini: Engine) -> None:
    """§18 fan_out_risk: revenue (orders) grouped by an order_items field would repeat each
    order once per line, so it is refused and names the metric."""
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["order_items.product"]})
    assert err.code == "fan_out_risk"
    assert err.metrics == ["revenue"]


def test_fan_out_risk_applies_to_counts_too(mini: Engine) -> None:
    """Reference §2.7: COUNT fans out like SUM."""
    err = query_error(mini, {"metrics": ["order_count"], "group_by": ["order_items.product"]})
    assert err.code == "fan_out_risk"


def test_fan_out_risk_for_a_filter_on_the_many_side(mini: Engine) -> None:
    """A where_sql on a many-side field would duplicate rows as well."""
    err = query_error(mini, {"metrics": ["revenue"], "where_sql": "order_items.product = 'A'"})
    assert err.code == "fan_out_risk"


def test_revenue_does_not_double_next_to_an_order_items_metric(
    shop_run: Run, shop_ref: Any
) -> None:
    """Fan-out: revenue next to items_sold (order_items) keeps its own branch, so it equals
    SUM(orders.amount) per group (a joined SUM would be ~2x)."""
    res = shop_run({"metrics": ["revenue", "items_sold"], "group_by": ["customers.segment"]})
    expected = shop_ref.rows(
        """
        WITH o AS (SELECT c.segment k, SUM(o.amount) v FROM main.orders o
                   LEFT JOIN main.customers c ON o.customer_id = c.customer_id GROUP BY 1),
             i AS (SELECT c.segment k, SUM(i.quantity) v FROM main.order_items i
                   LEFT JOIN main.orders o ON i.order_id = o.order_id
                   LEFT JOIN main.customers c ON o.customer_id = c.customer_id GROUP BY 1)
        SELECT o.k, o.v, i.v FROM o FULL JOIN i ON o.k IS NOT DISTINCT FROM i.k
        """
    )
    assert_rows_equal(result_rows(res), expected)
    total = sum(r["revenue"] for r in res["rows"])
    assert total == decimal.Decimal("3125505.68")  # README: the un-doubled revenue, exact


def test_revenue_total_next_to_line_revenue_is_not_doubled(shop_run: Run) -> None:
    """Fan-out invariant from the shop README: revenue == line_revenue in total."""
    res = shop_run({"metrics": ["revenue", "line_revenue", "order_count", "order_line_count"]})
    row = res["rows"][0]
    assert row["revenue"] == decimal.Decimal("3125505.68")  # exact, to the cent
    assert row["line_revenue"] == row["revenue"]
    assert (row["order_count"], row["order_line_count"]) == (3980, 7958)


def test_many_side_metric_by_one_side_dimension_is_fine(mini_run: Run, mini_ref: Any) -> None:
    """The allowed direction: order_items metrics grouped by an orders field."""
    res = mini_run({"metrics": ["units", "line_count"], "group_by": ["orders.status"]})
    expected = mini_ref.rows(
        "SELECT o.status, SUM(i.qty), COUNT(i.line) FROM order_items i "
        "LEFT JOIN orders o ON i.order_id = o.order_id GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


# ------------------------------------------------------------------------------ path errors


def _three(ab: bool = True, bc: bool = True, ac: bool = True) -> str:
    rels = []
    if ab:
        rels.append(rel("a_b", "a", "b", ["b_id"], ["id"]))
    if bc:
        rels.append(rel("b_c", "b", "c", ["c_id"], ["id"]))
    if ac:
        rels.append(rel("a_c", "a", "c", ["c_id"], ["id"]))
    doc = model_doc(
        [
            dataset("a", ["id", "b_id", "c_id", "x"]),
            dataset("b", ["id", "c_id", "name"]),
            dataset("c", ["id", "label"]),
            dataset("d", ["id", "tag"]),
        ],
        rels,
        [metric("total_x", "SUM(a.x)")],
    )
    return to_yaml(doc)


def test_ambiguous_join_path(mini_db: Any) -> None:
    """Issue 2: two distinct many-to-one paths a -> c (direct, and via b) are ambiguous."""
    engine = Engine(model_text=_three())
    err = query_error(engine, {"metrics": ["total_x"], "group_by": ["c.label"]})
    assert err.code == "ambiguous_join_path"
    assert len(err.candidates) == 2


def test_unique_path_is_used_when_there_is_one() -> None:
    """Issue 2: with a single path the dimension resolves (a -> b -> c)."""
    engine = Engine(model_text=_three(ac=False))
    sql = engine.compile({"metrics": ["total_x"], "group_by": ["c.label"]})["sql"]
    assert sql.upper().count("LEFT JOIN") == 2


def test_no_join_path_for_an_unrelated_dataset() -> None:
    """§18 no_join_path: a dataset with no relationship to the metric's dataset."""
    engine = Engine(model_text=_three())
    err = query_error(engine, {"metrics": ["total_x"], "group_by": ["d.tag"]})
    assert err.code == "no_join_path"
    assert err.metrics == ["total_x"]


def test_no_join_path_for_a_filter_on_an_unrelated_dataset() -> None:
    """Reference §2.7: the same error for a where_sql on an unreachable dataset."""
    engine = Engine(model_text=_three())
    err = query_error(engine, {"metrics": ["total_x"], "where_sql": "d.tag = 'x'"})
    assert err.code == "no_join_path"


def test_no_join_path_between_two_facts_without_relationship(shop: Engine) -> None:
    """§18 no_join_path on the shop: events are not linked to orders."""
    err = query_error(shop, {"metrics": ["event_count"], "group_by": ["orders.status"]})
    assert err.code == "no_join_path"
    assert err.metrics == ["event_count"]


@pytest.mark.parametrize(
    ("metric", "fact", "query_part", "other"),
    [
        ("items_sold", "order_items", {"group_by": ["refunds.refund_id"]}, "refunds"),
        ("refund_total", "refunds", {"group_by": ["order_items.product_id"]}, "order_items"),
        ("refund_total", "refunds", {"where_sql": "order_items.product_id = 3"}, "order_items"),
    ],
)
def test_no_join_path_between_sibling_facts(
    shop: Engine, metric: str, fact: str, query_part: dict[str, Any], other: str
) -> None:
    """Issue 8 item 5: two facts hanging off one dimension (order_items -> orders <- refunds)
    share no dataset that reaches both many-to-one, so no join path exists: `no_join_path`
    (was fan_out_risk), naming both datasets, as the reference engine answers."""
    err = query_error(shop, {"metrics": [metric], **query_part})
    assert err.code == "no_join_path"
    assert f"`{fact}`" in err.message and f"`{other}`" in err.message
    assert err.metrics == [metric]


@pytest.mark.parametrize(
    "dim", ["order_items.product_id", "products.category", "refunds.refund_id"]
)
def test_fan_out_risk_when_a_dataset_reaches_both(shop: Engine, dim: str) -> None:
    """A many side of orders (directly, or through the order_items bridge to products) is
    joinable but would repeat order rows: still `fan_out_risk`."""
    err = query_error(shop, {"metrics": ["revenue"], "group_by": [dim]})
    assert err.code == "fan_out_risk"
