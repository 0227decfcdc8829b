"""LodInclude: the D-LOD metric stage of `agg(include(base, dims))` (datus-extensions §3
D-LOD "relative views"): the inner plan groups by the view dims plus the include dims; the
outer stage folds the finer rows with the declared aggregate per view row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.nodes.merge import MergeStrategy


@dataclass(frozen=True)
class LodIncludeMetric:
    name: str  # the LOD metric's output column
    outer: str  # sum | avg | min | max | count
    column: str  # the base metric's column in the inner rows


@dataclass(frozen=True)
class LodInclude(PlanNode):
    kind: ClassVar[str] = "lod_include"
    inner: PlanNode  # the base metrics at view dims + include dims
    dims: tuple[str, ...]  # the view dims: the outer GROUP BY
    metrics: tuple[LodIncludeMetric, ...]
    # other datasets' metrics, planned at the view grain and merged on the view dims as any
    # branch is (the include replaces only its own dataset's branch, as the reference does)
    beside: PlanNode | None = None
    beside_metrics: tuple[str, ...] = ()
    strategy: MergeStrategy = "cross"
    columns: tuple[str, ...] = ()  # metric columns out, in order, when merged
    # beside metrics' value for a group only the include stage has: D-FILL, else 0 for a
    # pure count (S-FAN-6), as any merged branch reads it
    beside_fill: tuple[tuple[str, float | int], ...] = ()

    def __post_init__(self) -> None:
        if not self.metrics:
            raise ValueError("an include stage computes at least one metric")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.inner,) if self.beside is None else (self.inner, self.beside)

    def describe(self) -> str:
        return f"LodInclude by=[{', '.join(self.dims)}]"

    def details(self) -> tuple[str, ...]:
        return tuple(
            f"{m.name} = {m.outer.upper()}({m.column}) over the finer rows" for m in self.metrics
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_lod_include(self)
