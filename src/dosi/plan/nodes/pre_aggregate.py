"""PreAggregate: rows first grouped by the raw date, then rolled up to the bucket
(docs/performance.md, rule 1: a DATE bucket coarser than a day over re-aggregatable measures)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class PreAggregate(PlanNode):
    kind: ClassVar[str] = "pre_aggregate"
    parent: PlanNode
    by: tuple[str, ...]  # the group-by outputs grouped by their raw value first
    measures: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.measures:
            raise ValueError("a pre-aggregation rolls up at least one measure")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return (
            f"PreAggregate per day of [{', '.join(self.by)}] measures=[{', '.join(self.measures)}]"
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_pre_aggregate(self)
