"""`Engine.sql`: SQL over the virtual table answers exactly what the dosi query it translates
to answers, and every construct without a dosi meaning is a structured error naming it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pgcases import CASES, Case, assert_same, expected_rows
from sqlglot import parse_one

from dosi import Engine
from dosi.errors import QueryError
from dosi.query.semantic_sql.time_filters import literal_time


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.sql[:50])
def test_sql_answers_the_dosi_query(api: Engine, case: Case) -> None:
    got = api.sql(case.sql, list(case.params) or None)
    rows = list(zip(*(c.to_pylist() for c in got.arrow.columns), strict=True))
    assert_same(rows, expected_rows(api, case), case.ordered)
    if case.names:
        assert got["columns"] == list(case.names)


@pytest.mark.parametrize(
    ("sql", "query"),
    [
        (
            "SELECT orders__channel, SUM(revenue) FROM shop GROUP BY 1",
            {"metrics": ["revenue"], "group_by": ["orders.channel"]},
        ),
        (
            'SELECT "orders.channel", MEASURE(revenue) FROM shop',  # the dosi spelling, quoted
            {"metrics": ["revenue"], "group_by": ["orders.channel"]},
        ),
        (
            "SELECT SUM(order_count), COUNT(order_count), MIN(first_order_date) FROM shop",
            {"metrics": ["order_count", "first_order_date"]},
        ),
        (
            "SELECT metric_time__month, revenue FROM shop WHERE metric_time__month >= '2024-03-15'"
            " AND metric_time__month <= '2024-06-10'",
            {
                "metrics": ["revenue"],
                "group_by": ["metric_time:month"],
                "time_range": {"start": "2024-04-01", "end": "2024-07-01"},
            },
        ),
        (
            "SELECT metric_time__day, revenue FROM shop WHERE metric_time > '2024-03-01' AND "
            "metric_time <= '2024-03-05'",
            {
                "metrics": ["revenue"],
                "group_by": ["metric_time:day"],
                "time_range": {
                    "start": "2024-03-01T00:00:00.000001",
                    "end": "2024-03-05T00:00:00.000001",
                },
            },
        ),
        (
            "SELECT orders__order_date__year, revenue FROM shop WHERE orders__order_date__year = "
            "DATE '2024-01-01'",
            {
                "metrics": ["revenue"],
                "group_by": ["orders.order_date:year"],
                "time_range": {
                    "start": "2024-01-01",
                    "end": "2025-01-01",
                    "dimension": "orders.order_date",
                },
            },
        ),
        (
            "SELECT metric_time__week, revenue FROM shop WHERE metric_time >= TO_TIMESTAMP("
            "'2024-05-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND metric_time < "
            "'2024-06-01' ORDER BY 1 DESC NULLS FIRST",
            {
                "metrics": ["revenue"],
                "group_by": ["metric_time:week"],
                "time_range": {"start": "2024-05-01", "end": "2024-06-01"},
                "order_by": [{"key": "metric_time:week", "desc": True, "nulls": "first"}],
            },
        ),
        (
            "SELECT customers__segment AS seg, revenue FROM shop WHERE revenue > 1000 AND "
            "customers__segment IS NOT NULL GROUP BY seg ORDER BY seg",
            {
                "metrics": ["revenue"],
                "group_by": ["customers.segment"],
                "where_sql": "(revenue > 1000) AND (customers.segment IS NOT NULL)",
                "order_by": [{"key": "customers.segment", "desc": False}],
            },
        ),
        (
            "SELECT orders__channel, revenue FROM shop ORDER BY order_count DESC",
            {
                "metrics": ["revenue", "order_count"],
                "group_by": ["orders.channel"],
                "order_by": [{"key": "order_count", "desc": True}],
            },
        ),
    ],
)
def test_translation(api: Engine, sql: str, query: dict[str, Any]) -> None:
    """The dosi query a statement maps to (CORE-Q: group_by, time_range, where_sql)."""
    plan = api.sql_plan(sql).query
    assert plan is not None
    if "where_sql" in query:
        assert plan.pop("where_sql").replace("(", "").replace(")", "") == query.pop(
            "where_sql"
        ).replace("(", "").replace(")", "")
    assert plan == query


def test_hidden_order_metric_is_not_returned(api: Engine) -> None:
    got = api.sql("SELECT orders__channel, revenue FROM shop ORDER BY order_count DESC")
    assert got["columns"] == ["orders__channel", "revenue"]
    ref = api.execute(
        {
            "metrics": ["order_count", "revenue"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "order_count", "desc": True}],
        }
    )["rows"]
    assert [r["revenue"] for r in got["rows"]] == [r["revenue"] for r in ref]


def test_empty_answers(api: Engine) -> None:
    """A constant FALSE, an empty time range and LIMIT 0 answer no rows, typed."""
    for sql in (
        "SELECT orders__channel, revenue FROM shop WHERE 1 = 0",
        "SELECT orders__channel, revenue FROM shop WHERE metric_time >= '2024-02-01' "
        "AND metric_time < '2024-01-01'",
        "SELECT orders__channel, revenue FROM shop LIMIT 0",
    ):
        got = api.sql(sql)
        assert got["row_count"] == 0 and got["columns"] == ["orders__channel", "revenue"]
    star = api.sql("SELECT * FROM shop LIMIT 0")
    assert star["columns"] == api.sql_table().names
    assert star.arrow.schema.field("revenue").type is not None


def test_date_cast_of_a_bucket(api: Engine) -> None:
    got = api.sql(
        "SELECT CAST(metric_time__month AS timestamp) AS m, revenue FROM shop "
        "WHERE metric_time >= '2024-01-01' AND metric_time < '2024-04-01' ORDER BY 1"
    )
    assert str(got.arrow.schema.field("m").type) == "timestamp[us]"
    assert [r["m"] for r in got["rows"]] == ["2024-01-01 00:00:00", "2024-03-01 00:00:00"]


@pytest.mark.parametrize(
    ("sql", "code", "fragment"),
    [
        ("SELECT AVG(revenue) FROM shop", "sql_aggregate_mismatch", "MEASURE(revenue)"),
        ("SELECT SUM(customer_count) FROM shop", "sql_aggregate_mismatch", "COUNT(DISTINCT"),
        ("SELECT SUM(avg_order_value) FROM shop", "sql_aggregate_mismatch", "not a plain"),
        (
            "SELECT MAX(revenue_mom) FROM shop GROUP BY metric_time__month",
            "sql_aggregate_mismatch",
            "MEASURE(revenue_mom)",
        ),
        ("SELECT COUNT(*) FROM shop", "sql_aggregate_mismatch", "order_count"),
        ("SELECT MAX(orders__order_date) FROM shop", "sql_aggregate_mismatch", "dimension"),
        ("SELECT DISTINCT orders__channel FROM shop", "not_implemented", "dimensions only"),
        ("SELECT orders__channel FROM shop GROUP BY 1", "not_implemented", "dimensions only"),
        ("SELECT orders__chanel, revenue FROM shop", "sql_unknown_column", "orders__channel"),
        ("SELECT revenue FROM orders", "sql_unknown_table", "shop"),
        ("SELECT * FROM shop", "sql_unsupported", "SELECT *"),
        (
            "SELECT orders__channel, revenue FROM shop GROUP BY customers__segment",
            "sql_grouping_error",
            "GROUP BY",
        ),
        ("SELECT revenue FROM shop s JOIN shop t ON true", "sql_unsupported", "JOIN"),
        ("SELECT revenue FROM (SELECT revenue FROM shop) x", "sql_unsupported", "FROM"),
        (
            "SELECT revenue FROM shop WHERE metric_time IN ('2024-01-01')",
            "sql_unsupported",
            "metric_time",
        ),
        ("SELECT revenue + 1 FROM shop", "sql_unsupported", "select item"),
        ("SELECT revenue FROM shop WHERE orders__amount LIKE 'x%'", "filter_type_mismatch", ""),
        ("SELECT revenue FROM shop WHERE SUM(orders__amount) > 3", "sql_aggregate_mismatch", ""),
        (
            "SELECT revenue FROM shop WHERE metric_time >= '2024-01-01+02:00'",
            "sql_unsupported",
            "offset",
        ),
        ("SELECT revenue FROM shop; SELECT 1", "sql_syntax_error", "one statement"),
        ("SELECT revenue FROM shop LIMIT -1", "sql_unsupported", "LIMIT"),
        ("DELETE FROM shop", "sql_unsupported", "DELETE"),
    ],
)
def test_refusals_name_the_construct(api: Engine, sql: str, code: str, fragment: str) -> None:
    with pytest.raises(QueryError) as info:
        api.sql(sql)
    err = info.value
    assert err.code == code, err
    assert fragment in f"{err.message} {err.hint} {' '.join(err.candidates)}", err


def test_bi_tool_spellings(api: Engine) -> None:
    """What Superset, Metabase and Tableau generate maps to the dosi query it means."""
    superset = api.sql_plan(
        "SELECT DATE_TRUNC('month', metric_time__day) AS metric_time__day, sum(revenue) AS "
        '"SUM(revenue)" FROM public.shop WHERE metric_time__day >= TO_TIMESTAMP(\'2024-01-01 '
        "00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND metric_time__day < TO_TIMESTAMP("
        "'2024-07-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('month', "
        "metric_time__day) ORDER BY metric_time__day DESC LIMIT 10000"
    ).query
    assert superset == {
        "metrics": ["revenue"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "end": "2024-07-01"},
        "order_by": [{"key": "metric_time:month", "desc": True}],
        "limit": 10000,
    }
    metabase = api.sql_plan(
        'SELECT "public"."shop"."orders__channel" AS "orders__channel", '
        'CAST(date_trunc(\'week\', "public"."shop"."metric_time__day") AS timestamp) AS '
        '"metric_time__day", SUM("public"."shop"."revenue") AS "sum" FROM '
        '"public"."shop" WHERE "public"."shop"."metric_time__day" >= '
        "timestamp with time zone '2024-03-01 00:00:00.000Z' GROUP BY 1, 2 ORDER BY 1 ASC, "
        "2 ASC"
    ).query
    assert metabase is not None and metabase["group_by"] == ["orders.channel", "metric_time:week"]
    assert metabase["time_range"] == {"start": "2024-03-01"}
    tableau = api.sql_plan(
        'SELECT "shop"."customers__segment" AS "customers__segment", '
        'SUM("shop"."revenue") AS "sum:revenue:ok" FROM "public"."shop" "shop" '
        'WHERE (("shop"."orders__order_date" >= (DATE \'2024-01-01\')) AND '
        '("shop"."orders__order_date" <= (DATE \'2024-12-31\'))) GROUP BY 1'
    ).query
    assert tableau == {
        "metrics": ["revenue"],
        "group_by": ["customers.segment"],
        "time_range": {
            "start": "2024-01-01",
            "end": "2025-01-01",
            "dimension": "orders.order_date",
        },
    }


def test_relative_time_bounds() -> None:
    """`NOW() - INTERVAL '30 day'` and friends are constants of the server's clock."""
    now = dt.datetime(2025, 3, 31, 15, 30)
    cases = {
        "CAST(CAST(NOW() AS date) + INTERVAL '-30 day' AS timestamp)": dt.datetime(2025, 3, 1),
        "CURRENT_DATE - INTERVAL '7 days'": dt.datetime(2025, 3, 24),
        "date_trunc('month', now()) - interval '1 month'": dt.datetime(2025, 2, 1),
        "NOW() - INTERVAL '1' MONTH": dt.datetime(2025, 2, 28, 15, 30),
        "date_trunc('quarter', current_timestamp)": dt.datetime(2025, 1, 1),
    }
    for text, want in cases.items():
        assert literal_time(parse_one(text, read="postgres"), now) == want, text
