"""Portability of plain (non-window) queries: the `dialect="postgres"` SQL run on PostgreSQL
returns the rows `engine.execute` returns on DuckDB.

Covers aggregates by dimensions and every grain (CORE-Q-02/03, CORE-Q-05), `where_sql`
(CORE-Q-08/09), `time_range` (CORE-Q-06/07), `order_by` + `limit` (CORE-Q-13/14), joins
through two and three hops (D-JOIN inner and default LEFT), multi-dataset merges with NULL
groups and fills (CORE-FAN-01..06, FILL-05) and ratio / expression metrics with zero
denominators (CORE-FAN-03, CORE-FAN-06).
"""

from __future__ import annotations

from typing import Any

import pytest
from portkit import Portability

GRAINS = ("day", "week", "month", "quarter", "year")


def q(metrics: list[str], group_by: list[Any] | None = None, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"metrics": metrics}
    if group_by:
        out["group_by"] = group_by
    out.update(kw)
    return out


def desc(key: str) -> dict[str, Any]:
    return {"key": key, "desc": True}


def asc(key: str) -> dict[str, Any]:
    return {"key": key, "desc": False}


# ------------------------------------------------ examples/shop/README.md examples

README = {
    "1-channel": q(["revenue", "order_count"], ["orders.channel"], order_by=[desc("revenue")]),
    "2-monthly-2024": q(
        ["revenue", "order_count", "avg_order_value"],
        ["metric_time:month"],
        time_range={"start": "2024-01-01", "end": "2025-01-01"},
    ),
    "5-region-completed": q(
        ["revenue", "order_count"],
        ["regions.region_name"],
        where_sql="orders.status = 'completed'",
        order_by=[desc("revenue")],
    ),
    "6-categories": q(
        ["line_revenue", "items_sold", "order_line_count"],
        ["products.category"],
        order_by=[desc("line_revenue")],
    ),
    "7-two-facts": q(
        ["revenue", "refund_total", "refund_count"],
        ["metric_time:month"],
        time_range={"start": "2024-01-01", "end": "2024-12-01"},
    ),
    "10-clickstream": q(
        ["event_count", "active_users", "event_value"],
        ["metric_time:day"],
        time_range={"start": "2025-11-24", "end": "2025-12-01"},
    ),
}


@pytest.mark.parametrize("query", list(README.values()), ids=list(README))
def test_readme_examples(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)


def test_readme_reference_values_on_postgres(port: Portability) -> None:
    """The shop README's reference answers hold on PostgreSQL itself (not only 'as DuckDB')."""
    rows = {r["channel"]: r for r in port.on_postgres(README["1-channel"])}
    assert float(rows["web"]["revenue"]) == pytest.approx(1_622_086.96)
    assert rows[None]["order_count"] == 285
    months = port.on_postgres(README["7-two-facts"])
    feb = next(r for r in months if r["metric_time__month"].startswith("2024-02-01"))
    oct_ = next(r for r in months if r["metric_time__month"].startswith("2024-10-01"))
    assert feb["revenue"] is None and float(feb["refund_total"]) == pytest.approx(6_485.65)
    assert oct_["refund_total"] == 0 and oct_["refund_count"] == 0


# ------------------------------------------------------------------------------ grains


@pytest.mark.parametrize("grain", GRAINS)
@pytest.mark.parametrize(
    ("metrics", "axis"),
    [
        (["revenue", "order_count", "customer_count"], "metric_time"),
        (["revenue", "net_revenue"], "orders.order_date"),
        (["event_count", "active_users", "event_value"], "metric_time"),
        (["event_count"], "events.event_ts"),
        (["refund_total", "refund_count"], "metric_time"),
        (["items_sold", "line_revenue"], "orders.order_date"),
    ],
    ids=["orders", "order_date", "events", "event_ts", "refunds", "items-by-order-date"],
)
def test_grains(port: Portability, metrics: list[str], axis: str, grain: str) -> None:
    port.check(q(metrics, [f"{axis}:{grain}"]))


@pytest.mark.parametrize("grain", GRAINS)
def test_grain_with_dimension_and_range(port: Portability, grain: str) -> None:
    port.check(
        q(
            ["revenue", "order_count"],
            [f"metric_time:{grain}", "orders.channel"],
            time_range={"start": "2024-02-15", "end": "2025-08-10"},
        )
    )


def test_ungrained_time_dimension(port: Portability) -> None:
    """A time field without a grain groups by its raw value (D-GRAIN day on order_date)."""
    port.check(
        q(
            ["revenue"],
            ["orders.order_date"],
            time_range={"start": "2025-03-01", "end": "2025-04-01"},
        )
    )
    port.check(
        q(
            ["event_count"],
            ["events.event_ts"],
            time_range={"start": "2025-11-28", "end": "2025-11-29"},
        )
    )


def test_total_without_group_by(port: Portability) -> None:
    port.check(q(["revenue", "order_count", "customer_count", "avg_order_value", "net_revenue"]))


# ------------------------------------------------------------------------------ where_sql

WHERES = {
    "status": ("orders.status = 'completed'", ["orders.channel"]),
    "null-channel": ("orders.channel IS NULL", ["customers.segment"]),
    "and-in": ("orders.amount > 100 AND orders.channel IN ('web', 'mobile')", ["orders.status"]),
    "or-not": (
        "NOT (orders.status = 'cancelled') OR orders.channel IS NULL",
        ["orders.channel"],
    ),
    "two-hops": ("regions.country = 'US'", ["customers.segment"]),
    "date-literal": ("orders.order_date >= DATE '2025-06-01'", ["metric_time:month"]),
    "date-string": ("orders.order_date BETWEEN '2024-01-01' AND '2024-03-31'", ["orders.status"]),
    "extract": ("EXTRACT(MONTH FROM orders.order_date) = 12", ["metric_time:year"]),
    "like": ("customers.customer_name LIKE 'A%'", ["regions.region_name"]),
    "coalesce": ("COALESCE(orders.channel, 'unknown') = 'unknown'", ["metric_time:quarter"]),
    "case": (
        "CASE WHEN orders.discount > 0 THEN 'discounted' ELSE 'full' END = 'discounted'",
        ["orders.channel"],
    ),
    "arithmetic": ("orders.amount - orders.discount >= 250.5", ["orders.channel"]),
    "integer-division": ("orders.order_id / 2 > 1000", ["orders.channel"]),
    "modulo": ("orders.order_id % 7 = 3", ["orders.channel"]),
    "cast": ("CAST(orders.amount AS INTEGER) = 120", ["orders.status"]),
    "concat": ("customers.segment || '-' || orders.status = 'consumer-returned'", []),
    "substring": ("SUBSTRING(customers.customer_name, 1, 1) = 'B'", ["customers.segment"]),
    "lower-upper": ("UPPER(orders.channel) = 'WEB' OR LOWER(orders.status) = 'returned'", []),
    "is-distinct": ("customers.segment IS DISTINCT FROM 'consumer'", ["customers.segment"]),
}


@pytest.mark.parametrize(("where", "group_by"), list(WHERES.values()), ids=list(WHERES))
def test_where_sql(port: Portability, where: str, group_by: list[str]) -> None:
    port.check(q(["revenue", "order_count", "customer_count"], group_by, where_sql=where))


@pytest.mark.parametrize(
    ("metrics", "where", "group_by"),
    [
        (["event_count", "active_users"], "events.event_type = 'purchase'", ["metric_time:month"]),
        (["event_count"], "events.value > 50.25", ["events.event_type"]),
        (
            ["event_count"],
            "events.event_ts >= TIMESTAMP '2025-11-28 12:00:00'",
            ["metric_time:day"],
        ),
        (["line_revenue", "items_sold"], "products.category <> 'toys'", ["customers.segment"]),
        (["refund_total", "refund_count"], "orders.channel = 'web'", ["metric_time:quarter"]),
    ],
    ids=["events", "events-float", "events-ts", "items-products", "refunds-orders"],
)
def test_where_sql_other_datasets(
    port: Portability, metrics: list[str], where: str, group_by: list[str]
) -> None:
    port.check(q(metrics, group_by, where_sql=where))


METRIC_FILTERS = {
    "having": q(["revenue"], ["orders.channel"], where_sql="revenue > 500000"),
    "having-and-row": q(
        ["revenue", "order_count"],
        ["customers.segment"],
        where_sql="revenue / order_count > 700 AND orders.status = 'completed'",
    ),
    "hidden-metric": q(["order_count"], ["metric_time:quarter"], where_sql="revenue > 250000"),
    "merged-branches": q(
        ["revenue"],
        ["metric_time:month"],
        where_sql="refund_total > 5000 OR revenue IS NULL",
        order_by=[desc("revenue")],
        limit=10,
    ),
    "window-after-trim": q(
        ["revenue", "revenue_ytd"],
        ["metric_time:month"],
        time_range={"start": "2024-03-01", "end": "2025-01-01"},
        where_sql="revenue_ytd > 600000",
    ),
    "hidden-offset": q(
        ["order_count"],
        ["metric_time:month"],
        time_range={"start": "2024-06-01", "end": "2025-01-01"},
        where_sql="revenue_mom > 0",
    ),
}


@pytest.mark.parametrize("query", list(METRIC_FILTERS.values()), ids=list(METRIC_FILTERS))
def test_metric_filters(port: Portability, query: dict[str, Any]) -> None:
    """Issue 8 item 4: where_sql conjuncts naming a metric filter the result rows the same way
    on PostgreSQL (result_rows CTE after the merge / window stage)."""
    port.check(query)


# ------------------------------------------------------------------------------ time_range

RANGES = {
    "both": {"start": "2024-03-15", "end": "2024-09-01"},
    "start-only": {"start": "2025-10-01"},
    "end-only": {"end": "2023-03-01"},
    "named-dimension": {
        "start": "2024-01-01",
        "end": "2024-04-01",
        "dimension": "orders.order_date",
    },
}
ORDER_RANGE_QUERIES = {
    "orders-by-day": (["revenue", "order_count"], ["metric_time:day"]),
    "merge-by-segment": (["revenue", "refund_total"], ["customers.segment"]),
}


@pytest.mark.parametrize("time_range", list(RANGES.values()), ids=list(RANGES))
@pytest.mark.parametrize(
    ("metrics", "group_by"), list(ORDER_RANGE_QUERIES.values()), ids=list(ORDER_RANGE_QUERIES)
)
def test_time_range(
    port: Portability, metrics: list[str], group_by: list[str], time_range: dict[str, str]
) -> None:
    port.check(q(metrics, group_by, time_range=time_range))


@pytest.mark.parametrize(
    "time_range",
    [
        {"start": "2025-11-28T12:00:00", "end": "2025-11-28T12:30:00"},
        {"start": "2025-03-10T09:59:59", "end": "2025-03-10T10:00:01"},
        {"start": "2025-11-28", "end": "2025-11-29T00:00:00"},
        {"start": "2025-12-30T23:00:00"},
    ],
    ids=["half-hour", "around-the-hour", "date-and-timestamp", "start-only"],
)
def test_time_range_timestamps(port: Portability, time_range: dict[str, str]) -> None:
    port.check(
        q(
            ["event_count", "active_users", "event_value"],
            ["events.event_type"],
            time_range=time_range,
        )
    )


def test_time_range_without_rows(port: Portability) -> None:
    """2025-07 has no orders: both engines return no rows."""
    query = q(
        ["revenue"], ["metric_time:day"], time_range={"start": "2025-07-01", "end": "2025-08-01"}
    )
    assert port.check(query, min_rows=0) == []


def test_time_range_on_a_dataset_without_primary_time(port: Portability) -> None:
    """order_items has no time of its own: the range names orders.order_date (two datasets)."""
    port.check(
        q(
            ["items_sold", "line_revenue", "revenue"],
            ["customers.segment"],
            time_range={
                "start": "2025-02-01",
                "end": "2025-05-01",
                "dimension": "orders.order_date",
            },
        )
    )


def test_time_range_and_where(port: Portability) -> None:
    port.check(
        q(
            ["revenue", "refund_total", "refund_count"],
            ["regions.region_name", "metric_time:month"],
            where_sql="customers.segment = 'corporate'",
            time_range={"start": "2024-11-01", "end": "2025-03-01"},
        )
    )


# ------------------------------------------------------------------------------ order_by / limit

ORDERS = {
    "metric-desc-limit": q(
        ["revenue"], ["customers.customer_name"], order_by=[desc("revenue")], limit=7
    ),
    "metric-asc-limit": q(
        ["order_count", "revenue"],
        ["customers.customer_id"],
        order_by=[asc("order_count"), desc("revenue")],
        limit=10,
    ),
    "dimension-asc-nulls": q(["revenue"], ["customers.segment"], order_by=[asc("segment")]),
    "time-desc-limit": q(
        ["revenue", "order_count"],
        ["metric_time:month"],
        order_by=[desc("metric_time:month")],
        limit=5,
    ),
    "two-keys": q(
        ["revenue"],
        ["orders.status", "orders.channel"],
        order_by=[asc("status"), desc("revenue")],
    ),
    "limit-zero": q(["revenue"], ["orders.channel"], limit=0),
    "limit-no-order": q(["revenue"], ["orders.order_date"], limit=4),
    "ratio-desc": q(
        ["avg_order_value"],
        ["regions.region_name"],
        order_by=[desc("avg_order_value")],
        limit=3,
    ),
    "merged-desc": q(
        ["revenue", "refund_total"],
        ["metric_time:month"],
        order_by=[desc("refund_total")],
        limit=6,
    ),
}


@pytest.mark.parametrize("query", list(ORDERS.values()), ids=list(ORDERS))
def test_order_by_limit(port: Portability, query: dict[str, Any]) -> None:
    port.check(query, min_rows=0 if query.get("limit") == 0 else 1)


def test_descending_order_puts_nulls_last_everywhere(port: Portability) -> None:
    """Query `order_by` sorts NULLs last in both directions on every dialect unless the key
    says `nulls`, so a limit keeps the same rows on PostgreSQL (whose DESC default is NULLS
    FIRST) and DuckDB."""
    query = q(["revenue"], ["orders.channel"], order_by=[desc("channel")])
    port.check(query)
    pg = [r["channel"] for r in port.on_postgres(query)]
    duck = [r["channel"] for r in port.on_duckdb(query)[1]]
    assert pg == duck == ["web", "store", "mobile", None]
    first = q(["revenue"], ["orders.channel"], order_by=[{**desc("channel"), "nulls": "first"}])
    port.check(first)
    assert [r["channel"] for r in port.on_postgres(first)] == [None, "web", "store", "mobile"]


# ------------------------------------------------------------------------------ joins

JOINS = {
    "one-hop": q(["revenue", "customer_count"], ["customers.segment"]),
    "two-hops": q(["revenue", "order_count"], ["regions.region_name", "regions.country"]),
    "two-hops-and-fact": q(["revenue"], ["regions.country", "orders.channel"]),
    "items-inner-products": q(
        ["line_revenue", "items_sold"], ["products.category", "products.product_name"]
    ),
    "items-two-hops": q(["line_revenue", "order_line_count"], ["customers.segment"]),
    "items-three-hops": q(["items_sold"], ["regions.region_name", "products.category"]),
    "refunds-three-hops": q(["refund_total", "refund_count"], ["regions.region_name"]),
    "customer-attribute-time": q(["revenue"], ["customers.signup_date"]),
    "dimension-only-orphans": q(["order_count"], ["customers.customer_name"]),
}


@pytest.mark.parametrize("query", list(JOINS.values()), ids=list(JOINS))
def test_joins(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)


# ------------------------------------------------------------------------------ merges

MERGES = {
    "segment": q(["revenue", "refund_total"], ["customers.segment"]),
    "month": q(["revenue", "refund_total", "refund_count"], ["metric_time:month"]),
    "month-and-segment": q(
        ["revenue", "refund_total", "refund_count"], ["metric_time:month", "customers.segment"]
    ),
    "region": q(["revenue", "order_count", "refund_total"], ["regions.region_name"]),
    "channel-null": q(["order_count", "refund_count", "refund_total"], ["orders.channel"]),
    "orders-items": q(["revenue", "items_sold", "line_revenue"], ["customers.segment"]),
    "orders-events-by-day": q(
        ["revenue", "event_count", "active_users"],
        ["metric_time:day"],
        time_range={"start": "2025-06-25", "end": "2025-08-05"},
    ),
    "three-facts-by-week": q(
        ["order_count", "refund_count", "event_count"],
        ["metric_time:week"],
        time_range={"start": "2025-01-01", "end": "2025-04-01"},
    ),
    "ratio-and-fill": q(
        ["avg_order_value", "refund_total", "refund_count", "net_revenue"],
        ["metric_time:quarter", "orders.status"],
    ),
    "where": q(
        ["revenue", "refund_total"],
        ["customers.segment"],
        where_sql="orders.channel = 'web' OR orders.channel IS NULL",
    ),
    "order-limit": q(
        ["revenue", "refund_total"],
        ["customers.segment", "metric_time:year"],
        order_by=[desc("refund_total")],
        limit=5,
    ),
}


@pytest.mark.parametrize("query", list(MERGES.values()), ids=list(MERGES))
def test_merges(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)


def test_merge_null_groups_survive(port: Portability) -> None:
    """The NULL segment group merges NULL-safely: one row, both sides filled (CORE-FAN-02)."""
    rows = port.on_postgres(MERGES["segment"])
    nulls = [r for r in rows if r["segment"] is None]
    assert len(nulls) == 1 and nulls[0]["revenue"] is not None
    assert nulls[0]["refund_total"] is not None
    months = port.on_postgres(MERGES["month"])
    gap = [r for r in months if r["metric_time__month"].startswith(("2024-02-01", "2025-07-01"))]
    assert len(gap) == 2 and all(r["revenue"] is None and r["refund_count"] > 0 for r in gap)


# ------------------------------------------------------------------------------ ratios


@pytest.mark.parametrize(
    ("metrics", "group_by"),
    [
        (["avg_order_value", "net_revenue", "completed_revenue"], ["orders.channel"]),
        (["avg_order_value", "net_revenue", "completed_revenue"], ["metric_time:month"]),
        (["amount_per_discount", "discount_share"], ["metric_time:day"]),
        (["amount_per_discount", "discount_share"], ["orders.status", "orders.channel"]),
        (["cancel_share", "avg_discount"], ["customers.segment"]),
        (["cancel_share"], ["metric_time:week"]),
        (["items_per_line", "items_sold"], ["products.category"]),
        (["refund_rate", "revenue", "refund_total"], ["metric_time:month"]),
        (["refund_rate"], ["customers.segment"]),
        (["max_order", "zero_discount_orders", "avg_discount"], ["orders.channel"]),
        (["min_event_value"], ["events.event_type"]),
    ],
    ids=[
        "readme-ratios-channel",
        "readme-ratios-month",
        "zero-denominator-day",
        "zero-denominator-status",
        "int-over-int",
        "int-over-int-week",
        "items",
        "cross-dataset-month",
        "cross-dataset-segment",
        "max-filtered-count",
        "min",
    ],
)
def test_ratios(port_ext: Portability, metrics: list[str], group_by: list[str]) -> None:
    port_ext.check(q(metrics, group_by))


def test_division_by_zero_is_null_on_both(port_ext: Portability) -> None:
    """Groups whose discounts sum to 0 give NULL (not an error, not infinity) on both engines."""
    query = q(["amount_per_discount"], ["metric_time:day"])
    duck = port_ext.check(query)
    assert any(r["amount_per_discount"] is None for r in duck), "no zero denominator was hit"
    pg = port_ext.on_postgres(query)
    assert sum(r["amount_per_discount"] is None for r in pg) == sum(
        r["amount_per_discount"] is None for r in duck
    )


def test_integer_ratio_is_not_truncated(port_ext: Portability) -> None:
    """COUNT / COUNT divides as non-integer on PostgreSQL too (CORE-FAN-03)."""
    rows = port_ext.on_postgres(q(["cancel_share"], ["orders.channel"]))
    assert all(0 < float(r["cancel_share"]) < 1 for r in rows)
