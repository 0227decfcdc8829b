"""The Runner protocol every engine implements (connect, run -> Arrow, cancel, close) and the
pieces runners share: the optional driver import with a `missing_driver` error naming the pip
extra, a timeout that calls `cancel()`, and DB-API rows -> Arrow.

Timeouts are a runner option: `run(sql, timeout_secs)` starts a timer whose expiry calls the
runner's own `cancel()` (DuckDB interrupt, SQLite interrupt, PostgreSQL cancel request, Spark
job-tag interrupt, ...) and the failure then reads `timeout`."""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from dosi.errors import ExecuteError
from dosi.execute.alarms import Alarm, after
from dosi.execute.connection_loss import connection_lost, is_lost
from dosi.execute.rejections import is_data_error, value_rejected


@runtime_checkable
class Runner(Protocol):
    """One open connection to one engine. `dialect` is the dosi dialect its SQL is rendered in."""

    dialect: str

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table: ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


def table_rows_of(runner: Runner) -> dict[str, int]:
    """The row counts the connection knows of its tables at connect time (`table_rows`,
    where the runner has statistics: DuckDB), keyed `table`, `schema.table` and
    `catalog.schema.table` in lower case; empty where it has none or they cannot be read
    (the plan then assumes large tables)."""
    probe = getattr(runner, "table_rows", None)
    if not callable(probe):
        return {}
    try:
        return dict(probe())
    except ExecuteError:
        return {}


def keyed_rows(tables: Sequence[tuple[str, str, str, int]]) -> dict[str, int]:
    """(catalog, schema, table, rows) -> rows under each spelling of each table; a short
    spelling two tables share holds the larger count (the cautious answer)."""
    out: dict[str, int] = {}
    for catalog, schema, table, rows in tables:
        for key in (table, f"{schema}.{table}", f"{catalog}.{schema}.{table}"):
            key = key.lower()
            out[key] = max(int(rows), out.get(key, 0))
    return out


def require(module: str, extra: str, engine: str) -> ModuleType:
    """Import an engine's Python client, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExecuteError(
            "missing_driver",
            f"running on {engine} needs the Python package `{module.split('.')[0]}`, which is "
            "not installed",
            hint=f"pip install 'dosi[{extra}]'",
            detail={"extra": extra, "module": module},
        ) from None


class Deadline:
    """Calls `cancel` once `timeout_secs` have passed (unless the run finished first)."""

    def __init__(self, timeout_secs: float | None, cancel: Callable[[], None]) -> None:
        self.expired = threading.Event()
        self._alarm: Alarm | None = None
        if timeout_secs is not None and timeout_secs > 0:

            def fire() -> None:
                self.expired.set()
                with contextlib.suppress(Exception):  # the engine may have finished meanwhile
                    cancel()

            self._alarm = after(timeout_secs, fire)

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._alarm is not None:
            self._alarm.cancel()


def failure(
    engine: str,
    exc: BaseException,
    sql: str,
    deadline: Deadline | None,
    timeout_secs: float | None,
    markers: tuple[str, ...] = (),
    connection: Any = None,
) -> ExecuteError:
    """The structured error for an engine exception: `timeout` when our deadline fired or the
    engine's message says its own time limit stopped the query (`markers`, lower case);
    `connection_lost` when the connection (`connection`, the driver's object) broke."""
    expired = deadline is not None and deadline.expired.is_set()
    if expired or any(m in str(exc).lower() for m in markers):
        return ExecuteError(
            "timeout",
            f"the query ran longer than {timeout_secs}s and was cancelled",
            hint="raise timeout_secs, add a time_range, or group at a coarser grain",
        )
    if is_lost(exc, connection):
        return connection_lost(engine, exc)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if is_data_error(exc):
        return value_rejected(engine, first, sql, type(exc).__name__)
    return ExecuteError(
        "sql_rejected",
        f"{engine} rejected the query: {first}",
        hint="check that the model's sources exist in the database the connection points at",
        detail={"sql": sql},
    )


def arrow_from_rows(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    """A DB-API result as Arrow, each column's type inferred from its Python values."""
    columns = [[row[i] for row in rows] for i in range(len(names))]
    arrays = []
    for values in columns:
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed int / float / Decimal
            arrays.append(pa.array([None if v is None else float(v) for v in values]))
    return pa.Table.from_arrays(arrays, names=list(names))


def foreign_cancel(exc: BaseException) -> bool:
    """A statement cancelled on the server by someone else than this runner (an operator's
    `pg_cancel_backend`, a pooler): PostgreSQL's QueryCanceled "due to user request"."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "QueryCanceled" in names and "user request" in str(exc).lower()


class DbApiRunner:
    """A runner over any DB-API 2.0 connection (sqlite3, psycopg, PyMySQL, mysqlclient).

    A cancel is sent only while a statement of this runner runs, and a statement does not
    end (and its connection is not reused) while a cancel is being delivered: a cancel is
    asynchronous on the server (PostgreSQL's cancel request, MySQL's `KILL QUERY`), so one
    sent as a statement ended used to land on the next statement of the same pooled
    connection, another request's, which then failed as `sql_rejected` (issue 29, item 3)."""

    engine = "database"
    dialect = "postgres"
    timeout_markers: tuple[str, ...] = ()

    def __init__(self, connection: Any, owned: bool) -> None:
        self.connection = connection
        self.owned = owned
        self._statement = threading.Lock()  # guards `_running` and a cancel's delivery
        self._running = False
        self._cancel_sent = False

    def prepare(self, cursor: Any, timeout_secs: float | None) -> None:
        """Per-query session settings (a server-side timeout) before the statement."""

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        return self.run_capped(sql, timeout_secs, None)

    def run_capped(self, sql: str, timeout_secs: float | None, max_rows: int | None) -> pa.Table:
        """`run`, fetching at most `max_rows` rows (a request's row limit + 1: the rows past
        it are never turned into Python values). A statement cancelled by someone else than
        dosi is run once more (every statement dosi sends is a read)."""
        for attempt in (1, 2):
            try:
                return self._run_once(sql, timeout_secs, max_rows, retry=attempt == 1)
            except _ForeignCancel:
                continue
        raise ExecuteError(
            "cancelled",
            f"{self.engine} cancelled the query twice (a cancel not sent by dosi)",
            hint="an operator or a connection pooler cancels statements of this connection; "
            "run it again",
        )

    def _run_once(
        self, sql: str, timeout_secs: float | None, max_rows: int | None, retry: bool
    ) -> pa.Table:
        deadline = Deadline(timeout_secs, self.cancel)
        with self._statement:
            self._running, self._cancel_sent = True, False
        with deadline:
            cursor = None
            try:  # a closed connection fails on cursor() already (never a raw driver error)
                cursor = self.connection.cursor()
                self.prepare(cursor, timeout_secs)
                cursor.execute(sql)
                names = [d[0] for d in cursor.description or ()]
                rows = cursor.fetchall() if max_rows is None else cursor.fetchmany(max_rows)
            except ExecuteError:
                raise
            except Exception as exc:
                self.after_error()
                ours = deadline.expired.is_set() or self._cancel_sent
                if retry and not ours and foreign_cancel(exc):
                    raise _ForeignCancel from None
                raise failure(
                    self.engine,
                    exc,
                    sql,
                    deadline,
                    timeout_secs,
                    self.timeout_markers,
                    self.connection,
                ) from None
            finally:
                if cursor is not None:
                    with contextlib.suppress(Exception):  # a broken connection's cursor
                        cursor.close()
                with self._statement:  # waits for a cancel still being delivered
                    self._running = False
        return arrow_from_rows(names, rows)

    def after_error(self) -> None:
        """Leave the connection usable after a failed statement (roll back an open
        transaction)."""
        rollback = getattr(self.connection, "rollback", None)
        if rollback is not None:
            with contextlib.suppress(Exception):
                rollback()

    def cancel(self) -> None:
        """Cancel the statement running now, never a later one (nothing when none runs)."""
        with self._statement:
            if not self._running:
                return
            self._cancel_sent = True
            self.send_cancel()

    def send_cancel(self) -> None:
        """The driver's cancel of the connection's running statement (blocking until the
        server took it, so the statement's end can wait for it)."""
        cancel = getattr(self.connection, "cancel", None)
        if cancel is not None:
            cancel()

    def close(self) -> None:
        if self.owned:
            self.connection.close()


class _ForeignCancel(Exception):
    """A statement cancelled by someone else than dosi (run once more)."""
