"""Window: the D-WINDOW stage over one aggregate's series (window-metrics-extension.md,
"Compilation semantics"): offsets as shifted-key self-joins, frames / ranks / values as
window functions, the base metrics carried beside them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import MetricColumn, WindowMetric


@dataclass(frozen=True)
class Window(PlanNode):
    kind: ClassVar[str] = "window"
    parent: PlanNode  # the Aggregate (or the merged metrics) whose series it reads
    time_key: str | None  # output column of the time bucket
    grain: str | None
    dims: tuple[str, ...]
    carried: tuple[MetricColumn, ...]  # plain metrics computed beside the window metrics
    metrics: tuple[WindowMetric, ...]
    passed: tuple[str, ...] = ()  # columns computed below (metrics of a merge) kept as they are

    def __post_init__(self) -> None:
        if not self.metrics:
            raise ValueError("a window stage computes at least one window metric")
        if self.time_key is not None and self.time_key not in self.dims:
            raise ValueError(f"window time key {self.time_key} is not a group-by output")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        t = f" time={self.time_key}" if self.time_key else ""
        return f"Window{t} [{', '.join(m.name for m in self.metrics)}]"

    def details(self) -> tuple[str, ...]:
        return (
            *(f"carry {m.describe()}" for m in self.carried),
            *(f"carry {m}" for m in self.passed),
            *(m.describe() for m in self.metrics),
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_window(self)
