"""StreamBucket: each row assigned to its streaming windows (window-udf.md: tumble, hop,
cumulate, session), so the aggregate above groups per window_start / window_end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.query.stream_window import StreamWindow, format_window


@dataclass(frozen=True)
class StreamBucket(PlanNode):
    kind: ClassVar[str] = "stream_bucket"
    parent: PlanNode
    output: str  # the group-by item the window replaces
    window: StreamWindow

    def __post_init__(self) -> None:
        if self.window.type not in ("tumble", "hop", "cumulate", "session"):
            raise ValueError(f"streaming window {self.window.type!r}")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent,)

    def describe(self) -> str:
        return f"StreamBucket {format_window(self.window)} on {self.output}"

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_stream_bucket(self)
