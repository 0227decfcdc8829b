"""dosi.sql.stream_window_bounds: the boundaries as plain SQL (no UDFs) rendered through sqlglot; run on
DuckDB (and on PostgreSQL when DOSI_TEST_POSTGRES holds a psql connection string), compared with
plain integer math and with the DuckDB macros (UDF-GEN-02/03, UDF-GAP-05, portability)."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import timedelta
from typing import Any

import pyarrow as pa
import pytest
import sqlglot
import udf_expected as expected
from sqlglot import exp
from udf_expected import DAY, HOUR, MINUTE
from udfkit import to_us

from dosi.errors import QueryError
from dosi.sql import stream_window_bounds as ps

duckdb = pytest.importorskip("duckdb")

TS_US = [0, -1, -1_001, -60_000_001, -2_208_988_800_000_001, 1_577_836_830_123_456, 86_399_999_999]
UDF_NAMES = ("tumble", "hop", "session", "cumulate")

# (builder, positional ms arguments, macro call with `ts` for the same window, expected fn)
CASES: list[tuple[Any, tuple[int, ...], str, Any]] = [
    (ps.tumble_start_expr, (MINUTE, 0), "tumble(ts, INTERVAL 1 MINUTE)", expected.tumble),
    (
        ps.tumble_start_expr,
        (15 * MINUTE, -5 * MINUTE),
        "tumble(ts, INTERVAL 15 MINUTE, INTERVAL '-5' MINUTE)",
        expected.tumble,
    ),
    (
        ps.tumble_end_expr,
        (HOUR, 90 * MINUTE),
        "tumble_end(ts, INTERVAL 1 HOUR, INTERVAL 90 MINUTE)",
        expected.tumble_end,
    ),
    (
        ps.hop_start_expr,
        (MINUTE, 5 * MINUTE, 10_000),
        "hop(ts, INTERVAL 1 MINUTE, INTERVAL 5 MINUTE, INTERVAL 10 SECOND)",
        expected.hop,
    ),
    (
        ps.hop_end_expr,
        (2 * MINUTE, 5 * MINUTE, 0),
        "hop_end(ts, INTERVAL 2 MINUTE, INTERVAL 5 MINUTE)",
        expected.hop_end,
    ),
    (
        ps.cumulate_start_expr,
        (HOUR, DAY),
        "cumulate(ts, INTERVAL 1 HOUR, INTERVAL 1 DAY)",
        expected.cumulate,
    ),
    (
        ps.cumulate_end_expr,
        (5 * MINUTE, HOUR),
        "cumulate_end(ts, INTERVAL 5 MINUTE, INTERVAL 1 HOUR)",
        expected.cumulate_end,
    ),
]


def table(values: list[int | None], kind: pa.DataType) -> pa.Table:
    return pa.table({"i": pa.array(range(len(values)), pa.int64()), "ts": pa.array(values, kind)})


def run(con: Any, sql: str, data: pa.Table) -> list[Any]:
    con.register("t", data)
    try:
        return [r[0] for r in con.execute(sql).fetchall()]
    finally:
        con.unregister("t")


def select(node: exp.Expression, dialect: str = "duckdb") -> str:
    return exp.select(exp.alias_(node, "r")).from_("t").order_by("i").sql(dialect)


@pytest.mark.parametrize(("builder", "args", "macro", "want"), CASES)
def test_duckdb_rendering_matches_expected_and_macros(
    duck: Any, builder: Any, args: tuple[int, ...], macro: str, want: Any
) -> None:
    plain = duckdb.connect()  # no UDFs registered: the SQL must stand on its own
    try:
        for kind in (pa.timestamp("us"), pa.timestamp("us", tz="Europe/Berlin")):
            data = table([*TS_US, None], kind)
            sql = select(builder(exp.column("ts"), *args, "duckdb"))
            assert not any(f"{name}(" in sql.lower() for name in UDF_NAMES)
            got = [to_us(v) for v in run(plain, sql, data)]
            assert got == [*(want(v // 1000, *args) * 1000 for v in TS_US), None]
            macro_got = [to_us(v) for v in run(duck, f"SELECT {macro} FROM t ORDER BY i", data)]
            assert got == macro_got
    finally:
        plain.close()


def test_epoch_ms_kind_and_output_on_duckdb() -> None:
    con = duckdb.connect()
    try:
        ms = [0, -1, -60_001, 1_577_836_830_123, None]
        data = table(ms, pa.int64())
        node = ps.tumble_start_expr(
            exp.column("ts"), MINUTE, 0, "duckdb", ts_kind="epoch_ms", output="epoch_ms"
        )
        assert run(con, select(node), data) == [0, -60_000, -120_000, 1_577_836_800_000, None]
        node = ps.session_expr(exp.column("ts"), MINUTE, "duckdb", ts_kind="epoch_ms")
        assert [to_us(v) for v in run(con, select(node), data)] == [
            None if v is None else v * 1000 for v in ms
        ]
        # session with epoch-ms output floors a microsecond timestamp
        node = ps.session_expr(exp.column("ts"), MINUTE, "duckdb", output="epoch_ms")
        assert run(con, select(node), table([-1, 1_999], pa.timestamp("us"))) == [-1, 1]
    finally:
        con.close()


def test_result_type_is_timestamp_on_duckdb() -> None:
    con = duckdb.connect()
    try:
        node = ps.hop_end_expr(sqlglot.parse_one("TIMESTAMP '2020-01-01'"), MINUTE, HOUR)
        assert con.execute(f"SELECT typeof({node.sql('duckdb')})").fetchone() == ("TIMESTAMP",)
    finally:
        con.close()


def test_postgres_rendering_is_plain_sql() -> None:
    node = ps.tumble_start_expr(exp.column("ts"), MINUTE, -5_000, "postgres")
    sql = node.sql("postgres")
    assert "EXTRACT(EPOCH FROM ts)" in sql
    assert "INTERVAL '1 MICROSECOND'" in sql
    assert not any(f"{name}(" in sql.lower() for name in UDF_NAMES)
    sqlglot.parse_one(sql, read="postgres")  # it parses back
    ms_sql = ps.hop_start_expr(
        exp.column("ms"), MINUTE, HOUR, 0, "postgres", ts_kind="epoch_ms", output="epoch_ms"
    ).sql("postgres")
    assert "EXTRACT" not in ms_sql and "INTERVAL" not in ms_sql


@pytest.mark.parametrize("dialect", ["bigquery", "spark", "databricks"])
def test_warehouse_renderings(dialect: str) -> None:
    sql = ps.cumulate_start_expr(exp.column("ts"), HOUR, DAY, dialect).sql(dialect)
    # Spark's UNIX_MICROS takes timestamps only, so a DATE column is cast first (issue 14)
    want = {
        "bigquery": "UNIX_MICROS(ts)",
        "spark": "UNIX_MICROS(CAST(ts AS TIMESTAMP))",
        "databricks": "UNIX_MICROS(CAST(ts AS TIMESTAMP))",
    }[dialect]
    assert want in sql and "TIMESTAMP_MICROS(" in sql
    sqlglot.parse_one(sql, read=dialect)


def test_identifiers_are_quoted_not_pasted() -> None:
    column = exp.column('odd "name"; drop table x', quoted=True)
    sql = ps.tumble_start_expr(column, MINUTE, 0, "duckdb").sql("duckdb")
    assert '"odd ""name""; drop table x"' in sql
    assert column.sql() == '"odd ""name""; drop table x"'  # the input tree is not changed


def test_unsupported_dialect() -> None:
    with pytest.raises(QueryError) as info:
        ps.tumble_start_expr(exp.column("ts"), MINUTE, 0, "postgress")
    assert info.value.code == "unsupported_dialect"
    assert "postgres" in info.value.candidates


@pytest.mark.parametrize(
    ("call", "function", "argument"),
    [
        (lambda: ps.tumble_start_expr(exp.column("ts"), 0), "tumble", "interval"),
        (lambda: ps.tumble_end_expr(exp.column("ts"), -1), "tumble_end", "interval"),
        (lambda: ps.hop_start_expr(exp.column("ts"), 2 * MINUTE, MINUTE), "hop", "slide"),
        (lambda: ps.hop_end_expr(exp.column("ts"), MINUTE, 0), "hop_end", "size"),
        (lambda: ps.session_expr(exp.column("ts"), 0), "session", "gap"),
        (lambda: ps.cumulate_start_expr(exp.column("ts"), 7, 60), "cumulate", "size"),
        (lambda: ps.cumulate_end_expr(exp.column("ts"), 120, 60), "cumulate_end", "step"),
    ],
)
def test_builders_validate_like_the_udfs_UDF_GAP_02_04(
    call: Any, function: str, argument: str
) -> None:
    with pytest.raises(QueryError) as info:
        call()
    assert info.value.code == "invalid_window_argument"
    assert info.value.detail == {"function": function, "argument": argument}


def _psql(dsn: str, sql: str) -> list[str]:
    done = subprocess.run(
        ["psql", dsn, "-AtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(
    not os.environ.get("DOSI_TEST_POSTGRES") or shutil.which("psql") is None,
    reason="set DOSI_TEST_POSTGRES to a psql connection string to run on PostgreSQL",
)
@pytest.mark.parametrize(("builder", "args", "macro", "want"), CASES)
def test_postgres_execution_matches_expected(
    builder: Any, args: tuple[int, ...], macro: str, want: Any
) -> None:
    dsn = os.environ["DOSI_TEST_POSTGRES"]
    rows = ", ".join(
        f"({i}, TIMESTAMP '{(expected.EPOCH + timedelta(microseconds=v)).isoformat(sep=' ')}')"
        for i, v in enumerate(TS_US)
    )
    node = builder(exp.column("ts"), *args, "postgres")
    as_us = f"CAST(FLOOR(EXTRACT(EPOCH FROM ({node.sql('postgres')})) * 1000000) AS BIGINT)"
    lines = _psql(dsn, f"SELECT {as_us} FROM (VALUES {rows}) AS t(i, ts) ORDER BY i")
    assert [int(x) for x in lines] == [want(v // 1000, *args) * 1000 for v in TS_US]
    ms_node = builder(exp.column("ts"), *args, "postgres", output="epoch_ms")
    lines = _psql(
        dsn, f"SELECT {ms_node.sql('postgres')} FROM (VALUES {rows}) AS t(i, ts) ORDER BY i"
    )
    assert [int(x) for x in lines] == [want(v // 1000, *args) for v in TS_US]
