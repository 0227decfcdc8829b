"""Conformity classes of a model (datus-extensions §3 D-CONFORM, CONF-03/09/16).

A `many_to_many` relationship pairs `from_columns[i]` with `to_columns[i]`: two spellings of
one dimension on two fact tables. Pairs chain transitively (payment <-> login plus login <->
register puts all three dates in one class), and a dataset holds at most one spelling per
class. The planner never joins along these edges: each fact aggregates on its own spelling and
the branches merge by output name (`dosi.plan.conform`).
"""

from __future__ import annotations

from collections.abc import Callable

from dosi.ir.model import ConformClass, ConformedIr, ModelIr

__all__ = ["ConformClass", "ConformedIr", "conformity", "reachable_fields", "same_dimension"]


EMPTY = ConformedIr()


def conformity(model: ModelIr) -> ConformedIr:
    """The model's conformity classes (none for a model without many_to_many edges, and in
    basic mode, where such an edge is an ordinary join)."""
    return model.conformed if model.conformed is not None else EMPTY


def same_dimension(model: ModelIr, a: str, b: str) -> bool:
    """`a` and `b` (qualified names) are one dimension: equal, or spellings of one conformed
    class (a window axis grouped under the paired fact's name, CONF-14)."""
    if a == b:
        return True
    ds, _, col = a.partition(".")
    cls = conformity(model).class_of(ds, col)
    return cls is not None and b in cls.spellings


def reachable_fields(model: ModelIr, reach: Callable[[str, str], bool], dataset: str) -> list[str]:
    """Every `dataset.field` a branch rooted at `dataset` can group or filter by: the fields
    of the datasets it reaches many-to-one (`reach(src, dst)`), plus every conformed spelling
    of a paired column among them (CONF-05). The conformed-dimension set of a compose member
    (D-DERIVE) is the intersection of these over its members."""
    out: dict[str, None] = {}
    conf = conformity(model)
    for d in model.datasets.values():
        if not reach(dataset, d.name):
            continue
        for f in d.fields.values():
            out[f.qualified] = None
    for cls in conf.classes:
        if any(reach(dataset, m.dataset) for m in cls.members):
            for m in cls.members:
                if m.name in model.datasets[m.dataset].fields:
                    out[m.qualified] = None
    return list(out)
