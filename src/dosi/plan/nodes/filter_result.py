"""FilterResult: where_sql conjuncts naming a metric (HAVING semantics) keep result rows after
aggregation, the window stage and its trim, before order / limit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlglot import exp

from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class FilterResult(PlanNode):
    kind: ClassVar[str] = "filter_result"
    parent: PlanNode
    predicate: exp.Expression  # resolved, over output column names (never edited)
    metrics: tuple[str, ...]  # the metric columns it reads
    outputs: tuple[str, ...]  # the columns kept (a metric computed only for it is dropped)

    def __post_init__(self) -> None:
        if not self.outputs:
            raise ValueError("a filtered result keeps at least one column")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return f"FilterResult {self.predicate.sql()}"

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_filter_result(self)
