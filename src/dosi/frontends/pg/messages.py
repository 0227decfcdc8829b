"""PostgreSQL protocol 3 messages: reading the frontend's, writing the backend's.

Only framing and field layout live here; what a message means is the session's business
(`dosi.frontends.pg.session`).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dosi.frontends.pg.pgtypes import ColumnType

SSL_REQUEST = 80877103
GSS_REQUEST = 80877104
CANCEL_REQUEST = 80877102
PROTOCOL_3 = 196608
MAX_MESSAGE = 64 * 1024 * 1024  # a statement or bind message larger than this is refused

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")


class ProtocolViolation(Exception):
    """The client sent bytes that are not a valid message."""


async def read_startup(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The untyped first message: (code, payload after the code)."""
    head = await reader.readexactly(4)
    (length,) = _I32.unpack(head)
    if not 8 <= length <= 10_000:
        raise ProtocolViolation(f"startup packet of {length} bytes")
    body = await reader.readexactly(length - 4)
    (code,) = _I32.unpack_from(body)
    return code, body[4:]


def startup_params(payload: bytes) -> dict[str, str]:
    parts = payload.split(b"\x00")
    out: dict[str, str] = {}
    for key, value in zip(parts[0::2], parts[1::2], strict=False):
        if key:
            out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return out


async def read_message(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """(type byte, payload) of a typed message."""
    head = await reader.readexactly(5)
    (length,) = _I32.unpack_from(head, 1)
    if not 4 <= length <= MAX_MESSAGE:
        raise ProtocolViolation(f"message of {length} bytes")
    return head[:1], await reader.readexactly(length - 4)


class Reader:
    """Fields of one payload, in order."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def cstring(self) -> str:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise ProtocolViolation("unterminated string")
        text = self.data[self.pos : end].decode("utf-8", "replace")
        self.pos = end + 1
        return text

    def int16(self) -> int:
        (v,) = _I16.unpack_from(self.data, self.pos)
        self.pos += 2
        return v

    def int32(self) -> int:
        (v,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return v

    def byte(self) -> bytes:
        b = self.data[self.pos : self.pos + 1]
        self.pos += 1
        return b

    def bytes_(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolViolation("truncated message")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b


@dataclass(frozen=True)
class Bind:
    portal: str
    statement: str
    param_formats: tuple[int, ...]
    params: tuple[bytes | None, ...]
    result_formats: tuple[int, ...]


def parse_bind(payload: bytes) -> Bind:
    r = Reader(payload)
    portal, statement = r.cstring(), r.cstring()
    pf = tuple(r.int16() for _ in range(r.int16()))
    params: list[bytes | None] = []
    for _ in range(r.int16()):
        n = r.int32()
        params.append(None if n == -1 else r.bytes_(n))
    rf = tuple(r.int16() for _ in range(r.int16()))
    return Bind(portal, statement, pf, tuple(params), rf)


def parse_parse(payload: bytes) -> tuple[str, str, tuple[int, ...]]:
    r = Reader(payload)
    name, query = r.cstring(), r.cstring()
    types = tuple(r.int32() for _ in range(r.int16()))
    return name, query, types


# ------------------------------------------------------------------------ backend messages
def message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + _I32.pack(len(body) + 4) + body


def cstr(text: str) -> bytes:
    return text.replace("\x00", "").encode("utf-8") + b"\x00"


AUTH_OK = message(b"R", _I32.pack(0))
AUTH_CLEARTEXT = message(b"R", _I32.pack(3))
PARSE_COMPLETE = message(b"1")
BIND_COMPLETE = message(b"2")
CLOSE_COMPLETE = message(b"3")
NO_DATA = message(b"n")
EMPTY_QUERY = message(b"I")
PORTAL_SUSPENDED = message(b"s")


def parameter_status(key: str, value: str) -> bytes:
    return message(b"S", cstr(key) + cstr(value))


def backend_key(pid: int, secret: int) -> bytes:
    return message(b"K", _I32.pack(pid) + _I32.pack(secret))


def ready(status: bytes) -> bytes:
    return message(b"Z", status)


def command_complete(tag: str) -> bytes:
    return message(b"C", cstr(tag))


def parameter_description(oids: Sequence[int]) -> bytes:
    return message(b"t", _I16.pack(len(oids)) + b"".join(_I32.pack(o) for o in oids))


def row_description(
    names: Sequence[str],
    types: Sequence[ColumnType],
    formats: Sequence[int],
    table_oid: int = 0,
    attnums: Sequence[int] | None = None,
) -> bytes:
    parts = [_I16.pack(len(names))]
    for i, (name, t) in enumerate(zip(names, types, strict=True)):
        parts.append(cstr(name))
        parts.append(
            struct.pack(
                "!ihihih",
                table_oid if attnums else 0,
                attnums[i] if attnums else 0,
                t.oid,
                t.size,
                t.typmod,
                formats[i],
            )
        )
    return message(b"T", b"".join(parts))


def data_rows(columns: Sequence[list[bytes | None]], nrows: int) -> Iterable[bytes]:
    """One DataRow message per row, from each column's encoded values."""
    ncols = struct.pack("!h", len(columns))
    pack = _I32.pack
    null = b"\xff\xff\xff\xff"
    for i in range(nrows):
        parts = [ncols]
        for col in columns:
            v = col[i]
            if v is None:
                parts.append(null)
            else:
                parts.append(pack(len(v)))
                parts.append(v)
        body = b"".join(parts)
        yield b"D" + pack(len(body) + 4) + body


def error_response(fields: dict[str, str], notice: bool = False) -> bytes:
    body = b"".join(k.encode() + cstr(v) for k, v in fields.items() if v is not None) + b"\x00"
    return message(b"N" if notice else b"E", body)
