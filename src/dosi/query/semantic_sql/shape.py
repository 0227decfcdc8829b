"""The virtual table a semantic SQL query reads: one table per model, one column per
dimension spelling (`orders__channel`, `metric_time__month`, ...) and one per metric.

The table holds no rows: a query over it is translated into a dosi query, never run as SQL
(see `dosi.query.semantic_sql.translate`). Column names are the dosi output spellings with
`.` and `:` written as `__`, so they need no quoting in any BI tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from dosi.ir.model import GRAIN_RANK, GRAINS, FieldIr, MetricIr, ModelIr
from dosi.query.resolve import METRIC_TIME

ColumnKind = Literal["dimension", "metric"]

#: The schema every virtual table lives in (what `current_schema()` answers).
SCHEMA = "public"


@dataclass(frozen=True)
class VirtualColumn:
    """One column: a dimension (at one grain) or a metric."""

    name: str
    kind: ColumnKind
    datatype: str | None  # the model's datatype (Integer, String, Date, DateTime, Decimal...)
    description: str | None = None
    # dimensions: the group-by spelling (`orders.channel`, `metric_time:month`), the field
    # (`orders.order_date`, or `metric_time`) and the grain (None: the field as stored)
    group_by: str = ""
    field: str = ""
    grain: str | None = None
    is_time: bool = False
    groupable: bool = True  # False: a D-DIM measure column, readable in WHERE only

    @property
    def is_metric(self) -> bool:
        return self.kind == "metric"


@dataclass(frozen=True)
class VirtualTable:
    """The model as one table; `columns` in catalog order (metric_time, dimensions, metrics)
    and `hidden` the columns only WHERE may read (not listed in the catalog)."""

    name: str
    description: str | None
    columns: tuple[VirtualColumn, ...]
    hidden: tuple[VirtualColumn, ...] = ()
    _by_name: dict[str, VirtualColumn] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, VirtualColumn] = {}
        for c in (*self.columns, *self.hidden):
            index.setdefault(c.name, c)
            if c.kind == "dimension":  # the dosi spelling, quoted: "orders.channel"
                index.setdefault(c.group_by, c)
        self._by_name.update(index)

    def column(self, name: str) -> VirtualColumn | None:
        """The column a (folded or quoted) identifier names."""
        return self._by_name.get(name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def metric_names(self) -> list[str]:
        return [c.name for c in self.columns if c.is_metric]

    def metric(self, name: str) -> VirtualColumn | None:
        c = self._by_name.get(name)
        return c if c is not None and c.is_metric else None


def column_name(spelling: str) -> str:
    """`orders.order_date:month` -> `orders__order_date__month`."""
    return spelling.replace(".", "__").replace(":", "__")


def _grains(f: FieldIr) -> tuple[str, ...]:
    finest = f.time_granularity or "day"
    return tuple(g for g in GRAINS if GRAIN_RANK[g] >= GRAIN_RANK[finest])


def _metric_time(model: ModelIr) -> list[VirtualColumn]:
    axes = [model.field(m.time_axis) for m in model.metrics.values() if m.time_axis]
    if not axes:
        return []
    datatype = "DateTime" if any(f.datatype == "DateTime" for f in axes) else "Date"
    desc = "the time axis of each metric (its D-TIME dimension), at the column's grain"
    out = [
        VirtualColumn(
            METRIC_TIME, "dimension", datatype, desc, METRIC_TIME, METRIC_TIME, None, True
        )
    ]
    for g in GRAINS:
        out.append(
            VirtualColumn(
                f"{METRIC_TIME}__{g}",
                "dimension",
                "DateTime" if datatype == "DateTime" else "Date",
                f"{desc} ({g})",
                f"{METRIC_TIME}:{g}",
                METRIC_TIME,
                g,
                True,
            )
        )
    return out


def _field_columns(f: FieldIr, groupable: bool) -> list[VirtualColumn]:
    base = VirtualColumn(
        column_name(f.qualified),
        "dimension",
        f.datatype,
        f.description,
        f.qualified,
        f.qualified,
        None,
        f.is_time,
        groupable,
    )
    if not f.is_time or not groupable:
        return [base]
    out = [base]
    for g in _grains(f):
        spelling = f"{f.qualified}:{g}"
        dtype = "DateTime" if f.datatype == "DateTime" else "Date"
        out.append(
            VirtualColumn(
                column_name(spelling),
                "dimension",
                dtype,
                f.description,
                spelling,
                f.qualified,
                g,
                True,
            )
        )
    return out


def _metric_column(m: MetricIr) -> VirtualColumn:
    return VirtualColumn(m.name, "metric", m.datatype, m.description)


def virtual_table(model: ModelIr) -> VirtualTable:
    """The model's virtual table (names that collide keep the first column)."""
    columns: list[VirtualColumn] = [*_metric_time(model)]
    hidden: list[VirtualColumn] = []
    for d in model.datasets.values():
        for f in d.fields.values():
            is_dim, _ = model.dimension_roles.get((d.name, f.name), (True, "default"))
            (columns if is_dim else hidden).extend(_field_columns(f, is_dim))
    columns.extend(_metric_column(m) for m in model.metrics.values())
    seen: set[str] = set()
    unique = []
    for c in columns:
        if c.name not in seen:
            seen.add(c.name)
            unique.append(c)
    return VirtualTable(model.name, model.description, tuple(unique), tuple(hidden))
