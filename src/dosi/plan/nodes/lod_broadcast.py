"""LodBroadcast: the fact's detail rows, each joined NULL-safely to its key's row of one
rollup per key family (datus-extensions §3 D-LOD "broadcast"; CHECKLIST LOD-PLAN-03..10).
`detail` aggregates the joined rows; `grid` first reduces them to one row per (view dims x the
aggregated family's keys), so a pinned value counts once per key per group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.nodes.lod_rollup import LodRollup
from dosi.plan.records import LodShape


@dataclass(frozen=True)
class LodBroadcast(PlanNode):
    kind: ClassVar[str] = "lod_broadcast"
    parent: PlanNode  # the detail rows: the branch's scan and joins
    rollups: tuple[LodRollup, ...]
    shape: LodShape

    def __post_init__(self) -> None:
        if not self.rollups:
            raise ValueError("a broadcast joins at least one rollup")
        if self.shape.mode not in ("detail", "grid"):
            raise ValueError(f"broadcast mode {self.shape.mode!r}")
        if (self.shape.mode == "grid") != (self.shape.grid_family is not None):
            raise ValueError("a grid names the family it weighs by")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent, *self.rollups)

    def describe(self) -> str:
        onto = "detail rows"
        if self.shape.mode == "grid":
            fam = next(r for r in self.rollups if r.spec.alias == self.shape.grid_family)
            keys = ", ".join(k for k, _ in fam.spec.keys)
            onto = f"grid (view dims x [{keys}]: each key once per group)"
        joined = ", ".join(r.spec.alias for r in self.rollups)
        return f"LodBroadcast onto {onto}; NULL-safe join of [{joined}] on their keys"

    def details(self) -> tuple[str, ...]:
        return tuple(f"dimension filter {where}: {text}" for where, text in self.shape.placements)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_lod_broadcast(self)
