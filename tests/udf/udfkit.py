"""Fixtures for the window-UDF tests: a DuckDB connection and a DataFusion context, each with
the functions registered, and helpers that run one query over an Arrow table named `t`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pyarrow as pa
import pytest
from udf_expected import us_of_datetime

import dosi.udf

Runner = Callable[[str, pa.Table | None], list[Any]]


@pytest.fixture
def duck() -> Iterator[Any]:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    dosi.udf.register_duckdb(con)
    yield con
    con.close()


@pytest.fixture
def dfctx() -> Any:
    datafusion = pytest.importorskip("datafusion")
    ctx = datafusion.SessionContext()
    dosi.udf.register_datafusion(ctx)
    return ctx


def to_us(value: Any) -> Any:
    """Engine TIMESTAMP value -> epoch microseconds (None stays None)."""
    if value is None:
        return None
    assert isinstance(value, datetime), value
    assert value.tzinfo is None, "results must be timestamps without time zone (UDF-GEN-03)"
    return us_of_datetime(value)


def duckdb_column(con: Any, sql: str, table: pa.Table | None = None) -> list[Any]:
    """First column of `sql` on DuckDB, with `table` visible as `t`."""
    if table is not None:
        con.register("t", table)
    try:
        return [row[0] for row in con.execute(sql).fetchall()]
    finally:
        if table is not None:
            con.unregister("t")


def datafusion_column(ctx: Any, sql: str, table: pa.Table | None = None) -> list[Any]:
    """First column of `sql` on DataFusion, with `table` visible as `t`."""
    if table is not None:
        if ctx.table_exist("t"):
            ctx.deregister_table("t")
        ctx.register_record_batches("t", [table.to_batches()])
    result = ctx.sql(sql).to_arrow_table()
    return result.column(0).to_pylist()


@pytest.fixture
def run_duckdb(duck: Any) -> Runner:
    return lambda sql, table=None: duckdb_column(duck, sql, table)


@pytest.fixture
def run_datafusion(dfctx: Any) -> Runner:
    return lambda sql, table=None: datafusion_column(dfctx, sql, table)


def ms_interval(ms: int) -> str:
    """An INTERVAL literal both engines read (the value is an int from the test itself)."""
    return f"INTERVAL '{int(ms)} milliseconds'"


class Engine:
    """One engine with the window functions registered, seen through the same test interface.

    DataFusion has one signature per Python UDF, so its offset forms carry other names
    (`dosi.udf.datafusion_udfs.OFFSET_VARIANTS`) and integer epoch milliseconds are passed
    through its own `to_timestamp_millis`; `call` and `epoch_ms` hide that.
    """

    def __init__(self, name: str, handle: Any) -> None:
        self.name = name
        self.handle = handle

    def run(self, sql: str, table: pa.Table | None = None) -> list[Any]:
        if self.name == "duckdb":
            return duckdb_column(self.handle, sql, table)
        return datafusion_column(self.handle, sql, table)

    def call(self, function: str, ts: str, *args: str) -> str:
        from dosi.udf.datafusion_udfs import OFFSET_VARIANTS

        if self.name == "datafusion":
            function = OFFSET_VARIANTS.get((function, 1 + len(args)), function)
        return f"{function}({', '.join([ts, *args])})"

    def epoch_ms(self, int_sql: str) -> str:
        """An integer epoch-milliseconds argument as this engine takes it."""
        return int_sql if self.name == "duckdb" else f"to_timestamp_millis({int_sql})"


@pytest.fixture(params=["duckdb", "datafusion"])
def engine(request: pytest.FixtureRequest) -> Engine:
    if request.param == "duckdb":
        return Engine("duckdb", request.getfixturevalue("duck"))
    return Engine("datafusion", request.getfixturevalue("dfctx"))
