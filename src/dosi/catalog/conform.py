"""D-CONFORM in the catalog (issue 12 item 6; datus-extensions §3 D-CONFORM).

`dimensions()` names each paired field's conformity class and its other spellings, and
`dimensions(metric)` of a metric spanning conformed facts lists only what every fact of the
metric can read, one spelling per class (what the query then accepts: CONF-05 / CONF-10).
"""

from __future__ import annotations

from typing import Any

from dosi.ir.conform import conformity
from dosi.ir.graph import RelationshipGraph
from dosi.ir.model import FieldIr, MetricIr, ModelIr, RelationshipIr


def conformity_columns(model: ModelIr, f: FieldIr) -> dict[str, Any]:
    """`conformity_class` and `conformed_with` for a paired field; nothing otherwise."""
    cls = conformity(model).class_of(f.dataset, f.name)
    if cls is None:
        return {}
    return {
        "conformity_class": cls.name,
        "conformed_with": [s for s in cls.spellings if s != f.qualified],
    }


def shared_by_owners(model: ModelIr, graph: RelationshipGraph, m: MetricIr) -> list[str] | None:
    """For a metric whose measures live on several conformed facts: the qualified fields all
    of them read (many-to-one, or through a paired spelling), one spelling per class; None
    when the metric reads one fact or the model pairs none."""
    conf = conformity(model)
    owners = sorted(m.datasets)
    if len(owners) < 2 or not conf.classes:
        return None

    def reads(owner: str, f: FieldIr) -> bool:
        if graph.reachable(owner, f.dataset):
            return True
        cls = conf.class_of(f.dataset, f.name)
        return cls is not None and any(graph.reachable(owner, x.dataset) for x in cls.members)

    out: list[str] = []
    seen: set[str] = set()
    for d in model.datasets.values():
        for f in d.fields.values():
            if not all(reads(o, f) for o in owners):
                continue
            cls = conf.class_of(f.dataset, f.name)
            if cls is not None:
                if cls.name in seen:
                    continue
                seen.add(cls.name)
            out.append(f.qualified)
    return out


def shared_time_axis(model: ModelIr, m: MetricIr) -> str | None:
    """The `metric_time` of a metric over several facts whose primary time dimensions are one
    conformed class (CONF-06): each branch reads its own date, so the metric has an axis; the
    spelling named is the one stored at the coarsest grain, whose D-GRAIN floor applies to all
    (CONF-08). None otherwise."""
    conf = conformity(model)
    owners = sorted(m.datasets)
    if m.time_axis is not None or len(owners) < 2 or not conf.classes:
        return None
    times: list[FieldIr] = []
    for o in owners:
        pt = model.datasets[o].primary_time
        if pt is None:
            return None
        times.append(model.datasets[o].fields[pt])
    cls = conf.class_of(times[0].dataset, times[0].name)
    if cls is None or any(cls.member_on(t.dataset) != t for t in times):
        return None
    order = ("day", "week", "month", "quarter", "year")
    coarsest = max(times, key=lambda t: order.index(t.time_granularity or "day"))
    return coarsest.qualified


def conformed_edge_row(r: RelationshipIr, name: str) -> dict[str, Any]:
    """A many_to_many edge as `dataset(name)` lists it: the other fact and the column pairs,
    this dataset's spelling first; no join type (the edge is never joined)."""
    here_from = r.from_dataset == name
    pairs = zip(r.from_columns, r.to_columns, strict=True)
    return {
        "name": r.name,
        "to": r.to_dataset if here_from else r.from_dataset,
        "cardinality": "many_to_many",
        "join_type": None,
        "columns": [list(p) if here_from else [p[1], p[0]] for p in pairs],
    }
