"""OrderLimit: the result's columns, its order (the group-by columns break ties, NULLs last
unless asked otherwise) and its row limit. Always the root of a plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class OrderLimit(PlanNode):
    kind: ClassVar[str] = "order_limit"
    parent: PlanNode
    outputs: tuple[str, ...]
    order: tuple[tuple[str, bool, str | None], ...]  # (column, desc, nulls)
    limit: int | None

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 0:
            raise ValueError("a negative limit")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        parts = [f"Output [{', '.join(self.outputs)}]"]
        if self.order:
            keys = [
                f"{k} {'DESC' if d else 'ASC'}" + (f" NULLS {n.upper()}" if n else "")
                for k, d, n in self.order
            ]
            parts.append("Order " + ", ".join(keys))
        if self.limit is not None:
            parts.append(f"Limit {self.limit}")
        return " ".join(parts)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_order_limit(self)
