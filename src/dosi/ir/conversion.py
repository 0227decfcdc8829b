"""D-CONVERSION in the IR: a conversion metric's link between its base and conversion events
(MetricFlow's conversion metrics are the reference point).

A conversion event counts when the same entity (and every constant property) had a base event
at or before it, within the window; it is attributed to the latest such base event, whose
dimensions and time it is grouped by. The converted measure (the conversion metric's aggregate
over the attributed events) is a measure of its own whose `conversion` is this record; fields
are held by qualified name (`dataset.field`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.ext.conversion import Calculation, ConversionWindow


@dataclass(frozen=True)
class ConversionIr:
    base_metric: str
    conversion_metric: str
    base_measure: str  # the base metric's measure (its branch counts the base events)
    conversion_measure: str  # the conversion metric's own measure
    base_dataset: str
    conversion_dataset: str
    entity: tuple[str, str]  # (base field, conversion field)
    base_time: str  # the base metric's time axis
    conversion_time: str  # the conversion metric's time axis
    window: ConversionWindow | None  # None: any time after the base event
    constant_properties: tuple[tuple[str, str], ...] = ()
    calculation: Calculation = "conversion_rate"

    @property
    def key(self) -> str:
        """What makes two declarations the same converted measure (a signature)."""
        window = self.window.describe() if self.window is not None else "unbounded"
        props = ",".join(f"{a}={b}" for a, b in self.constant_properties)
        return (
            f"{self.base_measure}->{self.conversion_measure}|{self.entity[0]}={self.entity[1]}"
            f"|{self.base_time}->{self.conversion_time}|{window}|{props}"
        )

    def describe(self) -> str:
        window = f"within {self.window.describe()}" if self.window is not None else "any time"
        text = (
            f"{self.conversion_metric} after {self.base_metric} by "
            f"{self.entity[0]} = {self.entity[1]}, {window}"
        )
        if self.constant_properties:
            text += " holding " + ", ".join(f"{a} = {b}" for a, b in self.constant_properties)
        return text

    def catalog(self) -> dict[str, Any]:
        return {
            "base_metric": self.base_metric,
            "conversion_metric": self.conversion_metric,
            "entity": {"base": self.entity[0], "conversion": self.entity[1]},
            "window": (
                {"count": self.window.count, "granularity": self.window.granularity}
                if self.window is not None
                else None
            ),
            "calculation": self.calculation,
            "constant_properties": [
                {"base": a, "conversion": b} for a, b in self.constant_properties
            ],
            "base_time": self.base_time,
            "conversion_time": self.conversion_time,
        }
