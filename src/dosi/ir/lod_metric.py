"""D-LOD metric IR: a metric hosting the derive `lod` family (datus-extensions §3 D-LOD).

The planner reads it to build the inner grouping (include), or the side branch attached to
the view rows (exclude, fixed); the metric's own expression is the nested aggregate the
declaration describes and is never executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

LodKind = Literal["include", "exclude", "fixed", "compose"]


@dataclass(frozen=True)
class LodMetric:
    kind: LodKind
    base: str  # the base metric's name (a plain metric, never itself LOD)
    dims: tuple[str, ...]  # qualified fields of the base's dataset ("orders.user_id")
    outer: str | None  # include's outer aggregate: sum | avg | min | max | count
    text: str  # the declaration as authored
    # compose over LOD metrics (LOD-REL-10): arithmetic over member metric names, members
    # in order of first appearance; a compose member is itself LOD when any leaf is
    formula: exp.Expression | None = None
    members: tuple[str, ...] = ()

    @property
    def relative(self) -> bool:
        """include / exclude: the grain is relative to the query's group-by."""
        return self.kind in ("include", "exclude")
