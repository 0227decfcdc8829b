"""Differential check on the shop model: every plain (non-window) metric grouped by every
field it reaches many-to-one equals hand-written SQL.

The reference SQL is assembled here from the metric expressions and join edges written out by
hand from examples/shop/model.yaml (LEFT joins, except the INNER order_items -> products edge),
never from the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, result_rows

Run = Callable[..., Any]

# metric -> (fact dataset, aggregate SQL over the dataset aliases)
METRICS: dict[str, tuple[str, str]] = {
    "revenue": ("orders", "SUM(orders.amount)"),
    "order_count": ("orders", "COUNT(orders.order_id)"),
    "customer_count": ("orders", "COUNT(DISTINCT orders.customer_id)"),
    "avg_order_value": (
        "orders",
        "CAST(SUM(orders.amount) AS DOUBLE) / NULLIF(COUNT(orders.order_id), 0)",
    ),
    "net_revenue": ("orders", "SUM(orders.amount) - SUM(orders.discount)"),
    "completed_revenue": (
        "orders",
        "SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
    ),
    "items_sold": ("order_items", "SUM(order_items.quantity)"),
    "line_revenue": ("order_items", "SUM(order_items.quantity * order_items.unit_price)"),
    "order_line_count": ("order_items", "COUNT(*)"),
    "refund_total": ("refunds", "COALESCE(SUM(refunds.refund_amount), 0)"),  # D-FILL 0
    "refund_count": ("refunds", "COUNT(refunds.refund_id)"),
    "event_count": ("events", "COUNT(events.event_id)"),
    "event_value": ("events", "SUM(events.value)"),
    "active_users": ("events", "COUNT(DISTINCT events.user_id)"),
}

# many -> one edges: (from, to, join kind, ON)
EDGES = [
    ("orders", "customers", "LEFT", "orders.customer_id = customers.customer_id"),
    ("customers", "regions", "LEFT", "customers.region_id = regions.region_id"),
    ("order_items", "orders", "LEFT", "order_items.order_id = orders.order_id"),
    ("order_items", "products", "INNER", "order_items.product_id = products.product_id"),
    ("refunds", "orders", "LEFT", "refunds.order_id = orders.order_id"),
]

FIELDS = {
    "orders": ["order_id", "customer_id", "order_date", "status", "channel", "amount", "discount"],
    "order_items": ["order_id", "line_no", "product_id", "quantity", "unit_price"],
    "refunds": ["refund_id", "order_id", "refund_date", "refund_amount"],
    "events": ["event_id", "user_id", "event_ts", "event_type", "value"],
    "customers": ["customer_id", "customer_name", "region_id", "segment", "signup_date"],
    "regions": ["region_id", "region_name", "country"],
    "products": ["product_id", "product_name", "category", "unit_cost"],
}


def path(src: str, dst: str) -> list[tuple[str, str, str, str]]:
    """The (unique, in the shop) many-to-one edge path from src to dst."""
    if src == dst:
        return []
    for e in EDGES:
        if e[0] == src:
            rest = path(e[1], dst) if e[1] != dst else []
            if e[1] == dst or rest:
                return [e, *rest]
    return []


def reachable(src: str) -> list[str]:
    return [d for d in FIELDS if d == src or path(src, d)]


def reference_sql(metric: str, dim_dataset: str, dim_field: str) -> str:
    fact, agg = METRICS[metric]
    joins = " ".join(
        f"{kind} JOIN main.{to} AS {to} ON {on}" for _, to, kind, on in path(fact, dim_dataset)
    )
    return (
        f"SELECT {dim_dataset}.{dim_field}, {agg} FROM main.{fact} AS {fact} {joins} "
        f"GROUP BY {dim_dataset}.{dim_field}"
    )


CASES = [(m, d, f) for m, (fact, _) in METRICS.items() for d in reachable(fact) for f in FIELDS[d]]


@pytest.mark.parametrize(("metric", "dim_dataset", "dim_field"), CASES)
def test_metric_by_every_reachable_field_matches_sql(
    shop_run: Run, shop_ref: Any, metric: str, dim_dataset: str, dim_field: str
) -> None:
    """Issue 2: grouped results equal hand-written SQL (joins, NULL groups, fan-out safety)."""
    res = shop_run({"metrics": [metric], "group_by": [f"{dim_dataset}.{dim_field}"]})
    assert res["columns"] == [dim_field, metric]
    assert_rows_equal(
        result_rows(res), shop_ref.rows(reference_sql(metric, dim_dataset, dim_field))
    )


def test_cases_cover_joined_datasets() -> None:
    """The case list is not trivially the fact datasets only."""
    assert ("line_revenue", "regions", "region_name") in CASES
    assert ("refund_count", "customers", "segment") in CASES
    assert len(CASES) > 150


TIME_AXIS = {"orders": "order_date", "refunds": "refund_date", "events": "event_ts"}
TIME_CASES = [
    (m, g)
    for m, (fact, _) in METRICS.items()
    if fact in TIME_AXIS
    for g in ("day", "week", "month", "quarter", "year")
]


@pytest.mark.parametrize(("metric", "grain"), TIME_CASES)
def test_metric_by_metric_time_grain_and_a_dimension_matches_sql(
    shop_run: Run, shop_ref: Any, metric: str, grain: str
) -> None:
    """CORE-Q-03/05: metric_time at every grain, next to a joined or own dimension, equals
    DATE_TRUNC over the metric's primary time (COUNT DISTINCT and ratios included)."""
    fact, agg = METRICS[metric]
    dim_ds, dim_f = ("customers", "segment") if fact != "events" else ("events", "event_type")
    axis = f"{fact}.{TIME_AXIS[fact]}"
    # bucket values keep their type: a DATE axis gives DATE buckets, a TIMESTAMP axis timestamps
    bucket_type = "TIMESTAMP" if fact == "events" else "DATE"
    joins = " ".join(
        f"{kind} JOIN main.{to} AS {to} ON {on}" for _, to, kind, on in path(fact, dim_ds)
    )
    expected = shop_ref.rows(
        f"SELECT {dim_ds}.{dim_f}, CAST(DATE_TRUNC('{grain}', {axis}) AS {bucket_type}), {agg} "
        f"FROM main.{fact} AS {fact} {joins} GROUP BY 1, 2"
    )
    res = shop_run({"metrics": [metric], "group_by": [f"{dim_ds}.{dim_f}", f"metric_time:{grain}"]})
    assert res["columns"] == [dim_f, f"metric_time__{grain}", metric]
    assert_rows_equal(result_rows(res), expected)


PURE_COUNTS = {
    "order_count",
    "customer_count",
    "order_line_count",
    "refund_count",
    "event_count",
    "active_users",
}
FILLED = PURE_COUNTS | {"refund_total"}  # S-FAN-6 zero, and refund_total's D-FILL 0
PAIR_CASES = [
    (a, b, dim)
    for a in ("revenue", "customer_count", "avg_order_value")
    for b in ("items_sold", "order_line_count", "refund_total", "refund_count")
    for dim in ("customers.segment", "orders.channel", "regions.region_name")
]


def _branch_sql(metric: str, dim: str) -> str:
    fact, agg = METRICS[metric]
    dim_ds = dim.split(".")[0]
    joins = " ".join(
        f"{kind} JOIN main.{to} AS {to} ON {on}" for _, to, kind, on in path(fact, dim_ds)
    )
    agg = agg.replace("COALESCE(SUM(refunds.refund_amount), 0)", "SUM(refunds.refund_amount)")
    return f"SELECT {dim} AS k, {agg} AS v FROM main.{fact} AS {fact} {joins} GROUP BY 1"


@pytest.mark.parametrize(("a", "b", "dim"), PAIR_CASES)
def test_two_fact_merge_matches_sql(shop_run: Run, shop_ref: Any, a: str, b: str, dim: str) -> None:
    """CORE-FAN-01/02/05: two metrics of different facts merge NULL-safely on the group key;
    groups missing from one side read 0 for pure counts (and D-FILL), NULL otherwise."""

    def side(m: str, alias: str) -> str:
        return f"COALESCE({alias}.v, 0)" if m in FILLED else f"{alias}.v"

    expected = shop_ref.rows(
        f"WITH x AS ({_branch_sql(a, dim)}), y AS ({_branch_sql(b, dim)}) "
        f"SELECT COALESCE(x.k, y.k), {side(a, 'x')}, {side(b, 'y')} "
        "FROM x FULL JOIN y ON x.k IS NOT DISTINCT FROM y.k"
    )
    res = shop_run({"metrics": [a, b], "group_by": [dim]})
    assert_rows_equal(result_rows(res), expected)
