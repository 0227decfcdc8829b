"""Cancelling a running statement from another thread (a client that went away, Ctrl-C).

The reference engine's `CancellationToken`: `cancel()` interrupts whatever statement the token
is attached to, now or when it starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CancellationToken:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            callbacks = list(self._callbacks)
        for fn in callbacks:
            fn()

    def attach(self, fn: Callable[[], None]) -> None:
        """Call `fn` on cancel (at once if already cancelled)."""
        with self._lock:
            self._callbacks.append(fn)
            now = self._cancelled
        if now:
            fn()

    def detach(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if fn in self._callbacks:
                self._callbacks.remove(fn)
