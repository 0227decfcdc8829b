"""One result shape whatever engine ran the query: the Arrow types DuckDB returns for the same
query. Engines differ in how they hand back the same values (SQLite: ISO text for dates;
ClickHouse: DATE buckets, UInt64 counts, binary strings; Spark: zoned timestamps), so each
group-by column is cast to the type its kind has on DuckDB and integers to int64."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from dosi.ext.grains import KNOWN_GRAINS, is_date_part

_TIMESTAMP = pa.timestamp("us")


def output_types(
    dims: Iterable[tuple[str, str | None, bool, Iterable[str | None]]],
) -> dict[str, pa.DataType]:
    """Column -> Arrow type for group-by outputs given as (output, grain, streaming, the
    datatypes of the field in every branch): a streaming window's bounds are timestamps; a
    Date field (bucketed or not) is a DATE, as long as every branch reads a Date (a merge with
    a timestamp axis yields timestamps); any other temporal field a timestamp; a date part
    (`day_of_week`, ...) an int64."""
    out: dict[str, pa.DataType] = {}
    for name, grain, streaming, datatypes in dims:
        kinds = set(datatypes)
        if streaming:
            out["window_start"] = _TIMESTAMP
            out["window_end"] = _TIMESTAMP
        elif grain is not None and is_date_part(grain):
            out[name] = pa.int64()  # a date part is an integer (issue 22), never a bucket
        elif grain is not None and grain not in KNOWN_GRAINS:
            continue  # a calendar-table grain: the calendar column's own type
        elif kinds == {"Date"}:
            out[name] = pa.date32()
        elif grain is not None or kinds & {"DateTime", "DateTimeTz"}:
            out[name] = _TIMESTAMP
    return out


def conform(table: pa.Table, temporal: dict[str, pa.DataType]) -> pa.Table:
    """`table` with DuckDB's column types (values unchanged)."""
    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        columns.append(_conform_column(column, temporal.get(name)))
    return pa.Table.from_arrays(columns, names=table.column_names)


def _conform_column(column: pa.ChunkedArray, want: pa.DataType | None) -> pa.ChunkedArray:
    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = column.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        column = column.cast(pa.string())
        t = column.type
    if want is not None:
        if pa.types.is_timestamp(t) and t.tz is not None:
            column = pc.cast(column, pa.timestamp(t.unit))  # the UTC wall clock
        if pa.types.is_string(column.type) and pa.types.is_timestamp(want):
            return _parse_ts(column)
        if pa.types.is_string(column.type) and pa.types.is_date(want):
            return _parse_ts(column).cast(want)
        return column.cast(want) if column.type != want else column
    if pa.types.is_null(t):
        return column
    if pa.types.is_integer(t) and t != pa.int64():
        return column.cast(pa.int64())
    if pa.types.is_floating(t) and t != pa.float64():
        return column.cast(pa.float64())
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pc.cast(column, pa.timestamp(t.unit))
    return column


def _parse_ts(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """ISO text ('YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.fff]') -> timestamp[us]."""
    values = column.to_pylist()
    padded = [v if v is None or len(v) > 10 else f"{v} 00:00:00" for v in values]
    return pa.chunked_array([pa.array(padded).cast(_TIMESTAMP)])
