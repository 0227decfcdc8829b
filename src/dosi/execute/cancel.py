"""Cancelling a running statement from another thread (a client that went away, Ctrl-C).

The reference engine's `CancellationToken`: `cancel()` stops the statement the token was
passed with, whether it is already running or about to start.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import pyarrow as pa

from dosi.errors import ExecuteError
from dosi.execute.alarms import after
from dosi.execute.runner import Runner


class CancellationToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._on_cancel: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            calls, self._on_cancel = self._on_cancel, []
        for call in calls:
            with contextlib.suppress(Exception):  # a statement that is finishing
                call()

    def on_cancel(self, call: Callable[[], None]) -> Callable[[], None]:
        """Call `call` when the token is cancelled (now, if it already is); returns the
        function that withdraws it."""
        with self._lock:
            now = self._event.is_set()
            if not now:
                self._on_cancel.append(call)
        if now:
            call()

        def withdraw() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._on_cancel.remove(call)

        return withdraw

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled (True) or `timeout` passes (False)."""
        return self._event.wait(timeout)

    def row_cap(self) -> int | None:
        """Rows worth fetching from the database (None: all); a budget says its limit + 1."""
        return None

    def stopped_error(self) -> ExecuteError:
        """The error of a statement this token stopped (a budget's deadline says `timeout`)."""
        return ExecuteError(
            "cancelled", "the query was cancelled before it finished", hint="run it again"
        )


#: seconds between two interrupts of a cancelled statement that has not stopped yet
_REPEAT = 0.05


def run_cancellable(
    runner: Runner, sql: str, timeout_secs: float | None, token: CancellationToken | None
) -> pa.Table:
    """`runner.run(sql)`, stopped by `token` on any engine: once the token is cancelled the
    runner's own `cancel()` (interrupt, cancel request, job-tag cancel) is called every 50 ms
    on the alarm thread until the statement ends, so a cancel that lands just before the
    statement starts still counts. No thread is started per statement (dosi.execute.alarms)."""
    if token is None:
        return runner.run(sql, timeout_secs)
    cap = token.row_cap()
    capped = getattr(runner, "run_capped", None)
    if cap is not None and callable(capped):  # fetch no more rows than the answer may hold

        def run() -> pa.Table:
            table: pa.Table = capped(sql, timeout_secs, cap)
            return table
    else:

        def run() -> pa.Table:
            return runner.run(sql, timeout_secs)

    if token.cancelled:
        raise token.stopped_error()
    finished = threading.Event()

    def interrupt() -> None:
        if not finished.is_set():
            with contextlib.suppress(Exception):  # the engine may be finishing
                runner.cancel()
            after(_REPEAT, interrupt)

    withdraw = token.on_cancel(interrupt)
    try:
        return run()
    except ExecuteError:
        if token.cancelled:
            raise token.stopped_error() from None
        raise
    finally:
        finished.set()
        withdraw()
