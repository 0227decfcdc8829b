"""The wire encodings of values, checked against psycopg's own decoders (the text and
binary loaders a client uses), including NULLs, fractions of seconds, non-finite floats and
numerics of every shape."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from dosi.frontends.pg.params import decode
from dosi.frontends.pg.pgtypes import (
    BINARY,
    TEXT,
    column_type,
    encode_column,
    numeric_text_binary,
)

psycopg = pytest.importorskip("psycopg")
from psycopg.adapt import Transformer  # noqa: E402

NUMERICS = [
    "0",
    "1",
    "-1",
    "0.0001",
    "-0.5",
    "12345678.90",
    "10000",
    "99999999999999999.99",
    "0.00000001",
    "123.4500",
    "-98765.4321",
]


def _load(values: list[bytes | None], oid: int, fmt: int) -> list[object]:
    tx = Transformer()
    loader = tx.get_loader(oid, psycopg.pq.Format.BINARY if fmt else psycopg.pq.Format.TEXT)
    return [None if v is None else loader.load(v) for v in values]


@pytest.mark.parametrize("fmt", [TEXT, BINARY], ids=["text", "binary"])
@pytest.mark.parametrize(
    "array",
    [
        pa.array([1, -2, None, 2**40], pa.int64()),
        pa.array([1, None, -7], pa.int32()),
        pa.array([1.5, 0.1, None, 1e300, -2.0], pa.float64()),
        pa.array([True, None, False]),
        pa.array(["web", None, "", "é ünï\tcode"]),
        pa.array([dt.date(2024, 2, 29), None, dt.date(1999, 12, 31)]),
        pa.array(
            [dt.datetime(2024, 1, 1), None, dt.datetime(2025, 3, 4, 5, 6, 7, 890000)],
            pa.timestamp("us"),
        ),
        pa.array([decimal.Decimal(x) for x in NUMERICS] + [None], pa.decimal128(38, 8)),
        pa.array([decimal.Decimal(x) for x in ("1.50", "-3.25", "0.00")], pa.decimal128(10, 2)),
    ],
    ids=lambda a: str(a.type),
)
def test_values_decode_as_sent(array: pa.Array, fmt: int) -> None:
    ct = column_type(array.type)
    encoded = encode_column(array, ct, fmt).to_pylist()
    assert _load(encoded, ct.oid, fmt) == array.to_pylist()


def test_non_finite_floats() -> None:
    array = pa.array([float("inf"), float("-inf"), float("nan")])
    ct = column_type(array.type)
    for fmt in (TEXT, BINARY):
        got = _load(encode_column(array, ct, fmt).to_pylist(), ct.oid, fmt)
        assert got[0] == float("inf") and got[1] == float("-inf") and got[2] != got[2]


@pytest.mark.parametrize("text", NUMERICS)
def test_numeric_parameters_round_trip(text: str) -> None:
    array = pa.array([decimal.Decimal(text)], pa.decimal128(38, 8))
    binary = encode_column(array, column_type(array.type), BINARY).to_pylist()[0]
    assert decode(binary, 1700, BINARY) == decimal.Decimal(text)


def test_vectorized_numerics_equal_the_per_value_encoding() -> None:
    """The numpy path and the per-value path produce the same bytes (scales 0 to 12)."""
    for scale in (0, 1, 2, 3, 4, 5, 8, 12):
        values = [
            decimal.Decimal(x).scaleb(-scale)
            for x in (0, 1, -1, 7, 10**6 + 1, -(10**9), 123456789, 10**14 - 1)
        ]
        array = pa.array([*values, None], pa.decimal128(38, scale))
        got = encode_column(array, column_type(array.type), BINARY).to_pylist()
        want = [*(numeric_text_binary(format(v, f".{scale}f")) for v in values), None]
        assert got == want, scale
