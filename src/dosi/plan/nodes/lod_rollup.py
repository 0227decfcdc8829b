"""LodRollup: a dataset grouped by one key family, its fixed values computed over the context
layer's rows (datus-extensions §3 D-LOD; CHECKLIST LOD-PLAN-01/02). Under an Aggregate it is
the two-stage plan (the view reads only the rollup, dimension filters on its output); under a
LodBroadcast it is one of the derived tables joined to the detail rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlglot import exp

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import LodRollupSpec, LodShape


@dataclass(frozen=True)
class LodRollup(PlanNode):
    kind: ClassVar[str] = "lod_rollup"
    parent: PlanNode  # the rollup's input: a Scan of its dataset (context filters) and joins
    spec: LodRollupSpec
    shape: LodShape | None = None  # set when the view reads only this rollup (two-stage)
    output_filters: tuple[exp.Expression, ...] = ()  # dimension filters on its output

    def __post_init__(self) -> None:
        if not self.spec.values:
            raise ValueError(f"rollup {self.spec.alias} computes no fixed value")
        if self.shape is not None and self.shape.mode != "rollup":
            raise ValueError("a rollup read alone is the two-stage shape")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return self.spec.describe()

    def details(self) -> tuple[str, ...]:
        return (
            *self.spec.context(),
            *(f"dimension filter on the rollup output: {f.sql()}" for f in self.output_filters),
        )

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_lod_rollup(self)
