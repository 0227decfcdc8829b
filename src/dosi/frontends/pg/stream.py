"""Sending an answer's rows over the wire a slice at a time, each slice encoded in a worker
thread, never on the event loop (issue 29, item 1).

Between two slices the request's budget is looked at: its whole-request deadline (the same
clock that covered compile and run), its byte limit (the encoded bytes sent so far) and
whether the client went away. A limit passed after some rows were sent ends the answer with
an ErrorResponse, which the protocol allows in the middle of a result; a client that left
stops the encoding at once. `Offload` is how the session hands work to the server's encoder
threads."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import pyarrow as pa

from dosi.execute.budget import ResultBudget
from dosi.frontends.pg import messages as m
from dosi.frontends.pg.pgtypes import BINARY, TEXT, ColumnType, encode_column

#: rows encoded in one worker-thread step, between two looks at the budget
SLICE = 8_192
#: the binary COPY file header (signature, flags, header extension length)
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8


class Offload(Protocol):
    """Run `fn(*args)` in a worker thread (the server's encoder pool)."""

    def __call__(self, fn: Callable[..., bytes], *args: Any) -> Awaitable[bytes]: ...


class ClientGone(ConnectionResetError):
    """The client closed its connection while its answer was being sent."""


def data_rows_of(chunk: pa.Table, types: list[ColumnType], formats: list[int]) -> bytes:
    """The DataRow messages of one slice (run in a worker thread)."""
    cols = [
        encode_column(chunk.column(i), t, f)
        for i, (t, f) in enumerate(zip(types, formats, strict=True))
    ]
    return m.data_rows(cols, chunk.num_rows)


def copy_rows_of(chunk: pa.Table, types: list[ColumnType], copy: str, header: bytes) -> bytes:
    """The CopyData messages of one slice of COPY TO STDOUT (run in a worker thread)."""
    fmt = BINARY if copy == "binary" else TEXT
    cols = [encode_column(chunk.column(i), t, fmt) for i, t in enumerate(types)]
    if copy == "binary":
        return m.copy_binary_rows(cols, chunk.num_rows, header)
    return m.copy_text_rows(cols, chunk.num_rows, copy == "csv")


class Sender:
    """Writes encoded slices to one client under one budget."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        offload: Offload,
        budget: ResultBudget,
        sent_bytes: int = 0,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.offload = offload
        self.budget = budget
        self.sent_bytes = sent_bytes  # bytes of this answer already sent (earlier Executes)
        self.slices = 0

    def gone(self) -> bool:
        """The client closed its side (a PostgreSQL client never half-closes a live
        session: it sends Terminate first)."""
        return self.reader.at_eof() or self.writer.is_closing()

    async def _send(self, data: bytes, rows_done: int) -> None:
        self.sent_bytes += len(data)
        self.budget.check_bytes(self.sent_bytes, rows_done)
        self.writer.write(data)
        remaining = self.budget.remaining()
        try:  # a client that does not read holds the answer no longer than its deadline
            await asyncio.wait_for(self.writer.drain(), remaining)
        except TimeoutError:
            self.budget.expire()
            raise self.budget.stopped_error() from None

    async def _step(self, fn: Callable[..., bytes], *args: Any) -> bytes:
        if self.gone():
            self.budget.cancel()
            raise ClientGone("the client went away while its answer was sent")
        self.budget.check()
        self.slices += 1
        return await self.offload(fn, *args)

    async def rows(
        self,
        table: pa.Table,
        types: list[ColumnType],
        formats: list[int],
        start: int = 0,
        stop: int | None = None,
    ) -> int:
        """DataRow messages of rows [start, stop); the number of rows sent."""
        stop = table.num_rows if stop is None else min(stop, table.num_rows)
        for lo in range(start, stop, SLICE):
            chunk = table.slice(lo, min(SLICE, stop - lo))
            data = await self._step(data_rows_of, chunk, types, formats)
            await self._send(data, lo - start)
        return max(0, stop - start)

    async def copy(self, table: pa.Table, types: list[ColumnType], copy: str) -> None:
        """COPY TO STDOUT: CopyOutResponse, the CopyData messages, CopyDone."""
        binary = copy == "binary"
        n = len(types)
        head = struct.pack("!bh", 1 if binary else 0, n) + struct.pack(
            f"!{n}h", *([1 if binary else 0] * n)
        )
        self.writer.write(m.message(b"H", head))
        header = _COPY_HEADER if binary else b""
        for lo in range(0, table.num_rows, SLICE):
            chunk = table.slice(lo, SLICE)
            # the binary header travels with the first row, as PostgreSQL's does
            data = await self._step(copy_rows_of, chunk, types, copy, header)
            header = b""
            await self._send(data, lo)
        if binary:
            self.writer.write(m.message(b"d", header + b"\xff\xff"))
        self.writer.write(m.message(b"c"))
