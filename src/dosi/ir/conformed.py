"""Conformity classes of a model (datus-extensions §3 D-CONFORM, CONF-03/09/16).

A `many_to_many` relationship pairs `from_columns[i]` with `to_columns[i]`: two spellings of
one dimension on two fact tables. Pairs chain transitively (payment <-> login plus login <->
register puts all three dates in one class), and a dataset holds at most one spelling per
class. The planner never joins along these edges: each fact aggregates on its own spelling and
the branches merge by output name (`dosi.plan.conformed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from dosi.ir.model import FieldIr, ModelIr, RelationshipIr


@dataclass(frozen=True)
class ConformClass:
    """One conformed dimension: its spellings, one per dataset, in declaration order."""

    name: str  # the first-declared spelling, `dataset.column` (the class's label)
    members: tuple[FieldIr, ...]

    @property
    def is_time(self) -> bool:
        return any(m.is_time for m in self.members)

    @property
    def spellings(self) -> tuple[str, ...]:
        return tuple(m.qualified for m in self.members)

    def member_on(self, dataset: str) -> FieldIr | None:
        """This dimension as `dataset` spells it, or None when `dataset` is not paired."""
        return next((m for m in self.members if m.dataset == dataset), None)


@dataclass(frozen=True)
class ConformedIr:
    """Every conformed edge and the classes its column pairs form."""

    edges: tuple[RelationshipIr, ...] = ()
    classes: tuple[ConformClass, ...] = ()
    _index: Mapping[tuple[str, str], ConformClass] = field(
        init=False, repr=False, compare=False, default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        index = {(m.dataset, m.name): c for c in self.classes for m in c.members}
        object.__setattr__(self, "_index", MappingProxyType(index))

    def class_of(self, dataset: str, column: str) -> ConformClass | None:
        """The class `dataset.column` belongs to, if it is a paired column."""
        return self._index.get((dataset, column))

    def paired(self, dataset: str) -> bool:
        """`dataset` takes part in some conformed pairing."""
        return any(e.from_dataset == dataset or e.to_dataset == dataset for e in self.edges)

    def spelling(self, f: FieldIr, dataset: str) -> FieldIr | None:
        """`f` as `dataset` spells it: `f` itself on its own dataset, else its class's member
        on `dataset` (None when `f` is not paired with a column of `dataset`)."""
        if f.dataset == dataset:
            return f
        cls = self.class_of(f.dataset, f.name)
        return cls.member_on(dataset) if cls is not None else None

    def edge(self, name: str) -> RelationshipIr | None:
        return next((e for e in self.edges if e.name == name), None)


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
