"""Plan nodes (issue 10): frozen, checked on construction, one visit_<kind> each."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dosi.plan.node import PlanNode
from dosi.plan.nodes import Aggregate, Merge, OrderLimit, PreAggregate, Scan, Trim
from dosi.plan.records import TimeBounds


def _agg(bid: str = "m0", measures: tuple[str, ...] = ("x",)) -> Aggregate:
    return Aggregate(Scan("orders"), bid, "orders", None, (), measures)


def test_nodes_are_frozen() -> None:
    node = Scan("orders")
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.dataset = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "build",
    [
        lambda: Scan(""),
        lambda: _agg(measures=()),
        lambda: Merge((_agg(),), ("k",), "full_outer"),
        lambda: Merge((_agg("m0"), _agg("m1")), (), "full_outer"),
        lambda: Merge((_agg("m0"), _agg("m1")), ("k",), "cross"),
        lambda: PreAggregate(Scan("orders"), ("k",), ()),
        lambda: Trim(_agg(), "k", TimeBounds(None, None)),
        lambda: OrderLimit(_agg(), ("x",), (), -1),
    ],
)
def test_invariants_are_checked_on_construction(build: Any) -> None:
    with pytest.raises(ValueError):
        build()


def test_accept_calls_the_visit_method_of_its_kind() -> None:
    calls: list[str] = []

    class Recorder:
        def __getattr__(self, name: str) -> Any:
            return lambda node: calls.append(f"{name}:{type(node).__name__}")

    root = OrderLimit(Merge((_agg("m0"), _agg("m1")), ("k",), "union_keys"), ("k",), (), None)
    for node in root.walk():
        node.accept(Recorder())
    assert calls == [
        "visit_order_limit:OrderLimit",
        "visit_merge:Merge",
        "visit_aggregate:Aggregate",
        "visit_scan:Scan",
        "visit_aggregate:Aggregate",
        "visit_scan:Scan",
    ]
    assert all(isinstance(n, PlanNode) for n in root.walk())
    assert "UNION of keys" in root.parent.describe()
