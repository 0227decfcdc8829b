"""A result's Arrow table as a pandas or polars DataFrame with dtypes analysis code can use
(docs/results.md, "DataFrames").

pandas (`pandas_frame`):
* a DECIMAL with fraction digits (money) is `float64` (the nearest double), so `df.plot()`,
  `describe()` and `resample()` see numbers; `exact=True` keeps it exact as the Arrow-backed
  `decimal128(p, s)[pyarrow]` dtype instead (numeric for pandas, but not every pandas method
  takes it);
* a DECIMAL without fraction digits (DuckDB answers `SUM` of integers as HUGEINT) is `int64`
  when its values fit, else `float64` (`exact=True`: Arrow-backed decimal);
* an integer column with NULLs is pandas' nullable integer of the same width and sign
  (`Int64`, `UInt64`, ...; pandas would otherwise turn it into float64 and round integers
  beyond 2**53);
* DATE columns (time buckets over a Date axis) are `datetime64[ms]`, timestamps
  `datetime64[us]`, so time-series methods apply.

polars (`polars_frame`): polars' own Arrow mapping, which is exact and typed (DECIMAL ->
`Decimal(p, s)`, DATE -> `Date`, TIMESTAMP -> `Datetime`), except that a DECIMAL without
fraction digits is `Int64` when its values fit, as rows hold it as an int.

The libraries are imported by these calls only (as `execute.runner.require` imports an
engine's driver): neither is a dependency of dosi.
"""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


def _library(name: str, extra: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"to_{name}() needs {name}: pip install 'dosi[{extra}]'") from exc


def _whole_decimal_as_int(column: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """A DECIMAL(p, 0) column as int64 when every value fits, else None."""
    t = column.type
    if not pa.types.is_decimal(t) or t.scale > 0:
        return None
    try:
        return pc.cast(column, pa.int64())  # a safe cast: fails on overflow
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _nullable_int(pd: Any, t: pa.DataType) -> Any:
    """pandas' nullable integer dtype of `t`'s width and sign (a UBIGINT above 2**63 fits
    `UInt64`, not `Int64`)."""
    sign = "UInt" if pa.types.is_unsigned_integer(t) else "Int"
    return getattr(pd, f"{sign}{t.bit_width}Dtype")()


def pandas_frame(table: pa.Table, *, exact: bool = False) -> Any:
    """The table as a pandas DataFrame (see the module docstring for the dtypes)."""
    pd = _library("pandas", "pandas")
    series: dict[str, Any] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        t = column.type
        if pa.types.is_decimal(t):
            as_int = None if exact else _whole_decimal_as_int(column)
            if as_int is not None:
                column, t = as_int, as_int.type
            elif exact:
                series[name] = column.to_pandas(types_mapper=pd.ArrowDtype)
                continue
            else:
                column, t = pc.cast(column, pa.float64()), pa.float64()
        if pa.types.is_integer(t) and column.null_count:
            series[name] = column.to_pandas(types_mapper={t: _nullable_int(pd, t)}.get)
            continue
        series[name] = column.to_pandas(date_as_object=False)
    return pd.DataFrame(series, columns=table.column_names)


def polars_frame(table: pa.Table) -> Any:
    """The table as a polars DataFrame (see the module docstring for the dtypes)."""
    pl = _library("polars", "polars")
    columns = []
    for column in table.columns:
        as_int = _whole_decimal_as_int(column)
        columns.append(column if as_int is None else as_int)
    plain = pa.Table.from_arrays(columns, names=table.column_names)
    return pl.from_arrow(plain)


__all__ = ["pandas_frame", "polars_frame"]
