"""PeriodSample: D-WINDOW `period_value` (issue 22 item 7). The rows below are one per bucket
of the frame's accumulation grain (after the window stage, its trim and densify); this node
keeps one row per coarser bucket of the query, holding the first, last or average of the
running values inside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import PeriodSample as PeriodSampleSpec


@dataclass(frozen=True)
class PeriodSample(PlanNode):
    kind: ClassVar[str] = "period_sample"
    parent: PlanNode
    spec: PeriodSampleSpec

    def __post_init__(self) -> None:
        if not self.spec.buckets or not self.spec.picks:
            raise ValueError("a period sample folds into at least one bucket, one metric")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return self.spec.describe()

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_period_sample(self)
