"""dosi's Arrow answer reshaped into the SQL answer: the select list's columns, in its order,
under its names, after OFFSET."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from dosi.query.semantic_sql.shape import VirtualColumn
from dosi.query.semantic_sql.translate import SqlPlan

_ARROW: dict[str, pa.DataType] = {
    "Integer": pa.int64(),
    "Float": pa.float64(),
    "Decimal": pa.float64(),
    "Boolean": pa.bool_(),
    "Date": pa.date32(),
    "DateTime": pa.timestamp("us"),
    "String": pa.string(),
}
_CAST = {"date": pa.date32(), "timestamp": pa.timestamp("us")}


def declared_type(c: VirtualColumn) -> pa.DataType:
    """The Arrow type a column's model datatype stands for (strings when undeclared)."""
    if c.is_metric and c.datatype is None:
        return pa.float64()
    return _ARROW.get(c.datatype or "String", pa.string())


def project(
    plan: SqlPlan, table: pa.Table | None, types: Mapping[str, pa.DataType] | None = None
) -> pa.Table:
    """The SQL answer from dosi's answer (`table` None: an empty answer typed by `types`,
    the probed column types, else the declared ones)."""
    if table is None:
        fields = [
            pa.field(o.name, (types or {}).get(o.column.name) or declared_type(o.column))
            for o in plan.outputs
        ]
        return pa.schema(fields).empty_table()
    columns, fields = [], []
    for o in plan.outputs:
        col, f = table.column(o.index), table.schema.field(o.index).with_name(o.name)
        if o.cast is not None and col.type != _CAST[o.cast]:
            col = col.cast(_CAST[o.cast])
            f = f.with_type(_CAST[o.cast])
        columns.append(col)
        fields.append(f)
    out = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    if plan.offset:
        out = out.slice(plan.offset)
    return out
