"""A declared rollup (issue 28 item 1): one fact dataset pre-aggregated by some of its own
fields and a time bucket, holding additive measures and, for COUNT DISTINCT measures, the
distinct key itself (stored as one more group column, so counting distinct keys at any
coarser grain stays exact). Frozen, checked against the model by
`dosi.compiler.rollup`; matched to plan branches by `dosi.plan.rollup_match`."""

from __future__ import annotations

from dataclasses import dataclass

#: the aggregates a rollup stores: each one's partial values roll up to the whole
ADDITIVE_AGGS = frozenset({"sum", "count", "count_star", "min", "max"})
#: aggregates served from a stored key column: the set of keys per group is kept whole, so
#: the distinct count over any union of groups is the fact table's (APPROX_COUNT_DISTINCT is
#: a declared approximation in the model; its sketch of the same key set is the same)
KEY_AGGS = frozenset({"count_distinct", "approx_count_distinct"})

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
class RefreshRule:
    """When a rollup is rebuilt and how its data version is read (docs/rollups-and-cache.md,
    "Refresh rules"): `key` a SELECT whose answer is the version (a server's data is
    otherwise invisible to dosi), read at most every `check_every` seconds; `every` seconds
    between scheduled refreshes by `dosi serve`; `partitions` the last time buckets a
    scheduled refresh recomputes (None: a full rebuild)."""

    key: str | None = None
    check_every: float = 0.0
    every: float | None = None
    partitions: int | None = None


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
    # COUNT DISTINCT measures: (measure, stored key column); the measure itself is not stored
    keys: tuple[tuple[str, str], ...] = ()
    refresh: RefreshRule = RefreshRule()
    # dimensions of datasets one many-to-one relationship away: (relationship, dataset,
    # field), stored as `<dataset>__<field>`; the rollup then also stores a row number under
    # each relationship key column's name, so the served plan's join of the rollup with
    # itself pairs each row with itself (docs/rollups-and-cache.md, "Joined dimensions")
    joined: tuple[tuple[str, str, str], ...] = ()
    row_columns: tuple[str, ...] = ()

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(col for _, col in self.keys)

    @property
    def stored_measures(self) -> tuple[str, ...]:
        """The measures stored as partial aggregates (the keyed ones are not)."""
        keyed = {m for m, _ in self.keys}
        return tuple(m for m in self.measures if m not in keyed)

    @property
    def joined_columns(self) -> tuple[str, ...]:
        return tuple(f"{ds}__{f}" for _, ds, f in self.joined)

    @property
    def columns(self) -> tuple[str, ...]:
        time = (self.time,) if self.time else ()
        return (
            *self.dimensions,
            *self.joined_columns,
            *self.key_columns,
            *time,
            *self.stored_measures,
            *self.row_columns,
        )

    def describe(self) -> str:
        by = ", ".join((*self.dimensions, *(f"{d}.{f}" for _, d, f in self.joined))) or "-"
        time = f" {self.time} per {self.grain}" if self.time else ""
        return (
            f"{self.name} over {self.dataset}{time} by [{by}] measures=[{', '.join(self.measures)}]"
        )
