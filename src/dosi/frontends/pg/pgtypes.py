"""PostgreSQL types of Arrow columns, and their text and binary wire encodings.

Each result column is announced with the type OID a PostgreSQL server would use for it
(`decimal128(38, 2)` is `numeric(38,2)`, `date32` a `date`, a naive `timestamp` a `timestamp`)
and every value is encoded column by column with pyarrow compute where it can, so a large
detail result costs little Python per value.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TEXT, BINARY = 0, 1


@dataclass(frozen=True)
class PgType:
    oid: int
    name: str
    size: int  # typlen: bytes, -1 variable
    array_oid: int = 0
    category: str = "U"


# the built-in types (OIDs fixed by PostgreSQL's catalog)
TYPES: tuple[PgType, ...] = (
    PgType(16, "bool", 1, 1000, "B"),
    PgType(17, "bytea", -1, 1001, "U"),
    PgType(18, "char", 1, 1002, "Z"),
    PgType(19, "name", 64, 1003, "S"),
    PgType(20, "int8", 8, 1016, "N"),
    PgType(21, "int2", 2, 1005, "N"),
    PgType(22, "int2vector", -1, 1006, "A"),
    PgType(23, "int4", 4, 1007, "N"),
    PgType(24, "regproc", 4, 1008, "N"),
    PgType(25, "text", -1, 1009, "S"),
    PgType(26, "oid", 4, 1028, "N"),
    PgType(27, "tid", 6, 1010, "U"),
    PgType(28, "xid", 4, 1011, "U"),
    PgType(29, "cid", 4, 1012, "U"),
    PgType(30, "oidvector", -1, 1013, "A"),
    PgType(114, "json", -1, 199, "U"),
    PgType(142, "xml", -1, 143, "U"),
    PgType(194, "pg_node_tree", -1, 0, "Z"),
    PgType(700, "float4", 4, 1021, "N"),
    PgType(701, "float8", 8, 1022, "N"),
    PgType(705, "unknown", -2, 0, "X"),
    PgType(790, "money", 8, 791, "N"),
    PgType(1033, "aclitem", 12, 1034, "U"),
    PgType(1042, "bpchar", -1, 1014, "S"),
    PgType(1043, "varchar", -1, 1015, "S"),
    PgType(1082, "date", 4, 1182, "D"),
    PgType(1083, "time", 8, 1183, "D"),
    PgType(1114, "timestamp", 8, 1115, "D"),
    PgType(1184, "timestamptz", 8, 1185, "D"),
    PgType(1186, "interval", 16, 1187, "T"),
    PgType(1266, "timetz", 12, 1270, "D"),
    PgType(1560, "bit", -1, 1561, "V"),
    PgType(1562, "varbit", -1, 1563, "V"),
    PgType(1700, "numeric", -1, 1231, "N"),
    PgType(2205, "regclass", 4, 2210, "N"),
    PgType(2206, "regtype", 4, 2211, "N"),
    PgType(2249, "record", -1, 2287, "P"),
    PgType(2275, "cstring", -2, 1263, "P"),
    PgType(2276, "any", 4, 0, "P"),
    PgType(2277, "anyarray", -1, 0, "P"),
    PgType(2278, "void", 4, 0, "P"),
    PgType(2950, "uuid", 16, 2951, "U"),
    PgType(3802, "jsonb", -1, 3807, "U"),
    PgType(4089, "regnamespace", 4, 4090, "N"),
)
BY_OID: dict[int, PgType] = {t.oid: t for t in TYPES}
BY_NAME: dict[str, PgType] = {t.name: t for t in TYPES}
ARRAY_OF: dict[int, int] = {t.array_oid: t.oid for t in TYPES if t.array_oid}
# the names format_type() prints
DISPLAY: dict[str, str] = {
    "bool": "boolean",
    "int8": "bigint",
    "int2": "smallint",
    "int4": "integer",
    "float4": "real",
    "float8": "double precision",
    "bpchar": "character",
    "varchar": "character varying",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "time": "time without time zone",
    "timetz": "time with time zone",
    "char": '"char"',
}


@dataclass(frozen=True)
class ColumnType:
    """A result column's announced type: OID, size and modifier (numeric precision)."""

    oid: int
    size: int
    typmod: int = -1

    @property
    def name(self) -> str:
        t = BY_OID.get(self.oid) or BY_OID.get(ARRAY_OF.get(self.oid, 0))
        if self.oid in ARRAY_OF:
            return f"_{t.name}" if t else "_text"
        return t.name if t else "text"


def column_type(t: pa.DataType) -> ColumnType:
    """The PostgreSQL type of an Arrow type."""
    if pa.types.is_boolean(t):
        return ColumnType(16, 1)
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t):
        return ColumnType(21, 2)
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return ColumnType(23, 4)
    if pa.types.is_integer(t):
        return ColumnType(20, 8)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return ColumnType(700, 4)
    if pa.types.is_floating(t):
        return ColumnType(701, 8)
    if pa.types.is_decimal(t):
        return ColumnType(1700, -1, ((t.precision << 16) | t.scale) + 4)
    if pa.types.is_date(t):
        return ColumnType(1082, 4)
    if pa.types.is_timestamp(t):
        return ColumnType(1184 if t.tz else 1114, 8)
    if pa.types.is_time(t):
        return ColumnType(1083, 8)
    if pa.types.is_duration(t):
        return ColumnType(1186, 16)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return ColumnType(17, -1)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = column_type(t.value_type)
        elem = BY_OID.get(inner.oid)
        return ColumnType(elem.array_oid if elem and elem.array_oid else 1009, -1)
    return ColumnType(25, -1)


def format_type(oid: int, typmod: int) -> str:
    """What PostgreSQL's format_type(oid, typmod) prints."""
    if oid in ARRAY_OF:
        return format_type(ARRAY_OF[oid], typmod) + "[]"
    t = BY_OID.get(oid)
    if t is None:
        return "???"
    if t.name == "numeric" and typmod >= 4:
        return f"numeric({(typmod - 4) >> 16},{(typmod - 4) & 0xFFFF})"
    if t.name in ("varchar", "bpchar") and typmod >= 4:
        return f"{DISPLAY[t.name]}({typmod - 4})"
    return DISPLAY.get(t.name, t.name)


# ---------------------------------------------------------------------------- text format
Column = pa.ChunkedArray | pa.Array


def fixed_bytes(values: np.ndarray, width: int) -> pa.Array:
    """Each element of a big-endian numpy array as a `width`-byte binary value."""
    raw = np.ascontiguousarray(values)
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(raw), [None, pa.py_buffer(raw.tobytes())]
    )
    return fixed.cast(pa.binary())


def _flat(col: Column) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _with_nulls(values: pa.Array, col: pa.Array) -> pa.Array:
    if col.null_count == 0:
        return values
    return pc.if_else(pc.is_null(col), pa.scalar(None, pa.binary()), values)


def _text_values(col: Column) -> pa.Array:
    col = _flat(col)
    t = col.type
    if pa.types.is_null(t):
        return pa.nulls(len(col), pa.binary())
    if pa.types.is_boolean(t):
        s = pc.if_else(col, "t", "f")
    elif pa.types.is_timestamp(t):
        s = pc.strftime(col, "%Y-%m-%d %H:%M:%S")
        us = pc.cast(col.cast(pa.timestamp("us", t.tz)), pa.int64())
        frac = pc.subtract(us, pc.multiply(pc.divide(us, 1_000_000), 1_000_000))
        if pc.any(pc.not_equal(frac, 0)).as_py():
            return pa.array(
                [
                    None if v is None else _timestamp_text(v, t.tz is not None)
                    for v in col.to_pylist()
                ],
                pa.binary(),
            )
        if t.tz:
            s = pc.binary_join_element_wise(s, "+00", "")
    elif pa.types.is_floating(t):
        s = pc.cast(col, pa.string())
        s = pc.replace_substring_regex(s, "^inf$", "Infinity")
        s = pc.replace_substring_regex(s, "^-inf$", "-Infinity")
        s = pc.replace_substring_regex(s, "^nan$", "NaN")
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.array(
            [None if v is None else _array_text(v).encode() for v in col.to_pylist()], pa.binary()
        )
    elif pa.types.is_duration(t) or pa.types.is_time(t):
        return pa.array(
            [None if v is None else str(v).encode() for v in col.to_pylist()], pa.binary()
        )
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.array(
            [None if v is None else b"\\x" + v.hex().encode() for v in col.to_pylist()], pa.binary()
        )
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        s = col
    elif pa.types.is_decimal(t):
        s = decimal_text(col)
    else:
        s = pc.cast(col, pa.string())
    return pc.cast(s, pa.binary())


def decimal_text(col: pa.Array) -> pa.Array:
    """Decimals in plain notation (`0.00000001`, never Arrow's `1E-8`), scale kept."""
    s = pc.cast(col, pa.string())
    sci = pc.match_substring(s, "E")
    if not pc.any(sci).as_py():
        return s
    scale = col.type.scale
    return pa.array(
        [None if v is None else format(decimal.Decimal(v), f".{scale}f") for v in s.to_pylist()],
        pa.string(),
    )


def _timestamp_text(v: dt.datetime, tz: bool) -> bytes:
    text = v.strftime("%Y-%m-%d %H:%M:%S")
    if v.microsecond:
        text += f".{v.microsecond:06d}".rstrip("0")
    return (text + ("+00" if tz else "")).encode()


def _array_text(values: list[object]) -> str:
    def one(v: object) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "t" if v else "f"
        text = str(v)
        if text == "" or any(ch in text for ch in ' ,{}"\\') or text.upper() == "NULL":
            return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return text

    return "{" + ",".join(one(v) for v in values) + "}"


# -------------------------------------------------------------------------- binary format
_EPOCH_DAYS = 10957  # days from 1970-01-01 to 2000-01-01
_EPOCH_US = _EPOCH_DAYS * 86_400_000_000
_FIXED = {
    21: (pa.int16(), ">i2", 2),
    23: (pa.int32(), ">i4", 4),
    20: (pa.int64(), ">i8", 8),
    700: (pa.float32(), ">f4", 4),
    701: (pa.float64(), ">f8", 8),
}


def _numbers(col: pa.Array, arrow: pa.DataType, fmt: str, width: int, offset: int = 0) -> pa.Array:
    nums = pc.cast(col, arrow, safe=False).fill_null(0)
    values = nums.to_numpy(zero_copy_only=False).astype(fmt)
    if offset:
        values = values - np.asarray(offset, dtype=fmt)
    return _with_nulls(fixed_bytes(values.astype(fmt), width), col)


def _binary_values(col: Column, ct: ColumnType) -> pa.Array:
    col = _flat(col)
    t = col.type
    oid = ct.oid
    if oid in _FIXED:
        arrow, fmt, width = _FIXED[oid]
        return _numbers(col, arrow, fmt, width)
    if oid == 16:
        return pc.if_else(col, pa.scalar(b"\x01"), pa.scalar(b"\x00"))
    if oid == 1082:
        days = pc.cast(pc.cast(col, pa.date32()), pa.int32())
        return _numbers(days, pa.int32(), ">i4", 4, _EPOCH_DAYS)
    if oid in (1114, 1184):
        us = pc.cast(pc.cast(col, pa.timestamp("us", t.tz)), pa.int64())
        return _numbers(us, pa.int64(), ">i8", 8, _EPOCH_US)
    if oid == 1700:
        fast = _numeric_vectorized(col) if pa.types.is_decimal128(t) else None
        if fast is not None:
            return fast
        text = (
            decimal_text(col) if pa.types.is_decimal(t) else pc.cast(col, pa.string())
        ).to_pylist()
        return pa.array([None if v is None else numeric_text_binary(v) for v in text], pa.binary())
    if oid == 17:
        return pc.cast(col, pa.binary())
    if oid == 1083:
        return pa.array(
            [
                None
                if v is None
                else struct.pack(
                    "!q", ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
                )
                for v in col.to_pylist()
            ],
            pa.binary(),
        )
    if oid == 1186:
        return pa.array(
            [
                None
                if v is None
                else struct.pack("!qii", v.seconds * 1_000_000 + v.microseconds, v.days, 0)
                for v in col.to_pylist()
            ],
            pa.binary(),
        )
    if oid in (25, 1043, 1042, 19):
        return _text_values(col)
    raise ValueError(f"no binary output for type {ct.name}")


_GROUPS = 5  # base-10000 digits of an unscaled value below 10**20 (int64 fits)
_POW4 = np.array([10000**k for k in range(_GROUPS - 1, -1, -1)], dtype=np.int64)


def _numeric_vectorized(col: pa.Array) -> pa.Array | None:
    """Binary numerics of a decimal128 column in numpy, when every unscaled value (times the
    padding of its scale to whole base-10000 digits) fits in 63 bits; None otherwise."""
    n = len(col)
    scale = col.type.scale
    if n == 0 or scale < 0:
        return None
    words = np.frombuffer(col.buffers()[1], dtype=np.int64)[2 * col.offset : 2 * (col.offset + n)]
    low, high = words[0::2], words[1::2]
    if not np.all(((high == 0) & (low >= 0)) | ((high == -1) & (low < 0))):
        return None
    frac_groups = -(-scale // 4)
    pad = 10 ** (frac_groups * 4 - scale)
    if np.any(low == np.iinfo(np.int64).min):
        return None
    mag = np.abs(low)
    if np.any(mag > np.iinfo(np.int64).max // pad):
        return None
    mag = mag * pad
    groups = (mag[:, None] // _POW4[None, :]) % 10000  # (n, _GROUPS), most significant first
    nonzero = groups != 0
    any_digit = nonzero.any(axis=1)
    first = np.where(any_digit, nonzero.argmax(axis=1), _GROUPS)
    last = np.where(any_digit, _GROUPS - 1 - nonzero[:, ::-1].argmax(axis=1), _GROUPS - 1)
    ndigits = np.where(any_digit, last - first + 1, 0)
    weight = np.where(any_digit, (_GROUPS - frac_groups - 1) - first, 0)
    head = np.zeros((n, 4), dtype=np.uint16)
    head[:, 0] = ndigits
    head[:, 1] = weight.astype(np.int16).view(np.uint16)
    head[:, 2] = np.where((low < 0) & any_digit, 0x4000, 0)
    head[:, 3] = scale
    record = np.concatenate([head, groups.astype(np.uint16)], axis=1).astype(">u2")
    record = np.ascontiguousarray(record).view(np.uint8).reshape(n, -1)
    idx = np.arange(_GROUPS)[None, :]
    keep = np.concatenate(
        [
            np.ones((n, 4), dtype=bool),
            (idx >= first[:, None]) & (idx <= last[:, None]) & any_digit[:, None],
        ],
        axis=1,
    )
    data = record[np.repeat(keep, 2, axis=1)]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(8 + 2 * ndigits, out=offsets[1:])
    out = pa.BinaryArray.from_buffers(
        pa.binary(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())]
    )
    return _with_nulls(out, col)


def numeric_text_binary(text: str) -> bytes:
    """PostgreSQL's binary numeric from a plain decimal string (`-123.4500`)."""
    if text in ("NaN", "nan"):
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    negative = text.startswith("-")
    body = text.lstrip("+-")
    int_part, _, frac_part = body.partition(".")
    dscale = len(frac_part)
    int_part = int_part.lstrip("0")
    int_groups = []
    if int_part:
        int_part = "0" * ((-len(int_part)) % 4) + int_part
        int_groups = [int(int_part[i : i + 4]) for i in range(0, len(int_part), 4)]
    frac_part += "0" * ((-len(frac_part)) % 4)
    groups = int_groups + [int(frac_part[i : i + 4]) for i in range(0, len(frac_part), 4)]
    weight = len(int_groups) - 1
    while groups and groups[0] == 0:
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight, negative = 0, False
    head = struct.pack("!hhHh", len(groups), weight, 0x4000 if negative else 0, dscale)
    return head + struct.pack(f"!{len(groups)}H", *groups)


def numeric_binary(value: decimal.Decimal | int | float) -> bytes:
    """PostgreSQL's binary numeric of a number."""
    d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    if d.is_nan():
        return numeric_text_binary("NaN")
    if d.is_infinite():
        return struct.pack("!hhHh", 0, 0, 0xD000 if d > 0 else 0xF000, 0)
    return numeric_text_binary(format(d, "f"))


def encode_column(col: Column, ct: ColumnType, fmt: int) -> pa.Array:
    """Every value of a column in the wire format `fmt` (0 text, 1 binary), as a binary
    array (NULL for SQL NULL)."""
    if fmt == BINARY:
        return _binary_values(col, ct)
    return _text_values(col)


def can_send_binary(ct: ColumnType) -> bool:
    return ct.oid in (
        16,
        17,
        19,
        20,
        21,
        23,
        25,
        700,
        701,
        1042,
        1043,
        1082,
        1083,
        1114,
        1184,
        1186,
        1700,
    )
