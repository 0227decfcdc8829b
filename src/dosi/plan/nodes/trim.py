"""Trim: rows outside the queried time_range dropped after the window stage (the scan was
widened for lookback / lookahead; WHERE before the window functions would lose them), and,
over a densified series whose output keeps the rows with data (plan/densify.py), the rows a
time spine filled in (`present`: the column marking rows with data) unless one of the
`covering` columns (window metric outputs, densify mode `covered`) has a value there; with
`with_data` false (no metric read outside the windows) only those rows are kept."""

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
    covering: tuple[str, ...] = ()
    with_data: bool = True  # covering: the rows with data are kept as well

    def __post_init__(self) -> None:
        if self.bounds.start is None and self.bounds.end is None and self.present is None:
            raise ValueError("a trim bounds at least one side or keeps the rows with data")
        if self.covering and self.present is None:
            raise ValueError("covering columns keep filled rows: the trim needs the mark")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        b = self.bounds
        text = "Trim"
        if b.start is not None or b.end is not None:
            text += f" {self.time_key} in [{b.start or '-inf'}, {b.end or '+inf'})"
        if self.present is not None:
            if self.covering:
                shown = ", ".join(self.covering)
                text += f" keep rows {'with data or ' if self.with_data else ''}with a value in"
                text += f" [{shown}]"
            else:
                text += " keep rows with data"
        return text

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_trim(self)
