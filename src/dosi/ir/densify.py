"""Densification in the compiled model: the model's declared time-spine table (from the
model's DOSI settings, dosi.ext.settings); the default of the query key `densify` is
`ModelIr.densify`."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class TimeSpineIr:
    """The model's time-spine table: one row per `grain` bucket in its date column (MetricFlow's
    time spine). The spine of a densified query reads its rows instead of generating a series."""

    dataset: str
    field: str  # the date field's name in `dataset`
    expr: exp.Expression  # the field's expression over the dataset's source
    grain: str  # the field's D-GRAIN, else day
    # "table": a spine without a time_range spans the table's rows (MetricFlow); "data": the
    # data's first to last bucket
    bounds: str = "data"

    @property
    def qualified(self) -> str:
        return f"{self.dataset}.{self.field}"

    def describe(self) -> str:
        return f"time spine {self.qualified} ({self.grain})"
