"""Densify: rows joined to a time spine, so every bucket of the grouped time grain is a row
(plan/densify.py says where it goes). `cross`: every spine bucket crossed with the observed
combinations of the other dims (`keys_within`: observed in that time range only), NULL-safe;
otherwise the spine joined on the time buckets alone (an empty bucket is one row, its other
dims NULL). Rows whose time bucket is NULL are kept as they are. An empty bucket's column
reads its fill (D-FILL) or NULL; `present` names a column marking the rows that had data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import Spine, TimeBounds


@dataclass(frozen=True)
class Densify(PlanNode):
    kind: ClassVar[str] = "densify"
    parent: PlanNode
    spine: Spine
    cross: bool
    dims: tuple[str, ...]  # every group-by output, in order
    others: tuple[str, ...]  # the group-by outputs besides the spine's keys
    columns: tuple[str, ...]  # the value columns carried from the parent, in order
    fills: tuple[tuple[str, float | int], ...] = ()  # (column, value in an empty bucket)
    present: str | None = None
    keys_within: TimeBounds | None = None

    def __post_init__(self) -> None:
        keys = {k.output for k in self.spine.keys}
        if not keys:
            raise ValueError("a densify node fills at least one time key")
        if keys & set(self.others) or set(self.dims) != keys | set(self.others):
            raise ValueError("the dims are the spine's keys and the other dims")
        unknown = {c for c, _ in self.fills} - set(self.columns)
        if unknown:
            raise ValueError(f"fills for columns the node does not carry: {sorted(unknown)}")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        how = f"x [{', '.join(self.others)}]" if self.cross and self.others else ""
        if not self.cross:
            how = f"beside [{', '.join(self.others)}]"
        return (
            f"Densify {'cross ' if self.cross else 'time '}{self.spine.describe()} {how}".rstrip()
        )

    def details(self) -> tuple[str, ...]:
        out = [f"fill {c} = {v}" for c, v in self.fills]
        if self.keys_within is not None:
            b = self.keys_within
            out.append(f"combinations seen in [{b.start or '-inf'}, {b.end or '+inf'})")
        if self.present is not None:
            out.append(f"mark rows with data in {self.present}")
        return tuple(out)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_densify(self)
