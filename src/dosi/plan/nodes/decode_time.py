"""DecodeTime: D-FORMAT stored time values parsed once per group (datus-extensions §3 D-FORMAT).

It sits on an Aggregate whose group-by includes encoded fields: the aggregate groups by the raw
stored value (or by the truncated decoded value for a coarser grain), and the value is parsed
into a DATE / TIMESTAMP in the SELECT (FMT-GRP-05) by the dialect's parse fact
(`dosi.sql.dialects.time_format`). The SQL visitor renders it inside the aggregate's SELECT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.records import BranchDim


@dataclass(frozen=True)
class DecodeTime(PlanNode):
    kind: ClassVar[str] = "decode_time"
    parent: PlanNode  # the Aggregate grouping by the stored values
    dims: tuple[BranchDim, ...]  # the encoded group-by dims

    def __post_init__(self) -> None:
        if not self.dims or any(d.time_format is None for d in self.dims):
            raise ValueError("DecodeTime decodes encoded dims only")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        parts = []
        for d in self.dims:
            assert d.time_format is not None
            grain = f" truncated to {d.grain}" if d.grain else ""
            parts.append(f"{d.output} <- {d.expr.sql()} ({d.time_format.format}){grain}")
        return f"DecodeTime per group [{'; '.join(parts)}]"

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_decode_time(self)
