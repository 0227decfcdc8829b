"""Aggregate: one GROUP BY over one fact dataset at the query grain (never across a fan-out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import BranchDim


@dataclass(frozen=True)
class Aggregate(PlanNode):
    kind: ClassVar[str] = "aggregate"
    parent: PlanNode  # the scan / join chain, a PreAggregate or a StreamBucket
    branch_id: str
    dataset: str
    axis: str | None  # the field metric_time resolves to in this branch
    dims: tuple[BranchDim, ...]
    measures: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.measures:
            raise ValueError(f"aggregate {self.branch_id} computes no measure")
        outputs = [d.output for d in self.dims]
        if len(set(outputs)) != len(outputs):
            raise ValueError(f"aggregate {self.branch_id} groups twice by one output")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        parts = [f"Aggregate {self.branch_id} over {self.dataset}"]
        if self.axis:
            parts.append(f"metric_time={self.axis}")
        parts.append(f"measures=[{', '.join(self.measures)}]")
        if self.dims:
            parts.append(f"by=[{', '.join(d.output for d in self.dims)}]")
        return " ".join(parts)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_aggregate(self)
