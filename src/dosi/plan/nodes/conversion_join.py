"""ConversionJoin: conversion events joined to the base events of the same entity before them
within the window, each kept once, attributed to its latest base event (D-CONVERSION;
MetricFlow's JoinConversionEventsNode). The parent is the base events (the branch's scan, its
filters and joins); `conversions` the conversion dataset's scan, unfiltered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dosi.plan.node import PlanNode, PlanVisitor, T
from dosi.plan.nodes.scan import Scan
from dosi.plan.records import ConversionPlan


@dataclass(frozen=True)
class ConversionJoin(PlanNode):
    kind: ClassVar[str] = "conversion_join"
    parent: PlanNode  # base events: the branch's scan and joins
    conversions: Scan  # the conversion events
    plan: ConversionPlan

    def __post_init__(self) -> None:
        if self.conversions.dataset != self.plan.conversion_dataset:
            raise ValueError("the conversion scan reads the conversion events' dataset")

    @property
    def parents(self) -> tuple[PlanNode, ...]:
        return (self.parent, self.conversions)

    def describe(self) -> str:
        return f"ConversionJoin {self.plan.describe()}"

    def details(self) -> tuple[str, ...]:
        p = self.plan
        out = [
            f"entity {p.entity[0].sql()} = {p.entity[1].sql()}",
            f"base time {p.base_time.expr.sql()} <= conversion time {p.conversion_time.expr.sql()}"
            + (f" < base time + {p.window.describe()}" if p.window is not None else ""),
            "each conversion event kept once, attributed to its latest base event",
        ]
        out.extend(f"constant property {b.sql()} = {c.sql()}" for b, c in p.properties)
        if p.base_event is not None:
            out.append(f"base events: {p.base_event.sql()}")
        if p.conversion_event is not None:
            out.append(f"conversion events: {p.conversion_event.sql()}")
        return tuple(out)

    def accept(self, visitor: PlanVisitor[T]) -> T:
        return visitor.visit_conversion_join(self)
