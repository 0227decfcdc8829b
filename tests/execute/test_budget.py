"""A request's budget (issue 29, item 1): the engine refuses an answer over its row or byte
limit before building a row, the row conversion and the encoding stop once the request is
cancelled or past its whole-request deadline, and within the limits the rows are the same
as without a budget."""

from __future__ import annotations

import json
import time

import pyarrow as pa
import pytest
from enginekit import dataset, field, metric, model_doc, to_yaml

from dosi import Engine
from dosi.errors import ExecuteError
from dosi.execute.budget import ResultBudget
from dosi.execute.duckdb_runner import DuckDBRunner, open_duckdb
from dosi.execute.rows import SLICE_ROWS, arrow_rows
from dosi.frontends.encode import encode_csv, encode_json
from dosi.frontends.limits import limits_from_env, parse_size, sql_with_limit

N = 2 * SLICE_ROWS + 17
MODEL = to_yaml(
    model_doc(
        [
            dataset(
                "big",
                [field("x", datatype="Integer", ext={"v": "1.7", "is_dimension": True})],
                source=f"SELECT range AS x FROM range({N})",
            )
        ],
        metrics=[metric("total", "SUM(big.x)")],
    )
)
ALL = {"from": "big", "fields": ["big.x"], "order_by": ["big.x"], "limit": N}


def test_issue29_item1_rows_in_slices_are_the_rows_without_a_budget() -> None:
    table = pa.table({"x": list(range(N)), "y": [str(i) for i in range(N)]})
    assert arrow_rows(table, ResultBudget()) == arrow_rows(table)
    assert arrow_rows(table)[-1] == {"x": N - 1, "y": str(N - 1)}


def test_issue29_item1_conversion_stops_on_cancel_and_at_the_deadline() -> None:
    table = pa.table({"x": list(range(N))})
    gone = ResultBudget()
    gone.cancel()  # the client went away
    with pytest.raises(ExecuteError) as info:
        arrow_rows(table, gone)
    assert info.value.code == "cancelled"
    late = ResultBudget(timeout_secs=0.01)
    time.sleep(0.05)
    with pytest.raises(ExecuteError) as info:
        arrow_rows(table, late)
    assert info.value.code == "timeout"
    with pytest.raises(ExecuteError) as info:
        encode_json({"rows": [{"x": 1}] * 10}, late)
    assert info.value.code == "timeout"


def test_issue29_item1_the_engine_refuses_before_building_rows() -> None:
    e = Engine(model_text=MODEL)
    try:
        with pytest.raises(ExecuteError) as info:
            e.select(ALL, cancellation=ResultBudget(max_rows=1000))
        assert info.value.code == "result_too_large"
        assert info.value.detail == {"limit": "rows", "max_rows": 1000}
        with pytest.raises(ExecuteError) as info:
            e.select(ALL, cancellation=ResultBudget(max_bytes=10_000))
        detail = info.value.detail or {}
        assert detail["limit"] == "bytes" and 0 < detail["rows_fit"] < N
        fits = e.select({**ALL, "limit": detail["rows_fit"]}, cancellation=ResultBudget())
        assert fits["rows"] == [{"x": i} for i in range(detail["rows_fit"])]
        assert e.select(ALL, cancellation=ResultBudget(max_rows=N))["row_count"] == N
    finally:
        e.close()


def test_issue29_item1_encoded_bytes_count_against_the_limit() -> None:
    rows = [{"x": i, "label": "a" * 20} for i in range(20_000)]
    result = {"columns": ["x", "label"], "rows": rows, "row_count": len(rows)}
    with pytest.raises(ExecuteError) as info:
        encode_csv(result, ResultBudget(max_bytes=50_000))
    assert info.value.code == "result_too_large"
    body = encode_json(result, ResultBudget(max_bytes=10_000_000))
    assert json.loads(body) == result


def test_issue29_item1_limits_read_flags_then_the_environment() -> None:
    assert parse_size("64MB", "x") == 64_000_000 and parse_size("2GiB", "x") == 2 << 30
    env = {"DOSI_MAX_ROWS": "500", "DOSI_MAX_RESULT_BYTES": "1MB"}
    assert limits_from_env(env=env).max_rows == 500
    assert limits_from_env(env=env).max_bytes == 1_000_000
    assert limits_from_env(max_rows=7, env=env).max_rows == 7
    assert limits_from_env(max_rows=0, env=env).max_rows is None  # 0: no limit
    assert limits_from_env(env={}).max_rows == 100_000
    assert sql_with_limit("SELECT a FROM m", 5) == "SELECT a FROM m LIMIT 5"
    assert sql_with_limit("SELECT a FROM m LIMIT 3", 5) == "SELECT a FROM m LIMIT 3"


def test_issue29_item1_duckdb_produces_only_the_rows_the_limit_needs() -> None:
    """Over the row limit DuckDB streams limit + 1 rows and stops; a timeout or a refused
    statement on that path is the same structured error as on the full fetch."""
    runner = DuckDBRunner(open_duckdb(None), owned=True)
    try:
        sql = "SELECT range AS x FROM range(5000000) ORDER BY x"
        capped = runner.run_capped(sql, None, 100_001)
        assert capped.column("x").to_pylist() == list(range(100_001))
        assert capped.schema == runner.run("SELECT range AS x FROM range(3)").schema
        slow = "SELECT SUM(a.range * b.range) AS s FROM range(200000) a, range(200000) b"
        with pytest.raises(ExecuteError) as info:
            runner.run_capped(slow, 0.2, 10)
        assert info.value.code == "timeout"
        with pytest.raises(ExecuteError) as info:
            runner.run_capped("SELECT nope FROM nowhere", None, 10)
        assert info.value.code == "sql_rejected"
    finally:
        runner.close()
