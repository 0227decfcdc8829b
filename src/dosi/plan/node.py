"""The base of every plan node (plan/nodes/): an immutable operator that names its parents.

A plan is a DAG of these: scans and joins at the leaves, aggregates above them, then merge,
metric formulas, window stages, trim, the metric filter and order / limit at the root. Nodes
hold IR values and plain descriptions, never SQL trees under construction: the SQL visitor
(`dosi.sql.to_sql`, a `PlanVisitor`) builds SQL from them, `explain` prints them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")


class PlanVisitor(ABC, Generic[T]):
    """A pass over the plan DAG answering a `T` per node: one abstract `visit_<kind>` per node
    kind (as MetricFlow's DataflowPlanNodeVisitor). A visitor that misses one cannot be
    instantiated; a node kind without its method here fails when its class is defined
    (`PlanNode.__init_subclass__`), and `dosi.plan.nodes` checks at import that every method
    here has its kind. Each method receives the node of its kind (the subclass annotates the
    concrete class; this module imports no kind, the kinds import it).

    Adding a node kind: plan/nodes/<kind>.py (the frozen dataclass, its `accept` calling
    `visit_<kind>`), a `visit_<kind>` here, the class in `dosi.plan.nodes`, and the method in
    every visitor (the SQL visitor `dosi.sql.to_sql.ToSql`).
    """

    @abstractmethod
    def visit_aggregate(self, node: PlanNode) -> T:
        """A `Aggregate` node (plan/nodes/aggregate.py)."""

    @abstractmethod
    def visit_compute_metrics(self, node: PlanNode) -> T:
        """A `ComputeMetrics` node (plan/nodes/compute_metrics.py)."""

    @abstractmethod
    def visit_conversion_join(self, node: PlanNode) -> T:
        """A `ConversionJoin` node (plan/nodes/conversion_join.py)."""

    @abstractmethod
    def visit_decode_time(self, node: PlanNode) -> T:
        """A `DecodeTime` node (plan/nodes/decode_time.py)."""

    @abstractmethod
    def visit_densify(self, node: PlanNode) -> T:
        """A `Densify` node (plan/nodes/densify.py)."""

    @abstractmethod
    def visit_derive_compute(self, node: PlanNode) -> T:
        """A `DeriveCompute` node (plan/nodes/derive_compute.py)."""

    @abstractmethod
    def visit_filter_result(self, node: PlanNode) -> T:
        """A `FilterResult` node (plan/nodes/filter_result.py)."""

    @abstractmethod
    def visit_join(self, node: PlanNode) -> T:
        """A `Join` node (plan/nodes/join.py)."""

    @abstractmethod
    def visit_lod_attach(self, node: PlanNode) -> T:
        """A `LodAttach` node (plan/nodes/lod_attach.py)."""

    @abstractmethod
    def visit_lod_broadcast(self, node: PlanNode) -> T:
        """A `LodBroadcast` node (plan/nodes/lod_broadcast.py)."""

    @abstractmethod
    def visit_lod_include(self, node: PlanNode) -> T:
        """A `LodInclude` node (plan/nodes/lod_include.py)."""

    @abstractmethod
    def visit_lod_rollup(self, node: PlanNode) -> T:
        """A `LodRollup` node (plan/nodes/lod_rollup.py)."""

    @abstractmethod
    def visit_merge(self, node: PlanNode) -> T:
        """A `Merge` node (plan/nodes/merge.py)."""

    @abstractmethod
    def visit_order_limit(self, node: PlanNode) -> T:
        """A `OrderLimit` node (plan/nodes/order_limit.py)."""

    @abstractmethod
    def visit_period_sample(self, node: PlanNode) -> T:
        """A `PeriodSample` node (plan/nodes/period_sample.py)."""

    @abstractmethod
    def visit_pre_aggregate(self, node: PlanNode) -> T:
        """A `PreAggregate` node (plan/nodes/pre_aggregate.py)."""

    @abstractmethod
    def visit_scan(self, node: PlanNode) -> T:
        """A `Scan` node (plan/nodes/scan.py)."""

    @abstractmethod
    def visit_semi_additive_join(self, node: PlanNode) -> T:
        """A `SemiAdditiveJoin` node (plan/nodes/semi_additive_join.py)."""

    @abstractmethod
    def visit_stream_bucket(self, node: PlanNode) -> T:
        """A `StreamBucket` node (plan/nodes/stream_bucket.py)."""

    @abstractmethod
    def visit_trim(self, node: PlanNode) -> T:
        """A `Trim` node (plan/nodes/trim.py)."""

    @abstractmethod
    def visit_window(self, node: PlanNode) -> T:
        """A `Window` node (plan/nodes/window.py)."""


@dataclass(frozen=True)
class PlanNode(ABC):
    """A plan operator. Subclasses set `kind`, check their invariants in __post_init__ and
    accept a `PlanVisitor` by calling its `visit_<kind>`."""

    kind: ClassVar[str] = "node"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is not None and f"visit_{kind}" not in PlanVisitor.__abstractmethods__:
            raise TypeError(
                f"plan node kind {kind!r} ({cls.__name__}) has no abstract "
                f"visit_{kind} in dosi.plan.node.PlanVisitor"
            )

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

    @abstractmethod
    def accept(self, visitor: PlanVisitor[T]) -> T:
        """Double dispatch: each node kind calls its own `visitor.visit_<kind>(self)`."""

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
