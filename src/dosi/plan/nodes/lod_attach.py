"""LodAttach: the D-LOD metric stage of `exclude(base, dims)` / `fixed(base[, dims])`
(datus-extensions §3 D-LOD "relative views", "fixed on a metric"): the view rows (their own
plan) with one side plan per LOD metric attached, a NULL-safe LEFT JOIN on the dims both share,
a CROSS JOIN when they share none. Each view row meets one side row: no fan-out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from sqlglot import exp

from dosi.plan.node import PlanNode, PlanVisitor, T


@dataclass(frozen=True)
class LodSide:
    """One side branch: `node` computes `column` grouped by `on` (the dims it shares with the
    view); the attached value is named `name`."""

    name: str
    lod: Literal["exclude", "fixed"]
    node: PlanNode
    on: tuple[str, ...]
    column: str

    def describe(self) -> str:
        how = f"LEFT JOIN on [{', '.join(self.on)}] (NULL-safe)" if self.on else "CROSS JOIN"
        when = "before dimension filters" if self.lod == "fixed" else "filtered like the view"
        return f"{self.name} = {self.lod} side {self.column} {how}, {when}"


@dataclass(frozen=True)
class LodAttach(PlanNode):
    kind: ClassVar[str] = "lod_attach"
    view: PlanNode  # the view rows: dims and the plain metrics
    sides: tuple[LodSide, ...]
    dims: tuple[str, ...]
    # the metric columns out, in order: each a formula over view metric names and side
    # names (a bare name for itself; a compose over LOD members its arithmetic, LOD-REL-10)
    columns: tuple[tuple[str, exp.Expression], ...]

    def __post_init__(self) -> None:
        if not self.sides:
            raise ValueError("an attach stage attaches at least one side")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.view, *(s.node for s in self.sides))

    def describe(self) -> str:
        return f"LodAttach by=[{', '.join(self.dims)}]"

    def details(self) -> tuple[str, ...]:
        formulas = tuple(
            f"{n} = {f.sql()}"
            for n, f in self.columns
            if not (isinstance(f, exp.Column) and f.name == n)
        )
        return (*(s.describe() for s in self.sides), *formulas)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_lod_attach(self)
