"""Cancelling a running statement from another thread (a client that went away, Ctrl-C).

The reference engine's `CancellationToken`: `cancel()` stops the statement the token was
passed with, whether it is already running or about to start.
"""

from __future__ import annotations

import contextlib
import threading

import pyarrow as pa

from dosi.errors import ExecuteError
from dosi.execute.runner import Runner


class CancellationToken:
    def __init__(self) -> None:
        self._event = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        self._event.set()

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


def run_cancellable(
    runner: Runner, sql: str, timeout_secs: float | None, token: CancellationToken | None
) -> pa.Table:
    """`runner.run(sql)`, stopped by `token` on any engine: a watcher calls the runner's own
    `cancel()` (interrupt, cancel request, job-tag cancel) until the statement ends, so a
    cancel that lands just before the statement starts still counts."""
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

    def _watch() -> None:
        while not finished.is_set():
            if token.wait(0.1):
                while not finished.wait(0.05):
                    with contextlib.suppress(Exception):  # the engine may be finishing
                        runner.cancel()
                return

    threading.Thread(target=_watch, daemon=True).start()
    try:
        return run()
    except ExecuteError:
        if token.cancelled:
            raise token.stopped_error() from None
        raise
    finally:
        finished.set()
