"""D-LOD metric IR: a metric hosting the derive `lod` family (datus-extensions §3 D-LOD).

The planner reads it to build the inner grouping (include), or the side branch attached to
the view rows (exclude, fixed); the metric's own expression is the nested aggregate the
declaration describes and is never executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LodKind = Literal["include", "exclude", "fixed"]


@dataclass(frozen=True)
class LodMetric:
    kind: LodKind
    base: str  # the base metric's name (a plain metric, never itself LOD)
    dims: tuple[str, ...]  # qualified fields of the base's dataset ("orders.user_id")
    outer: str | None  # include's outer aggregate: sum | avg | min | max | count
    text: str  # the declaration as authored

    @property
    def relative(self) -> bool:
        """include / exclude: the grain is relative to the query's group-by."""
        return self.kind != "fixed"
