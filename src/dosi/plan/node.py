"""The base of every plan node (plan/nodes/): an immutable operator that names its parents.

A plan is a DAG of these: scans and joins at the leaves, aggregates above them, then merge,
metric formulas, window stages, trim, the metric filter and order / limit at the root. Nodes
hold IR values and plain descriptions, never SQL trees under construction: the SQL visitor
(`dosi.sql.to_sql`) builds SQL from them, `explain` prints them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class PlanNode:
    """A plan operator. Subclasses set `kind` and check their invariants in __post_init__."""

    kind: ClassVar[str] = "node"

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return ()

    def describe(self) -> str:
        """One line for `explain`."""
        return self.kind

    def details(self) -> tuple[str, ...]:
        """Further lines under the node (filters, window metrics), each one line."""
        return ()

    def to_json(self) -> dict[str, Any]:
        """The node for tools: its kind, its one-line description, details and parents."""
        out: dict[str, Any] = {"kind": self.kind, "describe": self.describe()}
        if self.details():
            out["details"] = list(self.details())
        if self.parents:
            out["parents"] = [p.to_json() for p in self.parents]
        return out

    def accept(self, visitor: Any) -> Any:
        """Double dispatch: each node kind calls its own `visitor.visit_<kind>(self)`."""
        raise NotImplementedError(type(self).__name__)

    def walk(self) -> Iterator[PlanNode]:
        """This node, then its ancestors depth first (each shared parent once)."""
        seen: set[int] = set()
        stack: list[PlanNode] = [self]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            yield n
            stack.extend(reversed(n.parents))


def explain_text(root: PlanNode) -> str:
    """The plan as an indented tree, the output at the top and the scans at the leaves."""
    lines: list[str] = ["QueryPlan"]

    def emit(node: PlanNode, depth: int) -> None:
        pad = "  " * depth
        lines.append(f"{pad}{node.describe()}")
        for d in node.details():
            lines.append(f"{pad}  - {d}")
        for p in node.parents:
            emit(p, depth + 1)

    emit(root, 1)
    return "\n".join(lines)
