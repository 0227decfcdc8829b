"""DeriveCompute: stage-tier compose metrics (D-DERIVE, DRV-CMP-10) computed over the columns
of the window stage below, before the trim: members accumulate first, then the arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.derive_stage import DerivedColumn
from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class DeriveCompute(PlanNode):
    kind: ClassVar[str] = "derive_compute"
    parent: PlanNode  # a Window stage (or another DeriveCompute)
    columns: tuple[DerivedColumn, ...]

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("a derive stage computes at least one metric")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return f"DeriveCompute [{', '.join(c.name for c in self.columns)}]"

    def details(self) -> tuple[str, ...]:
        return tuple(c.describe() for c in self.columns)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_derive_compute(self)
