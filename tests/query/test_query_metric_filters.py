"""Metric filters in where_sql (issue 8 item 4, CORE-Q-08 layering).

A top-level AND conjunct that names a metric keeps result rows after aggregation and after the
window stage (HAVING semantics); field-only conjuncts stay row filters before aggregation.
Expected rows come from hand-written SQL over the shop tables (HAVING, window functions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, result_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.engine import Engine
from dosi.errors import QueryError

Run = Callable[..., Any]


def query_error(engine: Engine, query: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        engine.compile(query)
    return info.value


def test_metric_conjunct_keeps_groups_by_their_value(shop_run: Run, shop_ref: Any) -> None:
    """`revenue > 500000` is HAVING SUM(amount) > 500000 over the channel groups."""
    res = shop_run(
        {"metrics": ["revenue"], "group_by": ["orders.channel"], "where_sql": "revenue > 500000"}
    )
    expected = shop_ref.rows(
        "SELECT channel, SUM(amount) FROM main.orders GROUP BY 1 HAVING SUM(amount) > 500000"
    )
    assert res["columns"] == ["channel", "revenue"]
    assert len(expected) == 2
    assert_rows_equal(result_rows(res), expected)


def test_field_conjuncts_stay_row_filters_beside_a_metric_conjunct(
    shop_run: Run, shop_ref: Any
) -> None:
    """A field-only conjunct filters rows before aggregation, the metric one after it."""
    res = shop_run(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "where_sql": "revenue > 500000 AND orders.status = 'completed'",
        }
    )
    expected = shop_ref.rows(
        "SELECT channel, SUM(amount), COUNT(order_id) FROM main.orders "
        "WHERE status = 'completed' GROUP BY 1 HAVING SUM(amount) > 500000"
    )
    assert_rows_equal(result_rows(res), expected)
    assert "HAVING" not in res["sql"] and "result_rows" in res["sql"]


def test_metric_conjunct_may_read_group_by_fields_and_other_metrics(
    shop_run: Run, shop_ref: Any
) -> None:
    """A group-by field is a result column by then: `revenue > x OR orders.channel = 'store'`
    and `revenue / order_count > y` filter the result rows."""
    res = shop_run(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "where_sql": "(revenue > 900000 OR orders.channel = 'store') "
            "AND revenue / order_count > 1",
        }
    )
    expected = shop_ref.rows(
        "SELECT channel, SUM(amount), COUNT(order_id) FROM main.orders GROUP BY 1 "
        "HAVING (SUM(amount) > 900000 OR channel = 'store') AND SUM(amount) / COUNT(order_id) > 1"
    )
    assert len(expected) == 3
    assert_rows_equal(result_rows(res), expected)


def test_metric_named_only_in_where_is_computed_but_not_output(
    shop_run: Run, shop_ref: Any
) -> None:
    """A metric the query does not select still filters; it is not an output column."""
    res = shop_run(
        {
            "metrics": ["order_count"],
            "group_by": ["orders.channel"],
            "where_sql": "revenue > 500000",
        }
    )
    assert res["columns"] == ["channel", "order_count"]
    assert [o["metric"] for o in res["outputs"]] == ["order_count"]
    expected = shop_ref.rows(
        "SELECT channel, COUNT(order_id) FROM main.orders GROUP BY 1 HAVING SUM(amount) > 500000"
    )
    assert_rows_equal(result_rows(res), expected)


def test_metric_filter_across_branches_applies_after_the_merge(
    shop_run: Run, shop_ref: Any
) -> None:
    """Two facts merged on metric_time: the filter reads the merged row (refund_total from the
    refunds branch, computed only for the filter)."""
    res = shop_run(
        {
            "metrics": ["revenue"],
            "group_by": ["metric_time:year"],
            "where_sql": "refund_total > 75000 AND revenue > 0",
        }
    )
    assert res["columns"] == ["metric_time__year", "revenue"]
    expected = shop_ref.rows(
        """
        WITH o AS (SELECT CAST(DATE_TRUNC('year', order_date) AS DATE) k, SUM(amount) v
                   FROM main.orders GROUP BY 1),
             r AS (SELECT CAST(DATE_TRUNC('year', refund_date) AS DATE) k, SUM(refund_amount) v
                   FROM main.refunds GROUP BY 1)
        SELECT COALESCE(o.k, r.k), o.v FROM o FULL JOIN r ON o.k = r.k
        WHERE COALESCE(r.v, 0) > 75000 AND o.v > 0
        """
    )
    assert len(expected) == 1
    assert_rows_equal(result_rows(res), expected)


def test_window_metric_filter_runs_after_the_window_stage_and_trim(
    shop_run: Run, shop_ref: Any
) -> None:
    """WIN-QRY-04 + item 4: `revenue_ytd > 600000` keeps months whose year-to-date sum (over
    the whole year, January included) passes, within the trimmed range."""
    res = shop_run(
        {
            "metrics": ["revenue", "revenue_ytd"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-03-01", "end": "2025-01-01"},
            "where_sql": "revenue_ytd > 600000",
        }
    )
    expected = shop_ref.rows(
        """
        WITH m AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) t, SUM(amount) v
                   FROM main.orders WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01'
                   GROUP BY 1),
             w AS (SELECT t, v, SUM(v) OVER (PARTITION BY DATE_TRUNC('year', t) ORDER BY t) ytd
                   FROM m)
        SELECT t, v, ytd FROM w WHERE t >= DATE '2024-03-01' AND ytd > 600000
        """
    )
    assert len(expected) == 4
    assert_rows_equal(result_rows(res), expected)


def test_hidden_offset_metric_filter_reads_its_lookback(shop_run: Run, shop_ref: Any) -> None:
    """`revenue_mom > 0` with only order_count selected: the scan still widens for the offset
    (June compares with May), and revenue_mom is not output."""
    res = shop_run(
        {
            "metrics": ["order_count"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-06-01", "end": "2025-01-01"},
            "where_sql": "revenue_mom > 0",
        }
    )
    assert res["columns"] == ["metric_time__month", "order_count"]
    expected = shop_ref.rows(
        """
        WITH m AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) t, SUM(amount) v,
                          COUNT(order_id) n
                   FROM main.orders GROUP BY 1)
        SELECT c.t, c.n FROM m c JOIN m p ON p.t = c.t - INTERVAL 1 MONTH
        WHERE c.t >= DATE '2024-06-01' AND c.t < DATE '2025-01-01' AND c.v > p.v
        """
    )
    assert any(str(r[0]) == "2024-06-01" for r in expected)
    assert_rows_equal(result_rows(res), expected)


def test_rank_is_computed_before_the_metric_filter(shop_run: Run, shop_ref: Any) -> None:
    """A filter keeps rows of the windowed result: ranks keep the values they had over every
    group (HAVING semantics, not a row filter that would re-rank)."""
    res = shop_run(
        {
            "metrics": ["revenue", "revenue_rank"],
            "group_by": ["orders.channel"],
            "where_sql": "revenue < 1000000",
        }
    )
    expected = shop_ref.rows(
        """
        WITH g AS (SELECT channel, SUM(amount) v FROM main.orders GROUP BY 1),
             r AS (SELECT channel, v, DENSE_RANK() OVER (ORDER BY v DESC NULLS LAST) k FROM g)
        SELECT channel, v, k FROM r WHERE v < 1000000
        """
    )
    assert min(r[2] for r in expected) > 1  # the top channel is filtered out, ranks stay
    assert_rows_equal(result_rows(res), expected)


def test_order_and_limit_apply_after_the_metric_filter(shop_run: Run, shop_ref: Any) -> None:
    res = shop_run(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "revenue < 1000000",
            "order_by": [{"key": "revenue", "desc": True}],
            "limit": 1,
        }
    )
    expected = shop_ref.rows(
        "SELECT channel, SUM(amount) FROM main.orders GROUP BY 1 HAVING SUM(amount) < 1000000 "
        "ORDER BY 2 DESC LIMIT 1"
    )
    assert len(expected) == 1
    assert_rows_equal(result_rows(res), expected)


def test_metric_or_ungrouped_field_is_result_filter_unprojected(shop: Engine) -> None:
    """A metric exists only after aggregation, an ungrouped field only before it: mixing them
    under OR is rejected, naming both parts (the reference engine's code)."""
    err = query_error(
        shop,
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "revenue > 500000 OR orders.status = 'completed'",
        },
    )
    assert err.code == "result_filter_unprojected"
    assert "revenue" in err.message and "orders.status" in err.message
    assert err.candidates == ["orders.status"]
    assert "orders.status" in (err.hint or "")


def test_grained_time_field_is_not_a_result_column(shop: Engine) -> None:
    """`orders.order_date` grouped at :month is not the raw date: it is unprojected."""
    err = query_error(
        shop,
        {
            "metrics": ["revenue"],
            "group_by": ["orders.order_date:month"],
            "where_sql": "revenue > 1 OR orders.order_date > DATE '2024-01-01'",
        },
    )
    assert err.code == "result_filter_unprojected"


@pytest.mark.parametrize(
    "where",
    ["SUM(orders.amount) > 3", "SUM(orders.amount) > 3 AND orders.channel = 'web'"],
)
def test_inline_aggregate_stays_aggregate_in_where(shop: Engine, where: str) -> None:
    """An aggregate call written inline is `aggregate_in_where`, as the reference answers; the
    hint says to name a metric instead."""
    err = query_error(shop, {"metrics": ["revenue"], "where_sql": where})
    assert err.code == "aggregate_in_where"
    assert "metric" in (err.hint or "")


def test_explain_shows_the_result_filter(shop: Engine) -> None:
    text = shop.explain(
        {"metrics": ["revenue"], "group_by": ["orders.channel"], "where_sql": "revenue > 5"}
    )
    assert "FilterResult revenue > 5" in text


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    threshold=st.integers(min_value=0, max_value=200_000),
    grain=st.sampled_from(["month", "quarter"]),
    op=st.sampled_from([">", "<=", "<>"]),
)
def test_metric_filter_keeps_exactly_the_unfiltered_rows_that_pass(
    shop_run: Run, threshold: int, grain: str, op: str
) -> None:
    """Property: the filtered result is the unfiltered result with the predicate applied in
    Python (same rows, same values: the filter never changes what it keeps)."""
    base = {"metrics": ["revenue", "order_count"], "group_by": [f"metric_time:{grain}"]}
    everything = shop_run(base)["rows"]
    kept = shop_run({**base, "where_sql": f"order_count * 100 {op} {threshold}"})["rows"]
    test = {
        ">": lambda v: v > threshold,
        "<=": lambda v: v <= threshold,
        "<>": lambda v: v != threshold,
    }[op]
    assert kept == [r for r in everything if test(r["order_count"] * 100)]


def test_bare_metric_conjunct_is_not_a_predicate(shop: Engine) -> None:
    err = query_error(
        shop,
        {"metrics": ["revenue"], "where_sql": "revenue AND orders.status = 'completed'"},
    )
    assert err.code == "unsupported_filter"
