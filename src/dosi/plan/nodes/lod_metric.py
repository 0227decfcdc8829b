"""D-LOD metric stages (datus-extensions §3 D-LOD "relative views", "fixed on a metric").

* `LodInclude`: `agg(include(base, dims))` -- the inner plan groups by the view dims plus the
  include dims; the outer stage folds the finer rows with the declared aggregate per view row.
* `LodAttach`: `exclude(base, dims)` / `fixed(base[, dims])` -- the view rows (their own
  plan) with one side plan per LOD metric attached: a NULL-safe LEFT JOIN on the dims both
  share, a CROSS JOIN when they share none. Each view row meets one side row: no fan-out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from sqlglot import exp

from dosi.plan.node import PlanNode
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

    def accept(self, visitor: Any) -> Any:
        return visitor.visit_lod_include(self)


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

    def accept(self, visitor: Any) -> Any:
        return visitor.visit_lod_attach(self)
