"""ComputeMetrics: metric formulas over the measure columns of one aggregate or a merge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import MetricColumn


@dataclass(frozen=True)
class ComputeMetrics(PlanNode):
    kind: ClassVar[str] = "compute_metrics"
    parent: PlanNode  # an Aggregate or a Merge
    dims: tuple[str, ...]
    metrics: tuple[MetricColumn, ...]
    # measure columns passed up as they are, (measure, branch id): a window stage's series
    passed: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        names = [m.name for m in self.metrics] + [n for n, _ in self.passed]
        if len(set(names)) != len(names):
            raise ValueError("a metric computed twice")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return f"ComputeMetrics [{', '.join(m.name for m in self.metrics)}]"

    def details(self) -> tuple[str, ...]:
        return (
            *(m.describe() for m in self.metrics),
            *(f"pass {bid}.{n}" for n, bid in self.passed),
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_compute_metrics(self)
