"""The query surface (issue 2): keys, group_by forms, grains and output names, where_sql,
time_range, order_by / limit, and the query-time error codes.

Requirement IDs: CORE-Q-01..07, CORE-Q-13, CORE-Q-14 (limit), §18 error codes.
Expected values come from SQL run directly on the mini shop tables (see enginekit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, by_key, result_rows

from dosi.engine import Engine
from dosi.errors import QueryError

Run = Callable[..., Any]


def query_error(engine: Engine, query: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        engine.compile(query)
    return info.value


# ------------------------------------------------------------------------------ keys


def test_core_q_01_metrics_list_is_the_query(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-01: a query names metrics; without group_by it returns one total row."""
    res = mini_run({"metrics": ["revenue", "order_count"]})
    assert res["columns"] == ["revenue", "order_count"]
    assert_rows_equal(
        result_rows(res), mini_ref.rows("SELECT SUM(amount), COUNT(order_id) FROM orders")
    )


def test_unknown_query_key_names_candidates(mini: Engine) -> None:
    """Issue 2 / reference §2.1: an unknown top-level key is `unknown_query_key`."""
    err = query_error(mini, {"metrics": ["revenue"], "group": ["orders.status"]})
    assert err.code == "unknown_query_key"
    assert "group_by" in err.candidates


@pytest.mark.parametrize("key", ["having", "offset", "filters"])
def test_unknown_query_keys_are_never_ignored(mini: Engine, key: str) -> None:
    """Reference §2.1: `having`, `offset`, `filters` are rejected, not silently dropped."""
    assert query_error(mini, {"metrics": ["revenue"], key: 1}).code == "unknown_query_key"


@pytest.mark.parametrize("query", [{"metrics": []}, {"metrics": [], "group_by": []}])
def test_empty_query(mini: Engine, query: dict[str, Any]) -> None:
    """Issue 2: a query with neither metrics nor group_by is `empty_query` (group_by alone
    is a dimension-only query, issue 21: tests/dimension_only)."""
    assert query_error(mini, query).code == "empty_query"


def test_unknown_metric_has_candidates_and_a_retry(mini: Engine) -> None:
    """§18 / Errors that teach: `unknown_metric` names near misses and a runnable retry."""
    err = query_error(mini, {"metrics": ["revenu"], "group_by": ["orders.status"]})
    assert err.code == "unknown_metric"
    assert err.candidates[0] == "revenue"
    assert err.suggested_retry is not None
    assert err.suggested_retry["metrics"] == ["revenue"]
    assert mini.compile(err.suggested_retry)["sql"]  # the retry compiles as sent


def test_unknown_dimension_has_candidates(mini: Engine) -> None:
    """§18: `unknown_dimension` for a group_by field that does not exist."""
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["orders.stauts"]})
    assert err.code == "unknown_dimension"
    assert "orders.status" in err.candidates


def test_ambiguous_dimension_lists_the_qualified_names(mini: Engine) -> None:
    """Reference §2.1: a bare field defined by several datasets is `ambiguous_dimension`."""
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["order_id"]})
    assert err.code == "ambiguous_dimension"
    assert set(err.candidates) == {"orders.order_id", "order_items.order_id", "refunds.order_id"}


def test_bare_field_unique_in_the_model_resolves(mini_run: Run) -> None:
    """Reference §2.1: a bare field name works when exactly one dataset defines it."""
    bare = mini_run({"metrics": ["revenue"], "group_by": ["region"]})
    qualified = mini_run({"metrics": ["revenue"], "group_by": ["customers.region"]})
    assert bare["rows"] == qualified["rows"]
    assert bare["columns"] == ["region", "revenue"]


# ------------------------------------------------------------------------------ group_by forms


def test_core_q_02_group_by_strings_and_objects_are_equivalent(mini_run: Run) -> None:
    """CORE-Q-02: `dataset.field`, `dataset.field:grain` and the object form all work."""
    as_strings = mini_run(
        {"metrics": ["revenue"], "group_by": ["orders.status", "orders.order_date:month"]}
    )
    as_objects = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": [
                {"field": "orders.status"},
                {"field": "orders.order_date", "grain": "month"},
            ],
        }
    )
    assert as_strings["columns"] == ["status", "order_date__month", "revenue"]
    assert as_objects["columns"] == as_strings["columns"]
    assert as_objects["rows"] == as_strings["rows"]


@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter", "year"])
def test_core_q_03_grains_bucket_like_date_trunc(mini_run: Run, mini_ref: Any, grain: str) -> None:
    """CORE-Q-03: each grain truncates the time field (weeks start on Monday)."""
    res = mini_run({"metrics": ["revenue"], "group_by": [f"orders.order_date:{grain}"]})
    assert res["columns"] == [f"order_date__{grain}", "revenue"]
    expected = mini_ref.rows(
        f"SELECT CAST(DATE_TRUNC('{grain}', order_date) AS DATE), SUM(amount) "
        "FROM orders GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_week_buckets_start_on_monday(mini_run: Run) -> None:
    """CORE-Q-03 / reference §2.3: 2024-01-05 (a Friday) falls in the week of 2024-01-01."""
    res = mini_run(
        {
            "metrics": ["order_count"],
            "group_by": ["orders.order_date:week"],
            "where_sql": "orders.order_id = 1",
        }
    )
    assert [r["order_date__week"][:10] for r in res["rows"]] == ["2024-01-01"]


def test_core_q_04_output_names(mini_run: Run) -> None:
    """CORE-Q-04: a dimension is output under its field name, a grained one as
    `<field>__<grain>`; metrics keep their model names."""
    res = mini_run(
        {
            "metrics": ["order_count"],
            "group_by": ["customers.segment", "orders.order_date", "orders.order_date:year"],
        }
    )
    assert res["columns"] == ["segment", "order_date", "order_date__year", "order_count"]
    assert res["requested_columns"] == [
        {"requested": "customers.segment", "column": "segment"},
        {"requested": "orders.order_date", "column": "order_date"},
        {"requested": "orders.order_date", "column": "order_date__year"},
    ]
    assert res["outputs"] == [{"column": "order_count", "metric": "order_count"}]


def test_core_q_05_metric_time_is_the_metric_primary_time(mini_run: Run) -> None:
    """CORE-Q-05: `metric_time:month` resolves to orders.order_date for orders metrics."""
    via_metric_time = mini_run({"metrics": ["revenue"], "group_by": ["metric_time:month"]})
    via_field = mini_run({"metrics": ["revenue"], "group_by": ["orders.order_date:month"]})
    assert via_metric_time["columns"] == ["metric_time__month", "revenue"]
    assert [tuple(r.values()) for r in via_metric_time["rows"]] == [
        tuple(r.values()) for r in via_field["rows"]
    ]


def test_metric_time_without_grain_is_output_as_metric_time(mini_run: Run, mini_ref: Any) -> None:
    """Reference §2.2: `metric_time` without a grain is the raw date, column `metric_time`."""
    res = mini_run({"metrics": ["order_count"], "group_by": ["metric_time"]})
    assert res["columns"] == ["metric_time", "order_count"]
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows("SELECT order_date, COUNT(order_id) FROM orders GROUP BY 1"),
    )


def test_metric_time_resolves_per_metric_dataset(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-05: with two facts, metric_time is order_date for revenue and refund_date for
    refunds — each branch groups by its own column."""
    res = mini_run({"metrics": ["revenue", "refund_total"], "group_by": ["metric_time:month"]})
    expected = mini_ref.rows(
        """
        WITH o AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) k, SUM(amount) v FROM orders GROUP BY 1),
             r AS (SELECT CAST(DATE_TRUNC('month', refund_date) AS DATE) k, SUM(refund_amount) v
                   FROM refunds GROUP BY 1)
        SELECT COALESCE(o.k, r.k), o.v, r.v FROM o FULL JOIN r ON o.k = r.k
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_grain_on_non_time_dimension(mini: Engine) -> None:
    """Issue 2: a grain on a field that is not a time dimension is refused."""
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["orders.status:month"]})
    assert err.code == "grain_on_non_time_dimension"


def test_grain_on_a_date_marked_not_time_is_refused(mini: Engine) -> None:
    """CORE-MOD-08: `is_time: false` opts a Date column out of the time role."""
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["orders.ship_date:month"]})
    assert err.code == "grain_on_non_time_dimension"


def test_unknown_grain_is_refused(mini: Engine) -> None:
    """CORE-Q-03: a grain outside the vocabulary is refused (reference: ValueError); a
    sub-day grain of a DATE column is `grain_too_fine` (issue 22: a DATE has no hours)."""
    with pytest.raises(ValueError):
        mini.compile({"metrics": ["revenue"], "group_by": ["orders.order_date:fortnight"]})
    err = query_error(mini, {"metrics": ["revenue"], "group_by": ["orders.order_date:hour"]})
    assert err.code == "grain_too_fine" and "day" in err.candidates


def test_same_output_name_twice_is_refused(mini: Engine) -> None:
    """Reference §2.2: two group-by items with one output name are `duplicate_output_name`."""
    err = query_error(
        mini, {"metrics": ["revenue"], "group_by": ["orders.order_date", "orders.order_date"]}
    )
    assert err.code == "duplicate_output_name"


# ------------------------------------------------------------------------------ where_sql


def test_core_q_08_where_sql_filters_rows_before_aggregation(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-08: where_sql is a dimension filter on rows."""
    res = mini_run(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["customers.region"],
            "where_sql": "orders.status = 'paid' AND orders.channel <> 'store'",
        }
    )
    expected = mini_ref.rows(
        "SELECT c.region, SUM(o.amount), COUNT(o.order_id) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id "
        "WHERE o.status = 'paid' AND o.channel <> 'store' GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_where_sql_on_a_joined_dataset_without_grouping_by_it(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-08: a filter field joins its dataset even when nothing groups by it."""
    res = mini_run({"metrics": ["revenue"], "where_sql": "customers.region = 'east'"})
    expected = mini_ref.rows(
        "SELECT SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id "
        "WHERE c.region = 'east'"
    )
    assert_rows_equal(result_rows(res), expected)


def test_aggregate_in_where(mini: Engine) -> None:
    """Issue 2 / reference §2.6: an aggregate in where_sql is `aggregate_in_where`."""
    err = query_error(mini, {"metrics": ["revenue"], "where_sql": "SUM(orders.amount) > 10"})
    assert err.code == "aggregate_in_where"


def test_unknown_field_in_where_sql(mini: Engine) -> None:
    """§18: a where_sql column that is no field is `unknown_field`, with candidates."""
    err = query_error(mini, {"metrics": ["revenue"], "where_sql": "orders.stauts = 'paid'"})
    assert err.code == "unknown_field"
    assert "orders.status" in err.candidates


@pytest.mark.parametrize(
    "where", ["1=1; DROP TABLE orders", "orders.status = 'paid') UNION SELECT 1 --"]
)
def test_where_sql_must_be_one_expression(mini: Engine, where: str) -> None:
    """Reference §2.6: a second statement or an injection attempt is `unsupported_filter`."""
    assert query_error(mini, {"metrics": ["revenue"], "where_sql": where}).code == (
        "unsupported_filter"
    )


# ------------------------------------------------------------------------------ time_range


def test_core_q_06_time_range_start_inclusive_end_exclusive(mini_run: Run) -> None:
    """CORE-Q-06: [start, end). Orders on 2024-02-01 (start) count, 2024-03-31 (end) does not.

    Orders: 2024-01-31 (50, before), 2024-02-01 (70), 2024-03-10 (30), 2024-03-31 (20, end).
    """
    res = mini_run(
        {
            "metrics": ["revenue", "order_count"],
            "time_range": {"start": "2024-02-01", "end": "2024-03-31"},
        }
    )
    assert res["rows"] == [{"revenue": 100.0, "order_count": 2}]


def test_core_q_06_time_range_start_only_and_end_only(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-06: either bound may be omitted."""
    start_only = mini_run({"metrics": ["order_count"], "time_range": {"start": "2024-03-31"}})
    end_only = mini_run({"metrics": ["order_count"], "time_range": {"end": "2024-01-31"}})
    assert start_only["rows"] == [
        {
            "order_count": mini_ref.scalar(
                "SELECT COUNT(*) FROM orders WHERE order_date >= '2024-03-31'"
            )
        }
    ]
    assert end_only["rows"] == [
        {
            "order_count": mini_ref.scalar(
                "SELECT COUNT(*) FROM orders WHERE order_date < '2024-01-31'"
            )
        }
    ]


def test_core_q_07_time_range_filters_each_branch_on_its_own_time(
    mini_run: Run, mini_ref: Any
) -> None:
    """CORE-Q-07: without a dimension the range filters each metric's primary time —
    orders by order_date, refunds by refund_date."""
    res = mini_run(
        {
            "metrics": ["revenue", "refund_total"],
            "time_range": {"start": "2024-02-01", "end": "2024-05-20"},
        }
    )
    rev = mini_ref.scalar(
        "SELECT SUM(amount) FROM orders WHERE order_date >= '2024-02-01' AND order_date < '2024-05-20'"
    )
    ref = mini_ref.scalar(
        "SELECT SUM(refund_amount) FROM refunds "
        "WHERE refund_date >= '2024-02-01' AND refund_date < '2024-05-20'"
    )
    assert (rev, ref) == (160.0, 80.0)  # refund 3 on 2024-05-20 is the exclusive end
    assert res["rows"] == [{"revenue": rev, "refund_total": ref}]


def test_time_range_with_a_named_dimension(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-06: `dimension` names the column the range applies to."""
    res = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.status"],
            "time_range": {"start": "2024-02-01", "dimension": "orders.order_date"},
        }
    )
    expected = mini_ref.rows(
        "SELECT status, SUM(amount) FROM orders WHERE order_date >= '2024-02-01' GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_time_range_and_grouping_by_time_keep_only_buckets_in_range(
    mini_run: Run, mini_ref: Any
) -> None:
    """CORE-Q-06: a range over a monthly series keeps whole months inside it."""
    res = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-02-01", "end": "2024-04-01"},
        }
    )
    expected = mini_ref.rows(
        "SELECT CAST(DATE_TRUNC('month', order_date) AS DATE), SUM(amount) FROM orders "
        "WHERE order_date >= '2024-02-01' AND order_date < '2024-04-01' GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_time_range_fallback_without_primary_time(mini: Engine) -> None:
    """TIME-05 (issue 20 point 10): a range without `dimension` on a metric with no primary
    time cannot apply: `no_primary_time_dimension`, as metric_time in group_by on such a
    metric; the error names the metric and the time fields it could use."""
    err = query_error(mini, {"metrics": ["customer_count"], "time_range": {"start": "2024-01-01"}})
    assert err.code == "no_primary_time_dimension"
    assert err.hint
    assert err.metrics == ["customer_count"]
    assert "orders.order_date" in err.candidates


def test_time_range_on_a_named_non_time_field_is_refused(mini: Engine) -> None:
    """Reference §2.4: a range over a non-time field is `grain_on_non_time_dimension`."""
    err = query_error(
        mini,
        {
            "metrics": ["revenue"],
            "time_range": {"start": "2024-01-01", "dimension": "orders.status"},
        },
    )
    assert err.code == "grain_on_non_time_dimension"  # the reference's code (§2.4)
    assert "orders.order_date" in err.candidates


@pytest.mark.parametrize("time_range", [{}, {"start": "2024/01/01"}, {"start": "January"}])
def test_time_range_bounds_are_iso_dates(mini: Engine, time_range: dict[str, Any]) -> None:
    """CORE-Q-06: bounds are YYYY-MM-DD, and at least one is needed (`unsupported_filter`)."""
    err = query_error(mini, {"metrics": ["revenue"], "time_range": time_range})
    assert err.code == "unsupported_filter"


def test_reversed_time_range_suggests_the_swapped_bounds(mini_run: Run, mini: Engine) -> None:
    """Issue 8 item 5: a reversed time_range is a structured error (the reference answers an
    empty result) whose suggested_retry swaps the bounds, and that retry runs."""
    query = {
        "metrics": ["revenue"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-04-01", "end": "2024-01-01"},
    }
    err = query_error(mini, query)
    assert err.code == "unsupported_filter"
    retry = err.suggested_retry
    assert retry is not None
    assert retry["time_range"] == {"start": "2024-01-01", "end": "2024-04-01"}
    assert retry["metrics"] == ["revenue"] and retry["group_by"] == ["metric_time:month"]
    assert mini_run(retry)["row_count"] > 0


def test_empty_time_range_has_no_swap_to_suggest(mini: Engine) -> None:
    err = query_error(
        mini, {"metrics": ["revenue"], "time_range": {"start": "2024-01-01", "end": "2024-01-01"}}
    )
    assert err.code == "unsupported_filter" and err.suggested_retry is None


# ------------------------------------------------------------------------------ order / limit


def test_core_q_13_order_by_metric_desc_with_limit(mini_run: Run, mini_ref: Any) -> None:
    """CORE-Q-13/14: order by a metric (desc) and keep the first rows."""
    res = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.order_date"],
            "order_by": [{"key": "revenue", "desc": True}],
            "limit": 3,
        }
    )
    expected = mini_ref.rows(
        "SELECT order_date, SUM(amount) r FROM orders GROUP BY 1 ORDER BY r DESC NULLS LAST LIMIT 3"
    )
    assert [tuple(r.values()) for r in res["rows"]] == expected  # order matters here


def test_order_by_a_dimension_by_output_name_and_by_query_spelling(mini_run: Run) -> None:
    """CORE-Q-13: a sort key names a group-by item by output name or query spelling."""
    by_output = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.order_date:month"],
            "order_by": [{"key": "order_date__month", "desc": True}],
        }
    )
    by_spelling = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.order_date:month"],
            "order_by": [{"key": "orders.order_date:month", "desc": True}],
        }
    )
    months = [r["order_date__month"] for r in by_output["rows"]]
    assert months == sorted(months, reverse=True)
    assert by_spelling["rows"] == by_output["rows"]


def test_order_by_ascending_puts_nulls_last(mini_run: Run) -> None:
    """Reference §2.5: DuckDB default NULL placement (last) for an ascending key."""
    res = mini_run(
        {
            "metrics": ["revenue"],
            "group_by": ["customers.region"],
            "order_by": [{"key": "customers.region"}],
        }
    )
    assert [r["region"] for r in res["rows"]] == ["east", "west", None]


def test_limit_zero_returns_no_rows(mini_run: Run) -> None:
    """Reference §2.1: limit 0 returns zero rows, with the columns."""
    res = mini_run({"metrics": ["revenue"], "group_by": ["orders.status"], "limit": 0})
    assert res["row_count"] == 0 and res["rows"] == []
    assert res["columns"] == ["status", "revenue"]


def test_unknown_order_key(mini: Engine) -> None:
    """Issue 2: a sort key that is neither a queried metric nor a group-by item."""
    err = query_error(
        mini,
        {"metrics": ["revenue"], "group_by": ["orders.status"], "order_by": [{"key": "units"}]},
    )
    assert err.code == "unknown_order_key"
    assert set(err.candidates) <= {"revenue", "status", "orders.status"}
    assert err.candidates


def test_negative_limit_is_refused(mini: Engine) -> None:
    """Reference §2.1: limit is a non-negative integer (ValueError)."""
    with pytest.raises(ValueError):
        mini.compile({"metrics": ["revenue"], "limit": -1})


def test_rows_are_ordered_by_the_group_by_columns_by_default(mini_run: Run) -> None:
    """Without order_by, rows come back sorted by the group-by columns (deterministic)."""
    res = mini_run({"metrics": ["order_count"], "group_by": ["orders.channel"]})
    assert [r["channel"] for r in res["rows"]] == ["phone", "store", "web", None]
    assert by_key(res, "channel")["web"]["order_count"] == 4
