"""Join: a many-to-one step from the rows in scope to the one side of a relationship."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.ir.model import RelationshipIr
from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class Join(PlanNode):
    kind: ClassVar[str] = "join"
    parent: PlanNode
    relationship: RelationshipIr

    def __post_init__(self) -> None:
        if self.relationship.join_type.upper() not in ("LEFT", "INNER"):
            raise ValueError(f"join type {self.relationship.join_type!r}")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        r = self.relationship
        return (
            f"Join {r.join_type.upper()} {r.to_dataset} via {r.name} "
            f"({r.from_dataset} -> {r.to_dataset})"
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_join(self)
