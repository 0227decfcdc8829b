"""D-LOD fixed fields in the IR (datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-*).

A fixed field's value is not a stored column: it is its base aggregate over the dataset
grouped by its keys. In every expression that reads it (the field itself, a row-level field
over it, a metric or a filter) it stands as a placeholder column `<dataset>.<field>` tagged
`meta["dosi_lod"] = "<dataset>.<field>"`; the planner decides which rollup provides the value
(dosi.plan.lod_field) and the SQL layer points the placeholder at that rollup's column.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

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
        q = lod_tag(c)
        if q is not None:
            out[q] = None
    return list(out)


def lod_tag(node: exp.Expression) -> str | None:
    """The fixed field a placeholder column stands for, else None. Reads `_meta` directly:
    the `meta` property would create an empty dict on the (shared, frozen) IR tree."""
    meta = node._meta
    return meta.get(LOD_META) if meta else None


def is_lod_column(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and lod_tag(node) is not None


@dataclass(frozen=True)
class ModelLodInfo:
    """Which fields and measures of a model read a fixed field (computed once per model)."""

    fields: frozenset[str]  # qualified fields that are, or read, a fixed field
    measures: frozenset[str]  # measure names whose aggregate reads one


_INFO: dict[int, tuple[weakref.ref[Any], ModelLodInfo | None]] = {}


def model_lod_info(model: Any) -> ModelLodInfo | None:
    """None for a model without fixed fields, so the planner pays one dict lookup per branch
    (compile time: docs/performance.md); else the fields and measures reading one."""
    hit = _INFO.get(id(model))
    if hit is not None and hit[0]() is model:
        return hit[1]
    fields = frozenset(
        f.qualified for d in model.datasets.values() for f in d.fields.values() if lod_refs(f.expr)
    )
    info = None
    if fields:
        measures = frozenset(n for n, m in model.measures.items() if lod_refs(m.expr))
        info = ModelLodInfo(fields, measures)
    key = id(model)
    _INFO[key] = (weakref.ref(model, lambda _r: _INFO.pop(key, None)), info)
    return info


def model_has_lod(model: Any) -> bool:
    return model_lod_info(model) is not None
