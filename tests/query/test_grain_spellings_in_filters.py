"""Grain spellings inside filters (issue 21 item 3): `dataset.field__grain` and
`dataset.field:grain` are accepted in where_sql and context_filter, as `metric_time:month` is,
and compare the field's value truncated to the grain; a near miss keeps the grain in its
candidates; a grain on a non-time field, an unknown grain and a bare grained field are
structured errors. Expected values come from hand-written SQL over the mini shop.

Requirement IDs: CORE-Q-02 (grain spellings), CORE-Q-10 (context layer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import norm, result_rows

from dosi.engine import Engine
from dosi.errors import QueryError

Run = Callable[[dict[str, Any]], Any]


def rows(res: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [tuple(map(norm, r)) for r in result_rows(res)]


def ref(mini_ref: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(map(norm, r)) for r in mini_ref.exact(sql)]


MONTH = "CAST(date_trunc('month', order_date) AS DATE)"


@pytest.mark.parametrize("key", ["where_sql", "context_filter"])
@pytest.mark.parametrize(
    ("where", "hand"),
    [
        # Jan 31 is in January: the truncated value, not the raw date, is compared
        ("orders.order_date__month >= '2024-02-01'", f"{MONTH} >= DATE '2024-02-01'"),
        ("orders.order_date:month >= '2024-02-01'", f"{MONTH} >= DATE '2024-02-01'"),
        ("orders.order_date:month = '2024-01-01'", f"{MONTH} = DATE '2024-01-01'"),
        ("order_date__month > '2024-01-01'", f"{MONTH} > DATE '2024-01-01'"),
        (
            "orders.order_date__month IN ('2024-01-01', '2024-03-01')",
            f"{MONTH} IN (DATE '2024-01-01', DATE '2024-03-01')",
        ),
        (
            "orders.order_date__quarter BETWEEN '2024-01-01' AND '2024-01-01'",
            "date_trunc('quarter', order_date) = DATE '2024-01-01'",
        ),
        (
            "orders.order_date__year = '2024-01-01' AND metric_time__month = '2024-03-01'",
            f"year(order_date) = 2024 AND {MONTH} = DATE '2024-03-01'",
        ),
        ("orders.order_date:month >= DATE '2024-03-01'", f"{MONTH} >= DATE '2024-03-01'"),
    ],
)
def test_a_grained_field_filters_the_truncated_value(
    mini_run: Run, mini_ref: Any, key: str, where: str, hand: str
) -> None:
    res = mini_run({"metrics": ["revenue", "order_count"], key: where})
    assert rows(res) == ref(
        mini_ref, f"SELECT SUM(amount), COUNT(order_id) FROM orders WHERE {hand}"
    )


def test_grained_filter_across_a_join_and_grouped(mini_run: Run, mini_ref: Any) -> None:
    """The filter reaches through the join path like the field it names (units fan out from
    order_items to orders)."""
    res = mini_run(
        {
            "metrics": ["revenue", "units"],
            "group_by": ["customers.region"],
            "where_sql": "orders.order_date__month = '2024-01-01'",
            "order_by": ["region"],
        }
    )
    want = ref(
        mini_ref,
        "SELECT c.region, SUM(o.amount), SUM(u.q) FROM orders o "
        "JOIN customers c ON o.customer_id = c.id "
        "LEFT JOIN (SELECT order_id, SUM(qty) AS q FROM order_items GROUP BY 1) u "
        "ON u.order_id = o.order_id "
        f"WHERE {MONTH.replace('order_date', 'o.order_date')} = DATE '2024-01-01' "
        "GROUP BY 1 ORDER BY 1 NULLS LAST",
    )
    assert rows(res) == want


def test_grouped_and_filtered_by_the_same_spelling(mini_run: Run, mini_ref: Any) -> None:
    res = mini_run(
        {
            "metrics": ["refund_total"],
            "group_by": ["refunds.refund_date__month"],
            "where_sql": "refunds.refund_date__month >= '2024-05-01'",
        }
    )
    assert res["columns"] == ["refund_date__month", "refund_total"]
    assert rows(res) == ref(
        mini_ref,
        "SELECT CAST(date_trunc('month', refund_date) AS DATE), SUM(refund_amount) FROM refunds "
        "WHERE date_trunc('month', refund_date) >= DATE '2024-05-01' GROUP BY 1 ORDER BY 1",
    )


def test_dimension_only_query_filters_on_a_grained_field(mini_run: Run, mini_ref: Any) -> None:
    res = mini_run(
        {
            "metrics": [],
            "group_by": ["orders.channel"],
            "where_sql": "orders.order_date:month = '2024-04-01'",
            "order_by": ["channel"],
        }
    )
    assert rows(res) == ref(
        mini_ref,
        f"SELECT DISTINCT channel FROM orders WHERE {MONTH} = DATE '2024-04-01' "
        "ORDER BY 1 NULLS LAST",
    )


def test_a_string_literal_and_a_cast_are_not_grain_spellings(mini_run: Run, mini_ref: Any) -> None:
    res = mini_run(
        {
            "metrics": ["order_count"],
            "where_sql": "orders.status <> 'orders.order_date:month' "
            "AND orders.order_date::DATE >= '2024-02-01'",
        }
    )
    assert rows(res) == ref(
        mini_ref, "SELECT COUNT(*) FROM orders WHERE order_date >= DATE '2024-02-01'"
    )


@pytest.mark.parametrize("key", ["where_sql", "context_filter"])
def test_a_near_miss_keeps_the_grain(mini: Engine, key: str) -> None:
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["revenue"], key: "orders.order_dat__month >= '2024-02-01'"})
    err = info.value
    # where_sql names the field; context_filter reports it as the reference does
    assert err.code == ("unknown_field" if key == "where_sql" else "unsupported_filter")
    assert err.candidates[0] == "orders.order_date__month"


@pytest.mark.parametrize(
    ("where", "code"),
    [
        ("orders.order_date__mnth >= '2024-02-01'", "unknown_grain"),
        ("orders.status__month = '2024-01-01'", "grain_on_non_time_dimension"),
        ("orders.ship_date:month = '2024-01-01'", "grain_on_non_time_dimension"),
        ("orders.order_date__month", "unsupported_filter"),
        ("NOT orders.order_date:month", "unsupported_filter"),
    ],
)
def test_grained_filter_mistakes_are_structured(mini: Engine, where: str, code: str) -> None:
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["revenue"], "where_sql": where})
    assert info.value.code == code
