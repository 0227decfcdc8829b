"""The type of each virtual column as the connection really returns it.

A model's `datatype` is a hint (a ratio declared Decimal divides into a DOUBLE, an Integer
column may be 32-bit): catalogs that BI tools read must announce what queries will return,
so the types are probed once with empty (`limit: 0`) dosi queries and fall back to the
declared datatype where a probe cannot run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from dosi.errors import OsiError
from dosi.query.semantic_sql.result import declared_type
from dosi.query.semantic_sql.shape import VirtualColumn, VirtualTable

Run = Callable[[dict[str, Any]], pa.Table]


def _try(run: Run, query: dict[str, Any]) -> pa.Table | None:
    try:
        return run(query)
    except OsiError:
        return None


def _metric_types(metrics: list[VirtualColumn], run: Run) -> dict[str, pa.DataType]:
    out: dict[str, pa.DataType] = {}
    names = [m.name for m in metrics]
    whole = _try(run, {"metrics": names, "limit": 0})
    if whole is not None:
        return {n: whole.schema.field(n).type for n in names if n in whole.column_names}
    for n in names:
        got = _try(run, {"metrics": [n], "limit": 0}) or _try(
            run, {"metrics": [n], "group_by": ["metric_time:month"], "limit": 0}
        )
        if got is not None and n in got.column_names:
            out[n] = got.schema.field(n).type
    return out


def _field_types(dims: list[VirtualColumn], select: Run) -> dict[str, pa.DataType]:
    out: dict[str, pa.DataType] = {}
    by_dataset: dict[str, list[VirtualColumn]] = {}
    for c in dims:
        if c.grain is None and "." in c.field:
            by_dataset.setdefault(c.field.split(".")[0], []).append(c)
    for ds, cols in by_dataset.items():
        fields = [c.field for c in cols]
        got = _try(select, {"from": ds, "fields": fields, "limit": 0})
        if got is not None and got.num_columns == len(cols):
            out.update({c.name: got.schema.field(i).type for i, c in enumerate(cols)})
            continue
        for c in cols:
            one = _try(select, {"from": ds, "fields": [c.field], "limit": 0})
            if one is not None and one.num_columns == 1:
                out[c.name] = one.schema.field(0).type
    return out


def probe_types(table: VirtualTable, run: Run, select: Run) -> dict[str, pa.DataType]:
    """Column name -> Arrow type, for every column of `table`."""
    metrics = [c for c in table.columns if c.is_metric]
    dims = [c for c in table.columns if not c.is_metric]
    found = {**_metric_types(metrics, run), **_field_types(dims, select)}
    out: dict[str, pa.DataType] = {}
    for c in table.columns:
        t = found.get(c.name)
        if c.grain is not None:  # a bucket keeps its column's kind (DATE / TIMESTAMP)
            t = None
        out[c.name] = t if t is not None else declared_type(c)
    return out
