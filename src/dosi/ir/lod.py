"""D-LOD fixed fields in the IR (datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-*).

A fixed field's value is not a stored column: it is its base aggregate over the dataset
grouped by its keys. In every expression that reads it (the field itself, a row-level field
over it, a metric or a filter) it stands as a placeholder column `<dataset>.<field>` tagged
`meta["dosi_lod"] = "<dataset>.<field>"`; the planner decides which rollup provides the value
(dosi.plan.lod) and the SQL layer points the placeholder at that rollup's column.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

LOD_META = "dosi_lod"


@dataclass(frozen=True)
class LodFieldIr:
    """`fixed(base, keys...)` on a field: the rollup groups its dataset by `keys` (field names
    of the same dataset, possibly none: table-level FIXED) and computes `value`."""

    base: str  # the base metric's name
    keys: tuple[str, ...]  # field names of the field's own dataset
    value: exp.Expression  # the aggregate, columns qualified by the dataset (fields inlined)
    text: str  # the lod expr as authored

    @property
    def family(self) -> tuple[str, ...]:
        """Fields with the same keys share one rollup (a key family)."""
        return self.keys


def lod_placeholder(dataset: str, name: str, ident: exp.Identifier) -> exp.Column:
    """The column a fixed field's value stands as until the planner places its rollup."""
    col = exp.Column(this=ident, table=exp.to_identifier(dataset))
    col.meta[LOD_META] = f"{dataset}.{name}"
    return col


def lod_refs(expr: exp.Expression | None) -> list[str]:
    """The fixed fields an expression reads ("dataset.field"), in order, each once."""
    if expr is None:
        return []
    out: dict[str, None] = {}
    for c in expr.find_all(exp.Column):
        q = c._meta.get(LOD_META) if c._meta else None
        if q is not None:
            out[q] = None
    return list(out)


def is_lod_column(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and bool(node._meta) and LOD_META in node._meta
