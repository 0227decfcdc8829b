"""D-DERIVE metadata of a compiled metric (datus-extensions D-DERIVE "metadata"): what the
catalog exposes and what query resolution checks (the conformed dimension set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlglot import exp

Tier = Literal["flatten", "stage"]


@dataclass(frozen=True)
class DeriveMember:
    metric: str
    coefficient: float | None = None  # set on a linear combination only


@dataclass(frozen=True)
class LeafMeasure:
    measure: str
    dataset: str
    coefficient: float


@dataclass(frozen=True)
class DeriveIr:
    family: str  # filter | compose | window (| lod)
    tier: Tier
    base: str | None = None
    expr: str | None = None
    predicate: str | None = None
    subset_of: str | None = None
    base_chain: tuple[str, ...] = ()  # window.base: the named base, then its own bases
    members: tuple[DeriveMember, ...] = ()
    leaf_measures: tuple[LeafMeasure, ...] = ()
    linear: bool = False
    attribution: str | None = None  # exact | approximate
    conformed_dimensions: tuple[str, ...] | None = None
    # leaf metric -> the dimensions it reaches (unconformed_dimension names the leaf)
    leaf_dimensions: tuple[tuple[str, frozenset[str]], ...] = ()
    required_dimensions: tuple[str, ...] = ()
    # stage tier compose (DRV-CMP-10): the arithmetic over the direct members' output columns,
    # fill and safe division applied; the planner lowers it above the window stage
    stage_formula: exp.Expression | None = None
    # window.base: the stage this window lands on (1 = over aggregates; 2-3 = over a compose
    # of window outputs, WIN-19-06); a stage compose: the stage it follows
    level: int = 1
    written: tuple[str, ...] = ()  # the metrics the declaration names, as written (lineage)

    @property
    def is_stage_compose(self) -> bool:
        return self.family == "compose" and self.tier == "stage"

    @property
    def above_stage(self) -> bool:
        """Computed above the first window stage (never a branch metric)."""
        return self.is_stage_compose or (self.family == "window" and self.level >= 2)

    def catalog(self) -> dict[str, Any]:
        """The catalog fields (DRV-META-01)."""
        members: list[dict[str, Any]] = []
        for m in self.members:
            d: dict[str, Any] = {"metric": m.metric}
            if m.coefficient is not None:
                d["coefficient"] = m.coefficient
            members.append(d)
        return {
            "derive_family": self.family,
            "derive_base": self.base,
            "derive_expr": self.expr,
            "subset_of": self.subset_of,
            "derive_members": members,
            "leaf_measures": [
                {"measure": x.measure, "dataset": x.dataset, "coefficient": x.coefficient}
                for x in self.leaf_measures
            ],
            "attribution": self.attribution,
            "conformed_dimensions": (
                list(self.conformed_dimensions) if self.conformed_dimensions is not None else None
            ),
            "required_dimensions": list(self.required_dimensions),
        }


EMPTY_CATALOG: dict[str, Any] = {
    "derive_family": None,
    "derive_base": None,
    "derive_expr": None,
    "subset_of": None,
    "derive_members": [],
    "leaf_measures": [],
    "attribution": None,
    "conformed_dimensions": None,
    "required_dimensions": [],
}
