"""Cancelling a running statement from another thread (a client that went away, Ctrl-C).

The reference engine's `CancellationToken`: `cancel()` stops the statement the token was
passed with, whether it is already running or about to start.
"""

from __future__ import annotations

import threading


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
