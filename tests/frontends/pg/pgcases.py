"""SQL a BI tool sends over the semantic table, each with the dosi query it means: every
client test answers the SQL and compares it, value by value, with `Engine.execute` of the
query (projected onto the select list)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from enginekit import norm, same


@dataclass(frozen=True)
class Case:
    sql: str
    query: dict[str, Any]
    columns: tuple[str, ...]  # the dosi output columns, in the select list's order
    params: tuple[Any, ...] = ()
    ordered: bool = False
    offset: int = 0
    names: tuple[str, ...] = field(default=())  # the SQL column names, when checked


CASES: tuple[Case, ...] = (
    Case(
        "SELECT orders__channel, SUM(revenue) AS revenue FROM shop GROUP BY orders__channel "
        "ORDER BY revenue DESC LIMIT 10",
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "revenue", "desc": True}],
            "limit": 10,
        },
        ("channel", "revenue"),
        ordered=True,
        names=("orders__channel", "revenue"),
    ),
    Case(
        "SELECT metric_time__month, MEASURE(revenue), MEASURE(order_count), "
        "MEASURE(avg_order_value) FROM public.shop WHERE metric_time >= '2024-01-01' AND "
        "metric_time < '2025-01-01' GROUP BY 1 ORDER BY 1",
        {
            "metrics": ["revenue", "order_count", "avg_order_value"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
            "order_by": [{"key": "metric_time:month"}],
        },
        ("metric_time__month", "revenue", "order_count", "avg_order_value"),
        ordered=True,
    ),
    Case(
        'SELECT "shop"."customers__segment" AS "customers__segment", '
        'COUNT(DISTINCT "shop"."customer_count") AS "count" FROM "public"."shop" '
        '"shop" WHERE "shop"."orders__status" = \'completed\' GROUP BY 1',
        {
            "metrics": ["customer_count"],
            "group_by": ["customers.segment"],
            "where_sql": "orders.status = 'completed'",
        },
        ("segment", "customer_count"),
    ),
    Case(
        "SELECT DATE_TRUNC('quarter', metric_time) AS q, revenue, MEASURE(revenue_yoy) FROM shop "
        "WHERE metric_time BETWEEN '2024-01-01' AND '2024-12-31' GROUP BY 1",
        {
            "metrics": ["revenue", "revenue_yoy"],
            "group_by": ["metric_time:quarter"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
        ("metric_time__quarter", "revenue", "revenue_yoy"),
    ),
    Case(
        "SELECT regions__region_name, MEASURE(revenue) FROM shop WHERE orders__channel IN "
        "('web', 'mobile') GROUP BY 1 HAVING SUM(revenue) > 100000 ORDER BY 2 DESC",
        {
            "metrics": ["revenue"],
            "group_by": ["regions.region_name"],
            "where_sql": "orders.channel IN ('web', 'mobile') AND revenue > 100000",
            "order_by": [{"key": "revenue", "desc": True}],
        },
        ("region_name", "revenue"),
        ordered=True,
    ),
    Case(
        "SELECT orders__channel, MEASURE(order_count) FROM shop WHERE orders__status = $1 "
        "GROUP BY 1 ORDER BY 2 DESC LIMIT $2",
        {
            "metrics": ["order_count"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.status = 'returned'",
            "order_by": [{"key": "order_count", "desc": True}],
            "limit": 2,
        },
        ("channel", "order_count"),
        params=("returned", 2),
        ordered=True,
    ),
    Case(
        "SELECT products__category, MEASURE(items_sold), MEASURE(line_revenue) FROM shop "
        "GROUP BY products__category ORDER BY products__category LIMIT 3 OFFSET 1",
        {
            "metrics": ["items_sold", "line_revenue"],
            "group_by": ["products.category"],
            "order_by": [{"key": "products.category"}],
            "limit": 4,
        },
        ("category", "items_sold", "line_revenue"),
        ordered=True,
        offset=1,
    ),
    Case(
        "SELECT events__event_type, MEASURE(event_count), MEASURE(event_value) FROM shop "
        "WHERE events__event_ts >= '2025-03-01' AND events__event_ts < '2025-06-01' GROUP BY 1",
        {
            "metrics": ["event_count", "event_value"],
            "group_by": ["events.event_type"],
            "time_range": {
                "start": "2025-03-01",
                "end": "2025-06-01",
                "dimension": "events.event_ts",
            },
        },
        ("event_type", "event_count", "event_value"),
    ),
    Case(
        "SELECT MEASURE(revenue), MEASURE(refund_total), MEASURE(revenue_net_of_refunds) FROM shop",
        {"metrics": ["revenue", "refund_total", "revenue_net_of_refunds"]},
        ("revenue", "refund_total", "revenue_net_of_refunds"),
    ),
)


def expected_rows(api: Any, case: Case) -> list[tuple[Any, ...]]:
    rows = api.execute(case.query)["rows"][case.offset :]
    return [tuple(r[c] for c in case.columns) for r in rows]


def assert_same(
    actual: list[tuple[Any, ...]], expected: list[tuple[Any, ...]], ordered: bool
) -> None:
    act = [tuple(norm(v) for v in r) for r in actual]
    exp = [tuple(norm(v) for v in r) for r in expected]
    if not ordered:
        act.sort(key=repr)
        exp.sort(key=repr)
    assert len(act) == len(exp), (act, exp)
    for a, e in zip(act, exp, strict=True):
        assert len(a) == len(e) and all(same(x, y) for x, y in zip(a, e, strict=True)), (a, e)
