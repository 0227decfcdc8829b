"""Merge: branch results joined on the group-by output names, NULL-safe (S-FAN-3).

The strategy is the dialect's: `full_outer` chains FULL OUTER JOINs on IS NOT DISTINCT FROM;
`union_keys` LEFT JOINs every branch to the UNION of their keys (where a FULL JOIN cannot use
a NULL-safe condition: PostgreSQL, MySQL); `cross` joins single-row branches (no group-by).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from dosi.plan.node import PlanNode, PlanVisitor, T

MergeStrategy = Literal["full_outer", "union_keys", "cross"]


@dataclass(frozen=True)
class Merge(PlanNode):
    kind: ClassVar[str] = "merge"
    inputs: tuple[PlanNode, ...]  # one Aggregate (or its Window stage) per branch
    dims: tuple[str, ...]
    strategy: MergeStrategy

    def __post_init__(self) -> None:
        if len(self.inputs) < 2:
            raise ValueError("a merge joins at least two branches")
        if (self.strategy == "cross") != (not self.dims):
            raise ValueError(f"merge strategy {self.strategy} with dims {self.dims}")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return self.inputs

    def describe(self) -> str:
        if self.strategy == "cross":
            return "Merge CROSS (one row per branch)"
        how = "FULL OUTER" if self.strategy == "full_outer" else "UNION of keys LEFT JOIN"
        return f"Merge {how} on [{', '.join(self.dims)}] (NULL-safe)"

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_merge(self)
