"""Trim: rows outside the queried time_range dropped after the window stage (the scan was
widened for lookback / lookahead; WHERE before the window functions would lose them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import TimeBounds


@dataclass(frozen=True)
class Trim(PlanNode):
    kind: ClassVar[str] = "trim"
    parent: PlanNode
    time_key: str
    bounds: TimeBounds

    def __post_init__(self) -> None:
        if self.bounds.start is None and self.bounds.end is None:
            raise ValueError("a trim bounds at least one side")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        b = self.bounds
        return f"Trim {self.time_key} in [{b.start or '-inf'}, {b.end or '+inf'})"

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_trim(self)
