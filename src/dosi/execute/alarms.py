"""One timer thread for every deadline of the process (issue 27 item 3: no per-call setup).

A query's timeout, a request's budget and a cancellation's repeated interrupt used to start a
`threading.Timer` each: a new OS thread per statement, which cost 0.1 ms on a quiet machine
and up to a millisecond on a loaded one (the new thread waits for a core before `start()`
returns), more than a small query's own run. Here one daemon thread keeps a heap of alarms;
setting one is a heap push, cancelling one a flag. Callbacks run on that thread and must be
short (an interrupt, a cancel request, setting an event).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable

#: cancelled alarms kept in the heap before it is compacted (they are dropped when due anyway)
_COMPACT_AFTER = 256


class Alarm:
    """One pending call; `cancel()` before it is due and it never runs."""

    __slots__ = ("cancelled", "fn", "when")

    def __init__(self, when: float, fn: Callable[[], object]) -> None:
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            _CLOCK.dropped()


class _Clock:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Alarm]] = []
        self._cond = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._dead = 0
        self._pid: int | None = None  # the process the thread runs in (a fork has none)

    def after(self, seconds: float, fn: Callable[[], object]) -> Alarm:
        alarm = Alarm(time.monotonic() + seconds, fn)
        with self._cond:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._heap.clear()
                threading.Thread(target=self._loop, name="dosi-alarms", daemon=True).start()
            if self._dead > _COMPACT_AFTER and self._dead * 2 > len(self._heap):
                self._heap = [e for e in self._heap if not e[2].cancelled]
                heapq.heapify(self._heap)
                self._dead = 0
            heapq.heappush(self._heap, (alarm.when, next(self._seq), alarm))
            if self._heap[0][2] is alarm:  # sooner than the one the thread sleeps for
                self._cond.notify()
        return alarm

    def dropped(self) -> None:
        with self._cond:
            self._dead += 1

    def _next_due(self) -> Alarm:
        with self._cond:
            while True:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                    self._dead = max(0, self._dead - 1)
                if not self._heap:
                    self._cond.wait()
                    continue
                delay = self._heap[0][0] - time.monotonic()
                if delay <= 0:
                    return heapq.heappop(self._heap)[2]
                self._cond.wait(delay)

    def _loop(self) -> None:
        while True:
            alarm = self._next_due()
            if not alarm.cancelled:
                with contextlib.suppress(Exception):  # a late interrupt of a finished statement
                    alarm.fn()


_CLOCK = _Clock()


def after(seconds: float, fn: Callable[[], object]) -> Alarm:
    """Call `fn` on the alarm thread in `seconds` unless the returned alarm is cancelled."""
    return _CLOCK.after(seconds, fn)
