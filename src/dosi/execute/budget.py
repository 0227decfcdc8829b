"""A request's budget: how many rows and bytes its answer may hold and when it must be done
(issue 29, item 1, "bounded answers").

`ResultBudget` is a `CancellationToken` (so it travels the same way into `Engine.execute`,
`select`, `sql` and `attribute` as `cancellation=`): the engine checks a result's size against
it as soon as the database answers, before a Python row is built, and row building and
encoding check it between chunks. Past its deadline the budget cancels itself, so the
database statement, the row conversion and the encoding all stop, and the failure reads
`timeout` (the whole request, not only the database step)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pyarrow as pa

from dosi.errors import ExecuteError
from dosi.execute.alarms import Alarm, after
from dosi.execute.cancel import CancellationToken


def result_too_large(what: str, limit: int, found: str, rows_fit: int | None) -> ExecuteError:
    """The structured refusal of an answer over a limit. `detail` names the limit and, for
    bytes, about how many rows fit; frontends add a `suggested_retry` (the request with a
    `limit`) because only they know the request's shape."""
    unit = "rows" if what == "rows" else "bytes"
    detail: dict[str, Any] = {"limit": what, f"max_{unit}": limit}
    if rows_fit is not None:
        detail["rows_fit"] = max(1, rows_fit)
    return ExecuteError(
        "result_too_large",
        f"the answer holds {found} {unit}, over the server's limit of {limit} {unit}",
        hint="add a `limit` (or LIMIT), a time_range or a coarser grain; ask for fewer "
        "columns; or raise the limit (`dosi serve --max-rows / --max-result-bytes`)",
        detail=detail,
    )


class ResultBudget(CancellationToken):
    """Limits of one request: `max_rows` and `max_bytes` (None: no limit) and `timeout_secs`
    for the whole request, counted from the budget's creation."""

    def __init__(
        self,
        max_rows: int | None = None,
        max_bytes: int | None = None,
        timeout_secs: float | None = None,
    ) -> None:
        super().__init__()
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.timeout_secs = timeout_secs
        self.started = time.monotonic()
        self.timed_out = threading.Event()
        self._alarm: Alarm | None = None
        if timeout_secs is not None and timeout_secs > 0:
            self._alarm = after(timeout_secs, self.expire)

    def expire(self) -> None:
        """The deadline passed: everything the budget guards stops with `timeout`."""
        self.timed_out.set()
        self.cancel()

    def remaining(self) -> float | None:
        """Seconds left of the whole-request timeout (None: none); never below a millisecond."""
        if self.timeout_secs is None:
            return None
        return max(0.001, self.timeout_secs - (time.monotonic() - self.started))

    def row_cap(self) -> int | None:
        """One row past the limit is enough to know the answer is over it."""
        return None if self.max_rows is None else self.max_rows + 1

    def stopped_error(self) -> ExecuteError:
        if self.timed_out.is_set():
            return ExecuteError(
                "timeout",
                f"the request ran longer than {self.timeout_secs}s (compile, run, conversion "
                "and encoding) and was stopped",
                hint="raise the timeout, add a time_range or a limit, or group at a coarser grain",
            )
        return super().stopped_error()

    def check(self) -> None:
        """Raise if the request was cancelled or ran out of time (between two chunks)."""
        if self.cancelled:
            raise self.stopped_error()

    def check_table(self, table: pa.Table) -> None:
        """The database's answer against the limits, before any row is converted."""
        self.check()
        if self.max_rows is not None and table.num_rows > self.max_rows:
            raise result_too_large("rows", self.max_rows, f"more than {self.max_rows}", None)
        if self.max_bytes is not None and table.nbytes > self.max_bytes:
            # an encoded row takes at least its Arrow bytes: half the proportion fits surely
            fit = table.num_rows * self.max_bytes // table.nbytes // 2
            raise result_too_large("bytes", self.max_bytes, f"about {table.nbytes}", fit)

    def check_bytes(self, written: int, rows_written: int) -> None:
        """An encoded answer of `written` bytes so far (`rows_written` rows) against the
        byte limit."""
        self.check()
        if self.max_bytes is not None and written > self.max_bytes:
            fit = rows_written * self.max_bytes // written * 9 // 10
            raise result_too_large("bytes", self.max_bytes, f"more than {self.max_bytes}", fit)

    def close(self) -> None:
        """Stop the deadline timer (the request is over)."""
        if self._alarm is not None:
            self._alarm.cancel()


def budget_of(token: CancellationToken | None) -> ResultBudget | None:
    return token if isinstance(token, ResultBudget) else None
