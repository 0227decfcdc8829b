"""D-SEMI in the IR: a measure that adds up across every dimension but one time dimension,
along which one snapshot represents a period (datus-extensions roadmap `semi_additive`).

It is part of the measure's identity: `SUM(balance)` declared semi-additive and a plain
`SUM(balance)` are two measures, planned in two branches, so neither ever reads the other's
rows. Fields are held by qualified name (`dataset.field`); the planner looks them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.ext.semi_additive import Snapshot


@dataclass(frozen=True)
class SemiAdditiveIr:
    dimension: str  # the non-additive time field, on the measure's own dataset
    snapshot: Snapshot  # last / first: by time; min / max: by value
    window_groupings: tuple[str, ...] = ()  # fields of the measure's dataset

    @property
    def key(self) -> str:
        """What makes two declarations the same (a measure signature, a branch key)."""
        return f"{self.dimension}:{self.snapshot}:{','.join(self.window_groupings)}"

    @property
    def by_value(self) -> bool:
        return self.snapshot in ("min", "max")

    def describe(self) -> str:
        what = {
            "last": "the last snapshot",
            "first": "the first snapshot",
            "min": "the lowest-valued snapshot",
            "max": "the highest-valued snapshot",
        }[self.snapshot]
        text = f"{what} of {self.dimension}"
        if self.window_groupings:
            text += f" per {', '.join(self.window_groupings)}"
        return text

    def catalog(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "snapshot": self.snapshot,
            "window_groupings": list(self.window_groupings),
        }
