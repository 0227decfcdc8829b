"""Multi-branch plans (issue 2): metrics of different datasets aggregate in separate branches
merged by a NULL-safe FULL OUTER JOIN; ratios/expressions after the merge; S-FAN-6.

Requirement IDs: CORE-FAN-01..06, CORE-FAN-03 (cross-branch ratio, non-integer division),
FILL-02 (count default), reference §2.7 (S-FAN-6 observations).

Mini data by month (orders by order_date, refunds by refund_date):
  2024-01: orders 150 (2 orders), no refunds
  2024-02: orders  70 (1), refunds 70 (1)
  2024-03: orders  50 (2), no refunds
  2024-04: orders  40 (2 orders; order 7 has amount NULL), no refunds
  2024-05: no orders, refunds 15 (2; refund 3 belongs to no order)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, by_key, metric, result_rows

from dosi.engine import Engine

Run = Callable[..., Any]

MONTHS_ONLY_ORDERS = ("2024-01-01", "2024-03-01", "2024-04-01")
MONTH_ONLY_REFUNDS = "2024-05-01"


@pytest.fixture(scope="module")
def monthly(mini_run: Run) -> dict[Any, dict[str, Any]]:
    res = mini_run(
        {
            "metrics": [
                "revenue",
                "order_count",
                "max_order",
                "avg_order",
                "refund_total",
                "refund_count",
                "refund_share",
            ],
            "group_by": ["metric_time:month"],
        }
    )
    return by_key(res, "metric_time__month")


def test_core_fan_01_metrics_of_two_datasets_use_two_branches(mini: Engine) -> None:
    """CORE-FAN-01/02: one branch per dataset, merged by a NULL-safe FULL OUTER JOIN with
    COALESCE on the keys."""
    sql = mini.compile({"metrics": ["revenue", "refund_total"], "group_by": ["customers.segment"]})[
        "sql"
    ].upper()
    assert "FULL OUTER JOIN" in sql
    assert "IS NOT DISTINCT FROM" in sql or ("IS NULL" in sql and " OR " in sql)
    assert "COALESCE(M0.SEGMENT, M1.SEGMENT)" in sql


def test_core_fan_01_each_branch_equals_its_solo_value(shop_run: Run, shop_ref: Any) -> None:
    """CORE-FAN-01: revenue + refund_total by customer segment equals each metric computed
    on its own fact, including the NULL segment (NULL customers + orphan orders)."""
    res = shop_run({"metrics": ["revenue", "refund_total"], "group_by": ["customers.segment"]})
    expected = shop_ref.rows(
        """
        WITH o AS (SELECT c.segment k, SUM(o.amount) v FROM main.orders o
                   LEFT JOIN main.customers c ON o.customer_id = c.customer_id GROUP BY 1),
             r AS (SELECT c.segment k, SUM(r.refund_amount) v FROM main.refunds r
                   LEFT JOIN main.orders o ON r.order_id = o.order_id
                   LEFT JOIN main.customers c ON o.customer_id = c.customer_id GROUP BY 1)
        SELECT COALESCE(o.k, r.k), o.v, COALESCE(r.v, 0)
        FROM o FULL JOIN r ON o.k IS NOT DISTINCT FROM r.k
        """
    )
    assert_rows_equal(result_rows(res), expected)
    assert None in by_key(res, "segment")  # the NULL segment is one merged row


def test_core_fan_02_null_keys_merge_into_one_row(mini_run: Run) -> None:
    """CORE-FAN-02: NULL-safe equality — the NULL segment of both branches is one row:
    orders 60 (customer 4 + orphan order 6), refunds 5 (the refund of no order)."""
    res = mini_run(
        {"metrics": ["revenue", "refund_total", "refund_count"], "group_by": ["customers.segment"]}
    )
    assert res["row_count"] == 3
    assert by_key(res, "segment")[None] == {
        "segment": None,
        "revenue": 60.0,
        "refund_total": 5.0,
        "refund_count": 1,
    }


def test_core_fan_04_segments_present_in_one_branch_only(mini_run: Run, mini_ref: Any) -> None:
    """CORE-FAN-04/05 by customer segment: among paid orders, only consumer has a refund
    (refund 2 on order 1); corporate (order 7, amount NULL) and the NULL segment (order 5 and
    the orphan order 6) exist only in the orders branch."""
    res = mini_run(
        {
            "metrics": ["revenue", "order_count", "refund_total", "refund_count"],
            "group_by": ["customers.segment"],
            "where_sql": "orders.status = 'paid'",
        }
    )
    expected = mini_ref.rows(
        """
        WITH o AS (SELECT c.segment k, SUM(o.amount) v, COUNT(o.order_id) n FROM orders o
                   LEFT JOIN customers c ON o.customer_id = c.id
                   WHERE o.status = 'paid' GROUP BY 1),
             r AS (SELECT c.segment k, SUM(r.refund_amount) v, COUNT(r.refund_id) n
                   FROM refunds r LEFT JOIN orders o ON r.order_id = o.order_id
                   LEFT JOIN customers c ON o.customer_id = c.id
                   WHERE o.status = 'paid' GROUP BY 1)
        SELECT COALESCE(o.k, r.k), o.v, COALESCE(o.n, 0), r.v, COALESCE(r.n, 0)
        FROM o FULL JOIN r ON o.k IS NOT DISTINCT FROM r.k
        """
    )
    assert_rows_equal(result_rows(res), expected)
    rows = by_key(res, "segment")
    assert rows["corporate"] == {
        "segment": "corporate",
        "revenue": None,
        "order_count": 1,
        "refund_total": None,
        "refund_count": 0,
    }
    assert (rows[None]["revenue"], rows[None]["refund_total"], rows[None]["refund_count"]) == (
        60.0,
        None,
        0,
    )


def test_core_fan_04_group_only_in_the_other_branch_reads_null(
    monthly: dict[Any, dict[str, Any]],
) -> None:
    """CORE-FAN-04: May has refunds only, so revenue (SUM) is NULL there."""
    assert monthly[MONTH_ONLY_REFUNDS]["revenue"] is None
    assert monthly[MONTH_ONLY_REFUNDS]["refund_total"] == 15.0
    for month in MONTHS_ONLY_ORDERS:
        assert monthly[month]["refund_total"] is None


def test_core_fan_05_pure_count_reads_zero_for_missing_groups(
    monthly: dict[Any, dict[str, Any]],
) -> None:
    """CORE-FAN-05 / S-FAN-6: a pure COUNT fills 0 where only the other branch had rows."""
    assert monthly[MONTH_ONLY_REFUNDS]["order_count"] == 0
    assert [monthly[m]["refund_count"] for m in MONTHS_ONLY_ORDERS] == [0, 0, 0]


def test_core_fan_05_max_stays_null(monthly: dict[Any, dict[str, Any]]) -> None:
    """CORE-FAN-05: every non-count metric (here MAX) stays NULL."""
    assert monthly[MONTH_ONLY_REFUNDS]["max_order"] is None


def test_core_fan_06_count_inside_a_ratio_is_not_filled(
    monthly: dict[Any, dict[str, Any]],
) -> None:
    """CORE-FAN-06: the COUNT inside avg_order reads NULL (never a literal 0 divisor), so the
    ratio is NULL where orders are missing."""
    assert monthly[MONTH_ONLY_REFUNDS]["avg_order"] is None


def test_core_fan_06_count_distinct_fills_zero_but_count_expression_does_not(
    mini_engine: Callable[..., Any],
) -> None:
    """Reference §2.7: COUNT DISTINCT fills 0 too; `COUNT(x) + 0` is an expression, not a pure
    count, and stays NULL."""
    _, run = mini_engine(
        extra_metrics=[
            metric("buyers", "COUNT(DISTINCT orders.customer_id)"),
            metric("count_plus", "COUNT(orders.order_id) + 0"),
        ]
    )
    res = run(
        {"metrics": ["buyers", "count_plus", "refund_total"], "group_by": ["metric_time:month"]}
    )
    may = by_key(res, "metric_time__month")[MONTH_ONLY_REFUNDS]
    assert may["buyers"] == 0
    assert may["count_plus"] is None


def test_core_fan_03_ratio_across_branches_is_computed_after_the_merge(
    monthly: dict[Any, dict[str, Any]], mini_ref: Any
) -> None:
    """CORE-FAN-03: refund_share = SUM(refunds) / SUM(orders) per month, each side from its own
    branch; NULL where either side is missing."""
    expected = dict(
        mini_ref.rows(
            """
            WITH o AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) k, SUM(amount) v
                       FROM orders GROUP BY 1),
                 r AS (SELECT CAST(DATE_TRUNC('month', refund_date) AS DATE) k, SUM(refund_amount) v
                       FROM refunds GROUP BY 1)
            SELECT COALESCE(o.k, r.k), CAST(r.v AS DOUBLE) / o.v
            FROM o FULL JOIN r ON o.k = r.k
            """
        )
    )
    got = {k: v["refund_share"] for k, v in monthly.items()}
    assert got.keys() == expected.keys()
    for k, v in expected.items():
        assert got[k] == (pytest.approx(v) if v is not None else None)
    assert got["2024-02-01"] == 1.0


def test_merged_plan_without_group_by_returns_one_row(mini_run: Run, mini_ref: Any) -> None:
    """CORE-FAN-01: with no group_by the branches still merge into a single total row."""
    res = mini_run({"metrics": ["revenue", "units", "refund_total", "refund_share"]})
    rev, units, refunds = mini_ref.rows(
        "SELECT (SELECT SUM(amount) FROM orders), (SELECT SUM(qty) FROM order_items), "
        "(SELECT SUM(refund_amount) FROM refunds)"
    )[0]
    assert res["rows"] == [
        {
            "revenue": rev,
            "units": units,
            "refund_total": refunds,
            "refund_share": pytest.approx(refunds / rev),
        }
    ]


def test_filter_that_empties_a_branch_still_fills_counts(mini_run: Run) -> None:
    """Reference §2.7: channel 'phone' (the orphan order) has no refunds, so the refunds branch
    is empty for it: refund_count 0, refund_total NULL."""
    res = mini_run(
        {
            "metrics": ["revenue", "refund_total", "refund_count"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.channel = 'phone'",
        }
    )
    assert res["rows"] == [
        {"channel": "phone", "revenue": 40.0, "refund_total": None, "refund_count": 0}
    ]


def test_where_sql_applies_to_every_branch(mini_run: Run, mini_ref: Any) -> None:
    """A filter on orders also filters the refunds branch (through refunds -> orders)."""
    res = mini_run(
        {"metrics": ["revenue", "refund_total"], "where_sql": "orders.status = 'refunded'"}
    )
    expected = mini_ref.rows(
        "SELECT (SELECT SUM(amount) FROM orders WHERE status = 'refunded'), "
        "(SELECT SUM(r.refund_amount) FROM refunds r JOIN orders o ON r.order_id = o.order_id "
        " WHERE o.status = 'refunded')"
    )
    assert_rows_equal(result_rows(res), expected)


def test_ratio_division_by_zero_is_null_not_infinity(mini_run: Run, mini_ref: Any) -> None:
    """Ratio NULL semantics: SUM(amount) / SUM(discount) with zero discounts is NULL (DuckDB
    2.0 would give inf for x/0, so denominators go through NULLIF)."""
    res = mini_run({"metrics": ["discount_rate"], "group_by": ["orders.status"]})
    rows = by_key(res, "status")
    assert mini_ref.scalar("SELECT SUM(discount) FROM orders WHERE status = 'refunded'") == 0
    assert rows["refunded"]["discount_rate"] is None
    paid = mini_ref.scalar(
        "SELECT CAST(SUM(amount) AS DOUBLE) / SUM(discount) FROM orders WHERE status = 'paid'"
    )
    assert rows["paid"]["discount_rate"] == pytest.approx(paid)


def test_ratio_with_a_null_numerator_is_null(mini_run: Run) -> None:
    """Ratio NULL semantics: order 7 alone (amount NULL) gives SUM NULL / COUNT 1 = NULL."""
    res = mini_run(
        {
            "metrics": ["avg_order"],
            "group_by": ["orders.order_date"],
            "where_sql": "orders.order_id = 7",
        }
    )
    assert res["rows"] == [{"order_date": "2024-04-15", "avg_order": None}]


def test_shop_two_fact_tables_on_one_time_axis(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 7: revenue by order_date and refunds by refund_date on one month axis;
    2024-02 has refunds but no orders, 2024-10 orders but no refunds."""
    res = shop_run(
        {
            "metrics": ["revenue", "refund_total", "refund_count"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2024-12-01"},
        }
    )
    expected = shop_ref.rows(
        """
        WITH o AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) k, SUM(amount) v FROM main.orders
                   WHERE order_date >= '2024-01-01' AND order_date < '2024-12-01' GROUP BY 1),
             r AS (SELECT CAST(DATE_TRUNC('month', refund_date) AS DATE) k, SUM(refund_amount) v, COUNT(*) n
                   FROM main.refunds
                   WHERE refund_date >= '2024-01-01' AND refund_date < '2024-12-01' GROUP BY 1)
        SELECT COALESCE(o.k, r.k), o.v, COALESCE(r.v, 0), COALESCE(r.n, 0)
        FROM o FULL JOIN r ON o.k = r.k
        """
    )
    assert_rows_equal(result_rows(res), expected)
    rows = by_key(res, "metric_time__month")
    assert rows["2024-02-01"]["revenue"] is None
    assert rows["2024-10-01"]["refund_count"] == 0
