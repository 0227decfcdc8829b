"""A runner that survives its warehouse's restart (issue 29, item 2).

`Reconnecting` wraps the runner of one profile. It opens the connection on first use with a
bounded backoff; when a statement fails with `connection_lost` it drops the broken
connection, reconnects (bounded backoff again) and runs the statement once more: every
statement dosi sends is a read, so running it twice is safe. A warehouse that does not
answer within the backoff is `warehouse_unavailable`. A client object the application handed
in cannot be reopened by dosi: its loss is reported as `connection_lost`, never retried.
`state` (ok, lost, unavailable, unused) is what health reports show, without the uri."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from dosi.errors import ExecuteError
from dosi.execute.connection_loss import is_unreachable, warehouse_unavailable
from dosi.execute.runner import Runner, table_rows_of

#: seconds slept before each connection attempt: four attempts within two seconds
BACKOFF = (0.0, 0.2, 0.5, 1.0)


class Reconnecting:
    """The Runner protocol over a connection that is reopened when it breaks."""

    def __init__(
        self,
        open_runner: Callable[[], Runner],
        name: str,
        kind: str,
        dialect: str,
        *,
        reopenable: bool = True,
        backoff: tuple[float, ...] = BACKOFF,
    ) -> None:
        self._open = open_runner
        self.name = name
        self.kind = kind
        self.dialect = dialect
        self.reopenable = reopenable
        self.backoff = backoff
        self.inner: Runner | None = None
        self.state = "unused"
        self.last_error: str | None = None
        self.reconnects = 0
        self._lock = threading.Lock()

    def _connect(self) -> Runner:
        """Open the connection, retrying a server that does not answer with the backoff."""
        last = ""
        for delay in self.backoff:
            if delay:
                time.sleep(delay)
            try:
                runner = self._open()
            except ExecuteError as err:
                if err.code != "connection_failed" or not is_unreachable(err.message):
                    self.state, self.last_error = "unavailable", err.code
                    raise
                last = err.message
                continue
            self.dialect = runner.dialect
            return runner
        self.state, self.last_error = "unavailable", "warehouse_unavailable"
        raise warehouse_unavailable(self.name, self.kind, len(self.backoff), last)

    def connect(self) -> Runner:
        """Open the connection now (not on first use): a caller that stamps the files the
        connection reads (the result cache, the rollup store) stamps what it opened."""
        return self._runner()

    def _runner(self) -> Runner:
        with self._lock:
            if self.inner is None:
                self.inner = self._connect()
            return self.inner

    def _drop(self) -> None:
        with self._lock:
            broken, self.inner = self.inner, None
        if broken is not None:
            try:
                broken.close()
            except Exception:  # a dead connection may fail to close; it is gone either way
                self.last_error = "connection_lost"

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        return self._recovering(lambda r: r.run(sql, timeout_secs))

    def run_capped(self, sql: str, timeout_secs: float | None, max_rows: int) -> pa.Table:
        """`run` fetching at most `max_rows` rows, where the runner can (`DbApiRunner`)."""

        def capped(runner: Runner) -> pa.Table:
            run = getattr(runner, "run_capped", None)
            if callable(run):
                table: pa.Table = run(sql, timeout_secs, max_rows)
                return table
            return runner.run(sql, timeout_secs)

        return self._recovering(capped)

    def _recovering(self, run: Callable[[Runner], pa.Table]) -> pa.Table:
        try:
            table = run(self._runner())
        except ExecuteError as err:
            if err.code != "connection_lost":
                raise
            self._drop()
            self.state, self.last_error = "lost", err.code
            if not self.reopenable:
                raise
            self.reconnects += 1
            try:
                table = run(self._runner())  # once: every statement dosi sends is a read
            except ExecuteError as again:
                if again.code != "connection_lost":
                    raise
                # lost again on a fresh connection (a lazily connecting client such as Spark
                # Connect's opens nothing until the statement): the server is down
                self._drop()
                self.state, self.last_error = "unavailable", "warehouse_unavailable"
                raise warehouse_unavailable(self.name, self.kind, 2, again.message) from None
        self.state, self.last_error = "ok", None
        return table

    def ping(self) -> bool:
        """Whether the warehouse answers now (a connection opened if none is): health checks.
        A broken connection is dropped and opened once more."""
        for _ in range(2 if self.reopenable else 1):
            try:
                runner = self._runner()
                probe = getattr(runner, "ping", None)
                if callable(probe):
                    probe()
                else:
                    runner.run("SELECT 1", 5.0)  # a constant statement, no input in it
            except ExecuteError as err:
                if err.code != "connection_lost":
                    self.state, self.last_error = "unavailable", err.code
                    return False
                self._drop()
                self.state, self.last_error = "lost", err.code
                continue
            self.state, self.last_error = "ok", None
            return True
        return False

    def table_rows(self) -> dict[str, int]:
        """The open connection's table row counts (dosi.execute.runner.table_rows_of)."""
        inner = self.inner
        return table_rows_of(inner) if inner is not None else {}

    def cancel(self) -> None:
        inner = self.inner
        if inner is not None:
            inner.cancel()

    def progress(self) -> float | None:
        report: Any = getattr(self.inner, "progress", None)
        return report() if callable(report) else None

    def close(self) -> None:
        self._drop()

    def health(self) -> dict[str, Any]:
        """This connection's state for a health report: no uri, no path, no secret."""
        return {
            "type": self.kind,
            "state": self.state,
            "error": self.last_error,
            "reconnects": self.reconnects,
        }
