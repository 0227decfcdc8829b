"""Run compiled SQL on embedded DuckDB and shape the result.

Rows come back as JSON-friendly dicts (dates and timestamps as ISO strings, decimals as floats),
as the reference engine returns them; `arrow` keeps the native types.
"""

from __future__ import annotations

import datetime as dt
import decimal
import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from dosi.errors import ExecuteError


def open_duckdb(path: str | None, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """A connection with the streaming-window functions registered (window-udf.md)."""
    try:
        if path in (None, "", ":memory:"):
            con = duckdb.connect(":memory:")
        else:
            if read_only and not Path(path).exists():
                raise ExecuteError(
                    "config",
                    f"DuckDB database `{path}` does not exist",
                    hint="pass db_path= an existing DuckDB file (build the demo with "
                    "`python examples/shop/generate.py`)",
                )
            con = duckdb.connect(path, read_only=read_only)
    except duckdb.Error as exc:
        raise ExecuteError("config", f"cannot open DuckDB database `{path}`: {exc}") from None
    from dosi.udf import register_duckdb

    register_duckdb(con)
    return con


def to_python(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        return int(value) if isinstance(exponent, int) and exponent >= 0 else float(value)
    if isinstance(value, dt.time):
        return value.isoformat()
    return value


def run_sql(con: duckdb.DuckDBPyConnection, sql: str, timeout_secs: float | None = None) -> pa.Table:
    timer: threading.Timer | None = None
    timed_out = threading.Event()
    if timeout_secs is not None and timeout_secs > 0:

        def _interrupt() -> None:
            timed_out.set()
            con.interrupt()

        timer = threading.Timer(timeout_secs, _interrupt)
        timer.start()
    try:
        return con.sql(sql).to_arrow_table()
    except duckdb.Error as exc:
        from dosi.udf import error_from_engine

        structured = error_from_engine(exc)
        if structured is not None:  # a bad streaming-window argument, named by the UDF
            raise structured from None
        if timed_out.is_set():
            raise ExecuteError(
                "timeout",
                f"the query ran longer than {timeout_secs}s and was cancelled",
                hint="raise timeout_secs, add a time_range, or group at a coarser grain",
            ) from None
        raise ExecuteError(
            "sql_rejected",
            f"DuckDB rejected the query: {str(exc).splitlines()[0]}",
            hint="check that the model's sources exist in the database (db_path)",
            detail={"sql": sql},
        ) from None
    finally:
        if timer is not None:
            timer.cancel()


def arrow_rows(table: pa.Table) -> list[dict[str, Any]]:
    cols = table.column_names
    data = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [{c: to_python(data[j][i]) for j, c in enumerate(cols)} for i in range(table.num_rows)]


class DuckDBRunner:
    """The Runner protocol over a DuckDB connection (dosi.execute.runner): a database file or
    in memory, or a connection handed in; cancel is DuckDB's interrupt."""

    engine = "DuckDB"
    dialect = "duckdb"

    def __init__(self, connection: duckdb.DuckDBPyConnection, owned: bool) -> None:
        self.connection = connection
        self.owned = owned

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> DuckDBRunner:
        return cls(open_duckdb(uri), owned=True)

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        return run_sql(self.connection, sql, timeout_secs)

    def cancel(self) -> None:
        self.connection.interrupt()

    def close(self) -> None:
        if self.owned:
            self.connection.close()
