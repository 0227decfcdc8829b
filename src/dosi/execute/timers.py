"""One shared timer thread for query deadlines (issue 28 item 6: a rollup-served query takes
a few milliseconds, and starting a `threading.Timer` thread per statement cost as much again
on a loaded machine). `after(seconds, fn)` schedules `fn` on the shared thread and returns a
handle whose `cancel()` drops it; callbacks run one at a time, outside the lock, and must be
short (they set an event and interrupt a statement)."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Scheduled:
    __slots__ = ("cancelled", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Timers:
    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int, Scheduled]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, fn: Callable[[], None]) -> Scheduled:
        handle = Scheduled(fn)
        with self._cv:
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._seq), handle))
            if len(self._heap) > 1024:  # cancelled handles wait for their time: drop them
                self._heap = [e for e in self._heap if not e[2].cancelled]
                heapq.heapify(self._heap)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="dosi-timers", daemon=True)
                self._thread.start()
            self._cv.notify()
        return handle

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._heap:
                    self._cv.wait()
                at, _, handle = self._heap[0]
                if handle.cancelled:
                    heapq.heappop(self._heap)
                    continue
                wait = at - time.monotonic()
                if wait > 0:
                    self._cv.wait(wait)
                    continue
                heapq.heappop(self._heap)
            with contextlib.suppress(Exception):  # a callback never stops the thread
                handle.fn()


_TIMERS = _Timers()


def after(seconds: float, fn: Callable[[], None]) -> Scheduled:
    """Call `fn` once `seconds` have passed, unless the handle is cancelled first."""
    return _TIMERS.after(seconds, fn)
