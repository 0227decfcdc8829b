"""Bound parameter values of the extended protocol, decoded by type OID and format."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid
from typing import Any

from dosi.errors import QueryError

_EPOCH = dt.datetime(2000, 1, 1)
_INT_OIDS = (20, 21, 23, 26, 28)


def _bad(oid: int, why: str) -> QueryError:
    return QueryError(
        "sql_syntax_error",
        f"cannot read a parameter of type OID {oid}: {why}",
        hint="send parameters as text, or as int, float, numeric, bool, date, "
        "timestamp or text in binary",
    )


def decode(value: bytes | None, oid: int, fmt: int) -> Any:
    if value is None:
        return None
    if fmt == 0:
        return _text(value.decode("utf-8", "replace"), oid)
    try:
        return _binary(value, oid)
    except (struct.error, ValueError, OverflowError) as exc:
        raise _bad(oid, str(exc)) from None


def _text(text: str, oid: int) -> Any:
    try:
        if oid in _INT_OIDS:
            return int(text)
        if oid in (700, 701):
            return float(text)
        if oid == 1700:
            return decimal.Decimal(text)
        if oid == 16:
            return text.strip().lower() in ("t", "true", "1", "yes", "on", "y")
        if oid == 1082:
            return dt.date.fromisoformat(text.strip())
        if oid in (1114, 1184):
            return dt.datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    except ValueError:
        return text
    return text


def _binary(b: bytes, oid: int) -> Any:
    if oid == 21:
        return struct.unpack("!h", b)[0]
    if oid in (23, 26, 28):
        return struct.unpack("!i" if oid == 23 else "!I", b)[0]
    if oid == 20:
        return struct.unpack("!q", b)[0]
    if oid == 700:
        return struct.unpack("!f", b)[0]
    if oid == 701:
        return struct.unpack("!d", b)[0]
    if oid == 16:
        return b != b"\x00"
    if oid == 1082:
        return (_EPOCH + dt.timedelta(days=struct.unpack("!i", b)[0])).date()
    if oid in (1114, 1184):
        return _EPOCH + dt.timedelta(microseconds=struct.unpack("!q", b)[0])
    if oid == 1700:
        return _numeric(b)
    if oid == 2950:
        return str(uuid.UUID(bytes=b))
    if oid in (0, 25, 1043, 1042, 19, 705, 114):
        return b.decode("utf-8", "replace")
    if oid == 3802:
        return b[1:].decode("utf-8", "replace")
    raise _bad(oid, "this type is not read in binary")


def _numeric(b: bytes) -> decimal.Decimal:
    ndigits, weight, sign, dscale = struct.unpack_from("!hhHh", b)
    if sign == 0xC000:
        return decimal.Decimal("NaN")
    digits = struct.unpack_from(f"!{ndigits}H", b, 8)
    value = decimal.Decimal(0)
    for i, d in enumerate(digits):
        value += decimal.Decimal(d).scaleb(4 * (weight - i))
    value = value.quantize(decimal.Decimal(1).scaleb(-dscale)) if dscale else value
    return -value if sign == 0x4000 else value
