"""SemiAdditiveJoin: the rows of a semi-additive branch kept at their period's chosen snapshot
(D-SEMI; MetricFlow's SemiAdditiveJoinNode): the snapshot time per period and window grouping
(MAX / MIN of the time for last / first, the time of the lowest / highest value for min / max)
computed over the same filtered rows, and joined back on it. Below the branch's Aggregate and
any PreAggregate, so nothing is ever aggregated across snapshots before the choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import SemiAdditivePlan


@dataclass(frozen=True)
class SemiAdditiveJoin(PlanNode):
    kind: ClassVar[str] = "semi_additive_join"
    parent: PlanNode  # the branch's scan and joins (its filters applied)
    plan: SemiAdditivePlan

    def __post_init__(self) -> None:
        if self.plan.ir.by_value and self.plan.value_measure is None:
            raise ValueError("a snapshot chosen by value names the measure whose value it is")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return f"SemiAdditiveJoin keep {self.plan.describe()}"

    def details(self) -> tuple[str, ...]:
        out = [f"snapshot time {self.plan.snapshot.expr.sql()}"]
        if self.plan.snapshot.grain is not None:
            out[0] += f" at its stored grain {self.plan.snapshot.grain}"
        if self.plan.groupings:
            out.append("window groupings " + ", ".join(g.sql() for g in self.plan.groupings))
        if self.plan.value_measure is not None:
            out.append(f"snapshot chosen by the value of {self.plan.value_measure}")
        return tuple(out)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_semi_additive_join(self)
