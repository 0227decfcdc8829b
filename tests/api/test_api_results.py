"""Result shapes (issue 2): {dialect, sql, columns, rows, row_count, warnings} plus a pyarrow
Table, value types, and "a compile that succeeds produces SQL that runs".

Requirement IDs: CORE-Q-16 (outputs), SURF-PY-04 (Python results are dicts carrying outputs),
SURF-ARROW-01 (Arrow field metadata), reference §1.6.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from enginekit import assert_rows_equal, result_rows

from dosi.engine import Engine
from dosi.errors import ExecuteError

Run = Callable[..., Any]

QUERY = {
    "metrics": ["revenue", "order_count", "avg_order"],
    "group_by": ["customers.region", "orders.order_date:month"],
}


def test_execute_result_keys(mini_run: Run) -> None:
    """Issue 2: results carry dialect, sql, columns, rows, row_count and warnings (plus the
    reference's outputs and requested_columns)."""
    res = mini_run(QUERY)
    assert {"dialect", "sql", "columns", "rows", "row_count", "warnings"} <= set(res)
    assert {"outputs", "requested_columns"} <= set(res)
    assert res["dialect"] == "duckdb"
    assert isinstance(res["sql"], str) and res["sql"].upper().startswith(("SELECT", "WITH"))
    assert res["warnings"] == []
    assert res["row_count"] == len(res["rows"])
    assert json.loads(res.to_json()).keys() == res.keys()  # strict JSON in the one rule


def test_columns_are_group_by_then_metrics_in_query_order(mini_run: Run) -> None:
    """Reference §1.6: columns are the group-by outputs in query order, then the metrics."""
    res = mini_run(QUERY)
    assert res["columns"] == ["region", "order_date__month", "revenue", "order_count", "avg_order"]
    assert all(list(r) == res["columns"] for r in res["rows"])


def test_core_q_16_outputs_name_each_metric_column(mini_run: Run) -> None:
    """CORE-Q-16: one `outputs` entry per metric column (dimensions get none)."""
    assert mini_run(QUERY)["outputs"] == [
        {"column": "revenue", "metric": "revenue"},
        {"column": "order_count", "metric": "order_count"},
        {"column": "avg_order", "metric": "avg_order"},
    ]


def test_rows_match_hand_written_sql(mini_run: Run, mini_ref: Any) -> None:
    """The rows of a joined, grained, multi-metric query equal hand-written SQL."""
    expected = mini_ref.rows(
        """
        SELECT c.region, CAST(DATE_TRUNC('month', o.order_date) AS DATE), SUM(o.amount),
               COUNT(o.order_id), CAST(SUM(o.amount) AS DOUBLE) / NULLIF(COUNT(o.order_id), 0)
        FROM orders o LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1, 2
        """
    )
    assert_rows_equal(result_rows(mini_run(QUERY)), expected)


def test_arrow_table_carries_the_same_result(mini_run: Run) -> None:
    """Issue 2: execute also returns a pyarrow Table with the same columns and rows."""
    res = mini_run(QUERY)
    table = res.arrow
    assert isinstance(table, pa.Table)
    assert table.column_names == res["columns"]
    assert table.num_rows == res["row_count"]
    assert res.to_arrow() is table
    assert table.column("order_count").to_pylist() == [r["order_count"] for r in res["rows"]]


def test_surf_arrow_01_metric_columns_carry_field_metadata(mini_run: Run) -> None:
    """SURF-ARROW-01: metric columns carry `dosi.metric` (and `dosi.params`) metadata."""
    schema = mini_run(QUERY).arrow.schema
    meta = schema.field("revenue").metadata
    assert meta[b"dosi.metric"] == b"revenue"
    assert b"dosi.params" in meta
    assert not schema.field("region").metadata


def test_row_value_types(mini_run: Run) -> None:
    """Reference §1.6: dates as ISO strings (a grained Date stays a date, issue 8 item 7), SUM
    over DECIMAL as the exact `decimal.Decimal` at the column's scale (issue 21 item 1), COUNT
    as int, ratio as float, NULL as None."""
    res = mini_run(
        {
            "metrics": ["revenue", "order_count", "avg_order"],
            "group_by": ["orders.order_date", "orders.order_date:month"],
            "where_sql": "orders.order_id IN (1, 7)",
        }
    )
    first, seventh = res["rows"]
    assert first == {
        "order_date": "2024-01-05",
        "order_date__month": "2024-01-01",
        "revenue": decimal.Decimal("100.00"),
        "order_count": 1,
        "avg_order": 100.0,
    }
    assert type(first["revenue"]) is decimal.Decimal and str(first["revenue"]) == "100.00"
    assert isinstance(first["order_count"], int)
    assert seventh["revenue"] is None and seventh["avg_order"] is None


def test_compile_result_shape(mini: Engine) -> None:
    """Reference §1.6: compile returns dialect, sql, outputs, warnings, requested_columns."""
    res = mini.compile(QUERY)
    assert set(res) == {"dialect", "sql", "outputs", "warnings", "requested_columns"}
    assert res["dialect"] == "duckdb"


def test_compiled_sql_runs_as_is_on_duckdb(mini: Engine, mini_db: Path, mini_ref: Any) -> None:
    """Issue 2: a compile that succeeds produces SQL that runs; running it by hand gives the
    same rows as execute()."""
    sql = mini.compile(QUERY)["sql"]
    con = duckdb.connect(str(mini_db), read_only=True)
    try:
        direct = con.execute(sql).fetchall()
    finally:
        con.close()
    assert_rows_equal(direct, result_rows(mini.execute(QUERY, db_path=mini_db)))


def test_identical_queries_compile_to_identical_sql(mini: Engine) -> None:
    """Reference §5.2: compiling is deterministic (byte-identical SQL)."""
    assert mini.compile(QUERY)["sql"] == mini.compile(json.loads(json.dumps(QUERY)))["sql"]


def test_sql_errors_surface_as_execute_error(mini: Engine, tmp_path: Path) -> None:
    """Reference §1.6: a database without the model's tables gives ExecuteError
    (`sql_rejected`), never a raw DuckDB exception."""
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(ExecuteError) as info:
        mini.execute({"metrics": ["revenue"]}, db_path=empty)
    assert info.value.code == "sql_rejected"


def test_shop_readme_example_1_revenue_by_channel(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 1 on the shop data, checked against SQL."""
    res = shop_run(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "revenue", "desc": True}],
        }
    )
    expected = shop_ref.con.execute(  # DuckDB's own exact DECIMAL sums
        "SELECT channel, SUM(amount), COUNT(order_id) FROM main.orders GROUP BY 1 ORDER BY 2 DESC"
    ).fetchall()
    assert [tuple(r.values()) for r in res["rows"]] == expected
    assert expected[0] == ("web", decimal.Decimal("1622086.96"), 2050)


def test_shop_readme_example_2_monthly_series_with_a_gap(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 2: 2024 has 11 monthly rows (no orders in 2024-02)."""
    res = shop_run(
        {
            "metrics": ["revenue", "order_count", "avg_order_value"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        }
    )
    expected = shop_ref.rows(
        """
        SELECT CAST(DATE_TRUNC('month', order_date) AS DATE), SUM(amount), COUNT(order_id),
               CAST(SUM(amount) AS DOUBLE) / COUNT(order_id)
        FROM main.orders WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01'
        GROUP BY 1
        """
    )
    assert res["row_count"] == 11
    assert_rows_equal(result_rows(res), expected)


def test_shop_readme_example_10_datetime_axis_by_day(shop_run: Run, shop_ref: Any) -> None:
    """Shop README example 10: a DateTime axis (events.event_ts) by day inside a date range; the
    range bounds are dates, the end exclusive."""
    res = shop_run(
        {
            "metrics": ["event_count", "active_users", "event_value"],
            "group_by": ["metric_time:day"],
            "time_range": {"start": "2025-11-24", "end": "2025-12-01"},
        }
    )
    expected = shop_ref.rows(
        """
        SELECT DATE_TRUNC('day', event_ts), COUNT(event_id), COUNT(DISTINCT user_id), SUM(value)
        FROM main.events
        WHERE event_ts >= TIMESTAMP '2025-11-24' AND event_ts < TIMESTAMP '2025-12-01'
        GROUP BY 1
        """
    )
    assert_rows_equal(result_rows(res), expected)
    assert [(r["event_count"], r["active_users"]) for r in res["rows"]][:5] == [
        (3, 1),
        (3, 1),
        (22, 2),
        (9, 2),
        (46, 9),
    ]


@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter", "year"])
def test_buckets_keep_their_column_type(shop_run: Run, grain: str) -> None:
    """Issue 8 item 7: a bucket of a DATE column is a DATE (Arrow date32, `YYYY-MM-DD` in
    rows); a bucket of a TIMESTAMP column stays a TIMESTAMP (`YYYY-MM-DD 00:00:00`)."""
    dated = shop_run({"metrics": ["revenue"], "group_by": [f"metric_time:{grain}"]})
    col = f"metric_time__{grain}"
    assert dated.arrow.schema.field(col).type == pa.date32()
    assert all(len(r[col]) == 10 for r in dated["rows"])
    timed = shop_run({"metrics": ["event_count"], "group_by": [f"events.event_ts:{grain}"]})
    col = f"event_ts__{grain}"
    assert pa.types.is_timestamp(timed.arrow.schema.field(col).type)
    assert all(r[col].endswith(" 00:00:00") for r in timed["rows"])
