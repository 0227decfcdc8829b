"""Run compiled SQL on embedded DuckDB and shape the result.

The runner answers an Arrow table; dosi.execute.rows turns it into JSON-friendly rows
(`arrow_rows` and `to_python` stay importable from here).
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from dosi.errors import ExecuteError
from dosi.execute.options import ExecOptions
from dosi.execute.rejections import value_rejected
from dosi.execute.rows import arrow_rows
from dosi.execute.timers import Scheduled, after
from dosi.execute.values import to_python
from dosi.udf import error_from_engine, register_duckdb

#: Set at connect time: no extension is installed or loaded behind the query's back.
_CONNECT_LOCKDOWN: dict[str, str] = {
    "autoinstall_known_extensions": "false",
    "autoload_known_extensions": "false",
}
#: rows per Arrow batch when a row limit stops the fetch early
_BATCH_ROWS = 65_536
#: Set once the database file is attached: no file or network access beyond it.
_RUNTIME_LOCKDOWN = ("SET enable_external_access = false",)

#: DuckDB's refusals of a value in the statement (a cast, a range, a function argument): the
#: query's own literals or arguments are at fault, so the answer is a caller mistake.
VALUE_ERRORS = (
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.InvalidInputException,
)


def open_duckdb(
    path: str | None, read_only: bool = True, options: ExecOptions | None = None
) -> duckdb.DuckDBPyConnection:
    """A locked-down connection with the streaming-window functions registered (window-udf.md).

    The database file is attached to a private in-memory instance (under its usual catalog
    name, its file stem, made the default), so the lockdown never clashes with another
    connection of the same process to that file. Order matters: extension auto-install and
    auto-load are off from the start; the file is attached; external access is switched off;
    the window macros are created; the memory limit is set; and only then is the configuration
    locked, so no query can change any of it (`SET`, `INSTALL`, `ATTACH`, `COPY` and file
    readers all fail). `options.allow_extensions` skips the lockdown settings.
    """
    opts = options or ExecOptions()
    lock = not opts.allow_extensions
    try:
        con = duckdb.connect(":memory:", config=dict(_CONNECT_LOCKDOWN) if lock else {})
    except duckdb.Error as exc:
        raise ExecuteError("config", f"cannot start DuckDB: {_first(exc)}") from None
    try:
        if path not in (None, "", ":memory:"):
            _attach(con, str(path), read_only)
        for alias, extra in opts.attach:
            if Path(extra).is_file():
                con.execute(
                    f"ATTACH {exp.Literal.string(extra).sql('duckdb')} AS "
                    f"{exp.to_identifier(alias, quoted=True).sql('duckdb')} (READ_ONLY)"
                )
        if lock:
            for statement in _RUNTIME_LOCKDOWN:
                con.execute(statement)
        register_duckdb(con)
        if opts.memory_limit is not None:
            con.execute(f"SET memory_limit = '{opts.memory_limit}'")  # validated digits + unit
        # progress for `Engine.progress` (the command line's progress line), never printed
        con.execute("SET enable_progress_bar = true")
        con.execute("SET enable_progress_bar_print = false")
        con.execute("SET lock_configuration = true")
    except ExecuteError:
        con.close()
        raise
    except duckdb.Error as exc:
        con.close()
        raise ExecuteError(
            "config", f"cannot open DuckDB database `{str(path)[:200]}`: {_first(exc)}"
        ) from None
    return con


def _attach(con: duckdb.DuckDBPyConnection, path: str, read_only: bool) -> None:
    """ATTACH the file under its stem (the catalog name a direct connect would give it)."""
    if "\x00" in path:
        raise ExecuteError("config", "the DuckDB database path is not a valid path")
    if read_only and not Path(path).exists():
        raise ExecuteError(
            "config",
            f"DuckDB database `{path[:200]}` does not exist",
            hint="pass db_path= an existing DuckDB file (build the demo with "
            "`python examples/shop/generate.py`)",
        )
    stem = Path(path).stem or "db"
    if stem.lower() in ("memory", "temp", "system"):
        stem = f"{stem}_db"
    target = exp.Literal.string(path).sql("duckdb")
    alias = exp.to_identifier(stem, quoted=True).sql("duckdb")
    mode = " (READ_ONLY)" if read_only else ""
    con.execute(f"ATTACH {target} AS {alias}{mode}")  # both rendered by sqlglot, quoted
    con.execute(f"USE {alias}")


def _first(exc: BaseException) -> str:
    text = str(exc)
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, max_rows: int | None) -> pa.Table:
    """The statement's Arrow answer, or its first batches up to `max_rows` rows (the rest is
    never produced: a request's row limit + 1 is enough to refuse the answer)."""
    rel = con.sql(sql)
    if max_rows is None or rel is None:
        return rel.to_arrow_table() if rel is not None else pa.table({})
    to_reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_record_batch
    reader = to_reader(_BATCH_ROWS)
    batches = []
    seen = 0
    for batch in reader:
        batches.append(batch)
        seen += batch.num_rows
        if seen >= max_rows:
            break
    with contextlib.suppress(Exception):  # stop the rest of the statement
        reader.close()
    return pa.Table.from_batches(batches, schema=reader.schema).slice(0, max_rows)


def run_sql(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    timeout_secs: float | None = None,
    max_rows: int | None = None,
) -> pa.Table:
    """Run one statement; past `timeout_secs` a timer interrupts it (`timeout`); with
    `max_rows`, at most that many rows are fetched."""
    timer: Scheduled | None = None
    timed_out = threading.Event()
    state = threading.Lock()  # the timer never interrupts after the query has finished
    finished = False
    if timeout_secs is not None and timeout_secs > 0:

        def _interrupt() -> None:
            with state:
                if not finished:
                    timed_out.set()
                    con.interrupt()

        timer = after(timeout_secs, _interrupt)
    try:
        table = _fetch(con, sql, max_rows)
        with state:
            finished = True
        return table
    except duckdb.Error as exc:
        structured = error_from_engine(exc)
        if structured is not None:  # a bad streaming-window argument, named by the UDF
            raise structured from None
        if timed_out.is_set():
            raise ExecuteError(
                "timeout",
                f"the query ran longer than {timeout_secs}s and was cancelled",
                hint="raise timeout_secs, add a time_range, or group at a coarser grain",
            ) from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise ExecuteError(
                "memory_limit",
                f"the query needed more memory than allowed: {_first(exc)}",
                hint="raise memory_limit, add a time_range, or group at a coarser grain",
            ) from None
        if isinstance(exc, VALUE_ERRORS):
            raise value_rejected("DuckDB", _first(exc), sql, type(exc).__name__) from None
        raise ExecuteError(
            "sql_rejected",
            f"DuckDB rejected the query: {_first(exc)}",
            hint="check that the model's sources exist in the database (db_path)",
            detail={"sql": sql, "duckdb_error": type(exc).__name__},
        ) from None
    finally:
        with state:
            finished = True
        if timer is not None:
            timer.cancel()


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

    def run_capped(self, sql: str, timeout_secs: float | None, max_rows: int | None) -> pa.Table:
        """`run`, producing at most `max_rows` rows (a request's row limit + 1)."""
        return run_sql(self.connection, sql, timeout_secs, max_rows)

    def cancel(self) -> None:
        self.connection.interrupt()

    def progress(self) -> float | None:
        """DuckDB's progress of the running statement in percent; None when it reports none
        (no statement, or one too short for DuckDB to estimate)."""
        value = self.connection.query_progress()
        return value if value >= 0 else None

    def close(self) -> None:
        if self.owned:
            self.connection.close()


__all__ = ["DuckDBRunner", "arrow_rows", "open_duckdb", "run_sql", "to_python"]
