"""PostgreSQL protocol 3 messages: reading the frontend's, writing the backend's.

Only framing and field layout live here; what a message means is the session's business
(`dosi.frontends.pg.session`).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dosi.frontends.pg.pgtypes import ColumnType, fixed_bytes

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


def array_bytes(values: pa.Array) -> bytes:
    """The concatenated values of a binary array without NULLs (its data buffer's span)."""
    if len(values) == 0:
        return b""
    bufs = values.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32)[
        values.offset : values.offset + len(values) + 1
    ]
    return bytes(memoryview(bufs[2])[int(offsets[0]) : int(offsets[-1])])


def _framed(kind: bytes, bodies: pa.Array, lengths: np.ndarray) -> bytes:
    """`kind` + length + body for every body (`lengths` their byte lengths)."""
    heads = fixed_bytes((lengths + 4).astype(">i4"), 4)
    return array_bytes(pc.binary_join_element_wise(pa.scalar(kind), heads, bodies, b""))


def tuples(columns: Sequence[pa.Array], nrows: int) -> tuple[pa.Array, np.ndarray]:
    """Each row as PostgreSQL frames a tuple (field count, then per field its length, -1 for
    NULL, and bytes), built column by column in Arrow, and each tuple's byte length."""
    count = pa.scalar(_I16.pack(len(columns)))
    total = np.full(nrows, 2, dtype=np.int64)
    parts: list[pa.Array | pa.Scalar] = [count]
    for col in columns:
        lengths = pc.binary_length(col).fill_null(-1).to_numpy(zero_copy_only=False)
        prefix = fixed_bytes(lengths.astype(">i4"), 4)
        parts.append(pc.binary_join_element_wise(prefix, col.fill_null(b""), b""))
        total += 4 + np.maximum(lengths.astype(np.int64), 0)
    if not columns:
        return pa.array([_I16.pack(0)] * nrows, pa.binary()), total
    return pc.binary_join_element_wise(*parts, b""), total


def data_rows(columns: Sequence[pa.Array], nrows: int) -> bytes:
    """The DataRow messages of `nrows` rows, from each column's encoded values."""
    if nrows == 0:
        return b""
    bodies, lengths = tuples(columns, nrows)
    return _framed(b"D", bodies, lengths)


def copy_binary_rows(columns: Sequence[pa.Array], nrows: int, header: bytes = b"") -> bytes:
    """CopyData messages, one tuple each, the binary COPY header before the first."""
    if nrows == 0:
        return b""
    bodies, lengths = tuples(columns, nrows)
    if header:
        first = pa.array([header], pa.binary())
        bodies = pa.concat_arrays(
            [pc.binary_join_element_wise(first, bodies.slice(0, 1), b""), bodies.slice(1)]
        )
        lengths = lengths.copy()
        lengths[0] += len(header)
    return _framed(b"d", bodies, lengths)


_COPY_ESCAPES = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))


def copy_text_rows(columns: Sequence[pa.Array], nrows: int, csv: bool) -> bytes:
    """CopyData messages of COPY's text (tab-separated, \\N for NULL) or CSV format."""
    if nrows == 0:
        return b""
    fields = []
    for col in columns:
        text = pc.cast(col, pa.string())
        if csv:
            quoted = pc.binary_join_element_wise(
                '"', pc.replace_substring(text, '"', '""'), '"', ""
            )
            needs = pc.match_substring_regex(text, '[,"\n\r]')
            text = pc.if_else(pc.fill_null(needs, False), quoted, text).fill_null("")
        else:
            for a, b in _COPY_ESCAPES:
                text = pc.replace_substring(text, a, b)
            text = text.fill_null("\\N")
        fields.append(text)
    lines = pc.binary_join_element_wise(*fields, "," if csv else "\t")
    lines = pc.cast(pc.binary_join_element_wise(lines, "\n", ""), pa.binary())
    lengths = pc.binary_length(lines).to_numpy(zero_copy_only=False).astype(np.int64)
    return _framed(b"d", lines, lengths)


def error_response(fields: dict[str, str], notice: bool = False) -> bytes:
    body = b"".join(k.encode() + cstr(v) for k, v in fields.items() if v is not None) + b"\x00"
    return message(b"N" if notice else b"E", body)
