"""Result rows from an Arrow table, converted a column at a time (issue 10, "Arrow all the way").

`execute()` answers rows as the reference engine does: dates and timestamps as ISO strings,
times as ISO strings, decimals exact (`int` at scale <= 0, else `decimal.Decimal`: see
`dosi.execute.values`), everything else as Arrow's own Python value. Converting value by value cost more than the SQL itself on large
results, so each column is cast once with pyarrow.compute and the rows are zipped from the
converted columns. `to_python` stays the one definition of the conversion (per value): a
column whose type the vectorised casts cannot reproduce exactly falls back to it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from dosi.execute.cancel import CancellationToken
from dosi.execute.values import to_python

#: Decimal precision whose integral values always fit an int64.
_INT64_DIGITS = 18
#: Rows converted between two looks at the cancellation token (a client that went away, a
#: request past its deadline stops the conversion within one slice: issue 29, item 1).
SLICE_ROWS = 65_536


def arrow_rows(
    table: pa.Table, cancellation: CancellationToken | None = None
) -> list[dict[str, Any]]:
    """The table's rows as dicts, values as `to_python` gives them; converted a slice at a
    time, stopping with the token's error once it is cancelled."""
    names = table.column_names
    if not names:
        return [{} for _ in range(table.num_rows)]
    if cancellation is None or table.num_rows <= SLICE_ROWS:
        return _rows(table, names)
    out: list[dict[str, Any]] = []
    for lo in range(0, table.num_rows, SLICE_ROWS):
        if cancellation.cancelled:
            raise cancellation.stopped_error()
        out.extend(_rows(table.slice(lo, SLICE_ROWS), names))
    return out


def _rows(table: pa.Table, names: list[str]) -> list[dict[str, Any]]:
    columns = [_python_column(table.column(i)) for i in range(table.num_columns)]
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


def _python_column(col: pa.ChunkedArray) -> list[Any]:
    """One column as Python values, converted in Arrow where the conversion is exact."""
    t = col.type
    if pa.types.is_date(t):
        return pc.cast(col, pa.string()).to_pylist()
    if pa.types.is_timestamp(t) and t.tz is None and t.unit in ("s", "ms", "us"):
        return _timestamp_text(col).to_pylist()
    if pa.types.is_decimal(t):
        if t.scale <= 0 and t.precision - t.scale <= _INT64_DIGITS:
            return pc.cast(col, pa.int64()).to_pylist()
        if t.scale > 0:  # decimal.Decimal, exact, at the column's scale
            # from Arrow's text (its digits at the column's scale): twice as fast as
            # pyarrow's own Decimal values, which cost more than a small query's SQL
            return [
                None if v is None else Decimal(v) for v in pc.cast(col, pa.string()).to_pylist()
            ]
    if _needs_python(t):
        return [to_python(v) for v in col.to_pylist()]
    return col.to_pylist()


def _timestamp_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """`datetime.isoformat(sep=" ")`: seconds always, microseconds only when not zero."""
    # Arrow's %S carries the unit's fraction digits: keep the 19 characters up to the seconds
    text = pc.strftime(col, format="%Y-%m-%d %H:%M:%S")
    base = pc.utf8_slice_codeunits(text, 0, 19)
    micros = pc.add(pc.multiply(pc.millisecond(col), 1000), pc.microsecond(col))
    fraction = pc.utf8_lpad(pc.cast(micros, pa.string()), width=6, padding="0")
    with_fraction = pc.binary_join_element_wise(base, fraction, ".")
    return pc.if_else(pc.equal(micros, 0), base, with_fraction)


def _needs_python(t: pa.DataType) -> bool:
    """Types whose Python values `to_python` changes (the rest pass through as they are)."""
    return pa.types.is_time(t) or pa.types.is_timestamp(t) or pa.types.is_decimal(t)


__all__ = ["arrow_rows", "to_python"]
