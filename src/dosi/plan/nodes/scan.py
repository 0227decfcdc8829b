"""Scan: the rows of one dataset, filtered by the query's where_sql and time_range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlglot import exp

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import TimeFilter


@dataclass(frozen=True)
class Scan(PlanNode):
    kind: ClassVar[str] = "scan"
    dataset: str
    filters: tuple[exp.Expression, ...] = ()  # resolved where_sql (over the joined tables)
    time_filters: tuple[TimeFilter, ...] = ()

    def __post_init__(self) -> None:
        if not self.dataset:
            raise ValueError("a scan names its dataset")

    def describe(self) -> str:
        return f"Scan {self.dataset}"

    def details(self) -> tuple[str, ...]:
        return (
            *(f"filter {f.sql()}" for f in self.filters),
            *(t.describe() for t in self.time_filters),
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_scan(self)
