"""The plan nodes below a branch aggregate that reads D-LOD fixed fields (plan/lod_field.py chose the
shape): a LodRollup read alone (two-stage), or the detail rows under a LodBroadcast."""

from __future__ import annotations

from dosi.plan.node import PlanNode
from dosi.plan.nodes import Join, LodBroadcast, LodRollup, Scan
from dosi.plan.records import Branch, LodRollupSpec


def _rollup_input(r: LodRollupSpec) -> PlanNode:
    node: PlanNode = Scan(r.dataset)  # its context filters: the LodRollup's details
    for step in r.joins:
        node = Join(node, step.relationship)
    return node


def lod_input(b: Branch) -> PlanNode:
    """What the branch's Aggregate reads."""
    shape = b.lod
    assert shape is not None
    if shape.mode == "rollup":
        (r,) = shape.rollups
        return LodRollup(_rollup_input(r), r, shape, b.filters)
    node: PlanNode = Scan(b.dataset, b.filters, b.time_filters)
    for step in b.joins:
        node = Join(node, step.relationship)
    rollups = tuple(LodRollup(_rollup_input(r), r) for r in shape.rollups)
    return LodBroadcast(node, rollups, shape)
