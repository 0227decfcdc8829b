"""A declared rollup (issue 28 item 1): one fact dataset pre-aggregated by some of its own
fields and a time bucket, holding additive measures. Frozen, checked against the model by
`dosi.compiler.rollup`; matched to plan branches by `dosi.plan.rollup_match`."""

from __future__ import annotations

from dataclasses import dataclass

#: the aggregates a rollup stores: each one's partial values roll up to the whole
ADDITIVE_AGGS = frozenset({"sum", "count", "count_star", "min", "max"})

#: rollup grain -> the query grains derivable from it (every bucket of the query grain is a
#: union of whole rollup buckets: a week is not a union of months)
DERIVABLE_GRAINS: dict[str, frozenset[str]] = {
    "hour": frozenset({"hour", "day", "week", "month", "quarter", "year"}),
    "day": frozenset({"day", "week", "month", "quarter", "year"}),
    "week": frozenset({"week"}),
    "month": frozenset({"month", "quarter", "year"}),
    "quarter": frozenset({"quarter", "year"}),
    "year": frozenset({"year"}),
}


@dataclass(frozen=True)
class RollupIr:
    name: str
    dataset: str
    dimensions: tuple[str, ...]  # field names of `dataset`, stored as they are
    measures: tuple[str, ...]  # measure names (ModelIr.measures), all of `dataset`, additive
    time: str | None = None  # a time field of `dataset`, stored bucketed to `grain`
    grain: str | None = None
    signature: str = ""  # what the stored table was built from: a change means a rebuild
    # seconds a stale rollup (its data changed since the build) may still serve; None: never
    staleness_budget: float | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.dimensions, *((self.time,) if self.time else ()), *self.measures)

    def describe(self) -> str:
        by = ", ".join(self.dimensions) or "-"
        time = f" {self.time} per {self.grain}" if self.time else ""
        return (
            f"{self.name} over {self.dataset}{time} by [{by}] measures=[{', '.join(self.measures)}]"
        )
