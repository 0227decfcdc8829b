"""Dimension-only queries (issue 21 item 6): a query without metrics answers the distinct
combinations of its group_by fields, across the join path, with where_sql, order_by and limit,
on the Python API, the CLI, REST and MCP. Expected rows come from hand-written SQL on the same
DuckDB tables (`shop_ref`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from enginekit import SHOP_MODEL, assert_rows_equal, result_rows
from fastapi.testclient import TestClient
from mcp import Client

from dosi.engine import Engine
from dosi.errors import QueryError
from dosi.frontends.cli import cli
from dosi.frontends.mcp.server import build_server
from dosi.frontends.rest.app import create_app

Run = Callable[..., Any]


def test_distinct_values_of_one_field(shop_run: Run, shop_ref: Any) -> None:
    res = shop_run({"metrics": [], "group_by": ["orders.channel"], "order_by": ["channel"]})
    assert res["columns"] == ["channel"]
    assert result_rows(res) == shop_ref.exact(
        "SELECT DISTINCT channel FROM main.orders ORDER BY channel NULLS LAST"
    )
    assert res["outputs"] == [] and res["row_count"] == 4  # three channels and NULL


def test_across_a_join_with_filter_order_and_limit(shop_run: Run, shop_ref: Any) -> None:
    """The column names are the metric query's (`segment`, `order_date__month`), the order
    key one of them; a bucketed Date stays a date."""
    q = {
        "group_by": ["customers.segment", "orders.order_date:month"],
        "where_sql": "orders.status = 'completed' AND orders.order_date >= '2024-06-01'",
        "order_by": [{"key": "order_date__month", "desc": True}, {"key": "segment"}],
        "limit": 7,
    }
    res = shop_run(q)
    assert res["columns"] == ["segment", "order_date__month"]
    expected = shop_ref.rows(
        """
        SELECT DISTINCT c.segment, DATE_TRUNC('month', o.order_date)::DATE AS m
        FROM main.orders o LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        WHERE o.status = 'completed' AND o.order_date >= DATE '2024-06-01'
        ORDER BY m DESC, c.segment NULLS LAST LIMIT 7
        """
    )
    assert result_rows(res) == expected
    assert len(expected) == 7 and all(len(r["order_date__month"]) == 10 for r in res["rows"])
    names = [c["column"] for c in res["requested_columns"]]
    assert names == ["segment", "order_date__month"]


def test_two_dimension_tables_read_through_the_fact_that_joins_both(
    shop_run: Run, shop_ref: Any
) -> None:
    """customers and products meet only in order_items (via orders): the combinations that
    order lines hold."""
    res = shop_run({"group_by": ["customers.segment", "products.category"]})
    expected = shop_ref.rows(
        """
        SELECT DISTINCT c.segment, p.category FROM main.order_items i
        LEFT JOIN main.orders o ON i.order_id = o.order_id
        LEFT JOIN main.customers c ON o.customer_id = c.customer_id
        INNER JOIN main.products p ON i.product_id = p.product_id
        """
    )
    assert_rows_equal(result_rows(res), expected)
    assert len(expected) > 4  # more than one category per segment: a real cross of the two


def test_execute_arrow_and_compile(shop: Engine, shop_db: Path, shop_ref: Any) -> None:
    """The filtered dataset (customers) is read when the grouped one (regions) cannot reach it."""
    q = {"group_by": ["regions.region_name"], "where_sql": "customers.segment = 'corporate'"}
    table = shop.execute_arrow(q, db_path=shop_db)
    assert table.column_names == ["region_name"]
    want = shop_ref.rows(
        "SELECT DISTINCT r.region_name FROM main.customers c "
        "LEFT JOIN main.regions r ON c.region_id = r.region_id WHERE c.segment = 'corporate'"
    )
    assert_rows_equal([(v,) for v in table.column("region_name").to_pylist()], want)
    sql = shop.compile(q)["sql"]
    assert sql.upper().startswith("SELECT DISTINCT") and "GROUP BY" not in sql.upper()
    assert "customers" in shop.explain(q)


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"group_by": ["metric_time:month"]}, "metric_time_needs_metric"),
        ({"group_by": ["orders.channel"], "params": {"n": 1}}, "unsupported_in_dimension_query"),
        ({"group_by": ["orders.chanel"]}, "unknown_dimension"),
        ({"group_by": ["customers.segment", "events.event_type"]}, "no_join_path"),
        ({"metrics": []}, "empty_query"),
    ],
)
def test_structured_errors(shop: Engine, query: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as info:
        shop.compile(query)
    assert info.value.code == code, info.value


def test_every_surface_answers_the_same_rows(shop: Engine, shop_db: Path) -> None:
    q = {"metrics": [], "group_by": ["orders.channel"], "order_by": ["channel"]}
    want = shop.execute(q, db_path=shop_db)["rows"]
    r = CliRunner().invoke(
        cli,
        [
            "query",
            "-m",
            str(SHOP_MODEL),
            "--db",
            str(shop_db),
            "-g",
            "orders.channel",
            "--order-by",
            "channel",
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["rows"] == want
    with TestClient(create_app(SHOP_MODEL, db_path=str(shop_db))) as c:
        body = c.post("/v1/query", json=q).json()
    assert body["rows"] == want

    async def mcp() -> Any:
        async with Client(build_server(SHOP_MODEL, db_path=str(shop_db))) as client:
            out = await client.call_tool(
                "query", {"group_by": ["orders.channel"], "order_by": ["channel"]}
            )
            assert not out.is_error, out.content
            return json.loads(out.content[0].text)["rows"]

    assert asyncio.run(mcp()) == want


def test_object_form_group_by_items(mini_run: Run, mini_ref: Any) -> None:
    """Issue 21 item 6: the object form a metric query takes (`{"field": ..., "grain": ...}`,
    the reference engine's form) groups a dimension-only query too (was invalid_query)."""
    res = mini_run(
        {
            "metrics": [],
            "group_by": [
                {"field": "orders.channel"},
                {"field": "orders.order_date", "grain": "month"},
            ],
            "order_by": [{"key": "channel"}, {"key": "order_date__month"}],
        }
    )
    assert res["columns"] == ["channel", "order_date__month"]
    want = mini_ref.rows(
        "SELECT DISTINCT channel, CAST(date_trunc('month', order_date) AS DATE) FROM orders "
        "ORDER BY 1 NULLS LAST, 2"
    )
    assert_rows_equal(result_rows(res), want)
