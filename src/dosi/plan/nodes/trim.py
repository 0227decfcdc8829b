"""Trim: rows outside the queried time_range dropped after the window stage (the scan was
widened for lookback / lookahead; WHERE before the window functions would lose them), and,
over a densified series whose output keeps the rows with data (plan/densify.py), the rows a
time spine filled in (`present`: the column marking rows with data)."""

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
    present: str | None = None

    def __post_init__(self) -> None:
        if self.bounds.start is None and self.bounds.end is None and self.present is None:
            raise ValueError("a trim bounds at least one side or keeps the rows with data")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        b = self.bounds
        text = "Trim"
        if b.start is not None or b.end is not None:
            text += f" {self.time_key} in [{b.start or '-inf'}, {b.end or '+inf'})"
        if self.present is not None:
            text += " keep rows with data"
        return text

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_trim(self)
