"""Slow and half-open clients: uvicorn's HTTP/1.1 protocol with a request-head timeout.

uvicorn closes an idle keep-alive connection, but a client that connects and never finishes
its request head keeps a socket forever; 21,000 of them exhausted the file descriptors
(issue 29, item 4). `with_head_timeout` gives each connection `seconds` from its first byte
slot (connection or end of the previous answer) to the end of a request head, then closes it
without a log line. The connection limit is uvicorn's own `limit_concurrency` (503 above it)."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


def with_head_timeout(seconds: float) -> type[H11Protocol]:
    """An H11Protocol class that closes a connection whose request head is not complete
    within `seconds`."""

    class HeadTimeoutProtocol(H11Protocol):
        head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._waiting_for_head():
                if self.head_timer is None:
                    self._arm()
            else:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _waiting_for_head(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _arm(self) -> None:
            self._disarm()
            self.head_timer = self.loop.call_later(seconds, self._head_timed_out)

        def _disarm(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _head_timed_out(self) -> None:
            self.head_timer = None
            if self._waiting_for_head() and not self.transport.is_closing():
                self.transport.close()

    return HeadTimeoutProtocol
