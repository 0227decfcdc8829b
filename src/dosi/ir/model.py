"""Compiled model IR: what the planner sees. Never raw YAML, never DATUS payloads.

Expressions are sqlglot trees whose columns are qualified by the dataset name (the planner uses
dataset names as table aliases), with field references already inlined.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from sqlglot import exp

from dosi.errors import Diagnostic
from dosi.ext.grains import DAY_GRAINS
from dosi.ir.calendar import DEFAULT_CALENDAR, CalendarIr
from dosi.ir.conversion import ConversionIr
from dosi.ir.lod_metric import LodMetric
from dosi.ir.semi_additive import SemiAdditiveIr

if TYPE_CHECKING:
    from dosi.ext import ConversionSpec, TimeFormat, WindowSpec
    from dosi.ext.params import MetricParams
    from dosi.ir.densify import TimeSpineIr
    from dosi.ir.derive import DeriveIr
    from dosi.ir.lod_field import LodFieldIr

# a grain name of the vocabulary (dosi.ext.grains): native, calendar or a calendar table's
Grain = str
#: The 1.x Granularity enum (CORE-Q-03); every grain a model takes is `ModelIr.calendar.grains()`
GRAINS: tuple[Grain, ...] = DAY_GRAINS
#: The order of the 1.x grains (finer grains rank by dosi.ext.grains.grain_rank)
GRAIN_RANK: dict[str, int] = {g: i for i, g in enumerate(GRAINS)}


MetricKind = Literal["aggregate", "ratio", "expression"]
JoinType = Literal["left", "inner"]


@dataclass(frozen=True)
class FieldIr:
    dataset: str
    name: str
    expr: exp.Expression
    datatype: str | None
    is_time: bool
    time_granularity: Grain | None
    is_dimension: bool | None  # the D-DIM declaration, None when absent
    description: str | None = None
    label: str | None = None
    source_sql: str = ""
    lod: LodFieldIr | None = None  # D-LOD fixed field (dosi.ir.lod_field)
    # D-FORMAT: the stored encoding (None: a native date/time, FMT-DEC-03)
    time_format: TimeFormat | None = None

    @property
    def qualified(self) -> str:
        return f"{self.dataset}.{self.name}"

    @property
    def encoded(self) -> bool:
        """D-FORMAT string / integer layout: bounds are folded, where_sql may not read it."""
        return self.time_format is not None and self.time_format.encoded


@dataclass(frozen=True)
class ValidityIr:
    """D-VALIDITY (dosi 1.15): each row is one version of its key, valid from the `start`
    field's time (inclusive) to the `end` field's (exclusive; NULL: still valid)."""

    start: str  # field names of the dataset
    end: str


@dataclass(frozen=True)
class DatasetIr:
    name: str
    source: exp.Expression  # a Table, or a Subquery for a `SELECT ...` source
    primary_key: tuple[str, ...]
    unique_keys: tuple[tuple[str, ...], ...]
    fields: Mapping[str, FieldIr]  # read-only (a MappingProxyType), in declaration order
    primary_time: str | None  # field name: D-TIME, else the single is_time field
    description: str | None = None
    validity: ValidityIr | None = None  # D-VALIDITY: a slowly changing dimension

    def __post_init__(self) -> None:
        _freeze(self, "fields")


@dataclass(frozen=True)
class RelationshipIr:
    name: str
    from_dataset: str
    to_dataset: str
    from_exprs: tuple[exp.Expression, ...]
    to_exprs: tuple[exp.Expression, ...]
    from_columns: tuple[str, ...]
    to_columns: tuple[str, ...]
    join_type: JoinType
    # D-CONFORM: "many_to_many" pairs two facts (never joined; see dosi.ir.conform)
    kind: Literal["many_to_one", "many_to_many"] = "many_to_one"


@dataclass(frozen=True)
class MeasureIr:
    """One aggregate, shared by every metric that spells the same aggregate."""

    name: str
    dataset: str
    agg: str  # sum, count, count_distinct, avg, min, max, ...
    expr: exp.Expression  # the aggregate call, columns qualified
    signature: str
    datasets: frozenset[str]  # every dataset the argument reads (joins needed)
    explicit_name: bool = False
    # D-SEMI: one snapshot per period along a time dimension (dosi.ir.semi_additive)
    semi_additive: SemiAdditiveIr | None = None
    # D-CONVERSION: the conversion metric's aggregate over the conversion events attributed
    # to base events (dosi.ir.conversion); `dataset` is then the base events' dataset
    conversion: ConversionIr | None = None

    @property
    def is_count(self) -> bool:
        return self.agg in ("count", "count_distinct", "count_star")

    @property
    def branch_key(self) -> str | None:
        """Measures with different keys never share a branch: they read different rows."""
        if self.semi_additive is not None:
            # by value (min / max), the measure's own value picks the snapshot
            own = f":{self.name}" if self.semi_additive.by_value else ""
            return f"semi_additive:{self.semi_additive.key}{own}"
        if self.conversion is not None:
            return f"conversion:{self.name}"
        return None


@dataclass(frozen=True)
class MetricIr:
    name: str
    kind: MetricKind
    formula: exp.Expression  # measures appear as exp.Column(name=<measure name>)
    measures: tuple[str, ...]
    datasets: frozenset[str]  # datasets owning the measures
    time_axis: str | None  # qualified field: D-TIME metric > unique dataset primary time
    fill_nulls_with: float | int | None
    window: WindowSpec | None
    description: str | None = None
    datatype: str | None = None
    source_sql: str = ""

    @property
    def is_pure_count(self) -> bool:
        """S-FAN-6: a pure COUNT metric reads 0 for groups only other branches produced."""
        return self.kind == "aggregate" and self._pure_count

    _pure_count: bool = False
    params: MetricParams | None = None  # D-PARAM declarations and slots (None: no params)
    lod: LodMetric | None = None  # D-LOD: the derive `lod` family (ir/lod_metric.py)
    # D-DERIVE (dosi.compiler.derive): the declaration read from the payload, the metadata
    # it compiles to, the `window.base` metric, and the resolved expression the gate reads
    derive_decl: Any = None
    derive: DeriveIr | None = None
    window_base: str | None = None
    expr_tree: exp.Expression | None = None
    semi_additive: SemiAdditiveIr | None = None  # D-SEMI: the metric's own declaration
    # D-CONVERSION: the declaration read from the payload, then what it compiled to
    conversion_decl: ConversionSpec | None = None
    conversion: ConversionIr | None = None
    # dosi 1.15 `empty_buckets: drop`: a branch of such metrics only keeps the rows some
    # measure's filter admits (dosi.plan.empty_buckets)
    drop_empty_buckets: bool = False


# D-CONFORM conformity classes (datus-extensions §3 D-CONFORM); the functions that read them
# live in dosi.ir.conform
@dataclass(frozen=True)
class ConformClass:
    """One conformed dimension: its spellings, one per dataset, in declaration order."""

    name: str  # the first-declared spelling, `dataset.column` (the class's label)
    members: tuple[FieldIr, ...]

    @property
    def is_time(self) -> bool:
        return any(m.is_time for m in self.members)

    @property
    def spellings(self) -> tuple[str, ...]:
        return tuple(m.qualified for m in self.members)

    def member_on(self, dataset: str) -> FieldIr | None:
        """This dimension as `dataset` spells it, or None when `dataset` is not paired."""
        return next((m for m in self.members if m.dataset == dataset), None)


@dataclass(frozen=True)
class ConformedIr:
    """Every conformed edge and the classes its column pairs form."""

    edges: tuple[RelationshipIr, ...] = ()
    classes: tuple[ConformClass, ...] = ()
    _index: Mapping[tuple[str, str], ConformClass] = field(
        init=False, repr=False, compare=False, default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        index = {(m.dataset, m.name): c for c in self.classes for m in c.members}
        object.__setattr__(self, "_index", MappingProxyType(index))

    def class_of(self, dataset: str, column: str) -> ConformClass | None:
        """The class `dataset.column` belongs to, if it is a paired column."""
        return self._index.get((dataset, column))

    def paired(self, dataset: str) -> bool:
        """`dataset` takes part in some conformed pairing."""
        return any(e.from_dataset == dataset or e.to_dataset == dataset for e in self.edges)

    def spelling(self, f: FieldIr, dataset: str) -> FieldIr | None:
        """`f` as `dataset` spells it: `f` itself on its own dataset, else its class's member
        on `dataset` (None when `f` is not paired with a column of `dataset`)."""
        if f.dataset == dataset:
            return f
        cls = self.class_of(f.dataset, f.name)
        return cls.member_on(dataset) if cls is not None else None

    def edge(self, name: str) -> RelationshipIr | None:
        return next((e for e in self.edges if e.name == name), None)


@dataclass(frozen=True)
class ModelIr:
    """The compiled model, complete and read-only once built (issue 10: the IR is frozen).

    Mappings are read-only views and sequences tuples; a variant (attribution's hidden
    metrics) is a `dataclasses.replace` copy, never an edit."""

    name: str
    datasets: Mapping[str, DatasetIr]
    relationships: tuple[RelationshipIr, ...]
    metrics: Mapping[str, MetricIr]
    measures: Mapping[str, MeasureIr]
    warnings: tuple[Diagnostic, ...] = ()
    description: str | None = None
    mode: str = "datus"
    source_version: str = "0.2.0.dev0"  # the Ossie version the document was written in
    # D-DIM: (dataset, field) -> (is_dimension, source rule)
    dimension_roles: Mapping[tuple[str, str], tuple[bool, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # basic mode: metrics only a DATUS payload made computable -> why they are unavailable
    unavailable_metrics: Mapping[str, Diagnostic] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # D-CONFORM: many_to_many edges and their classes (read via dosi.ir.conform.conformity);
    # `relationships` holds only the edges joins may walk
    conformed: ConformedIr | None = None
    # the DOSI settings (dosi.ext.settings): the default of the query key `densify` (None:
    # no filling) and the declared time-spine table (dosi.ir.densify.TimeSpineIr)
    densify: str | None = None
    time_spine: TimeSpineIr | None = None
    # the DATUS `calendar` (week start, fiscal / retail years, calendar table: ir/calendar.py)
    calendar: CalendarIr = DEFAULT_CALENDAR

    def __post_init__(self) -> None:
        for name in ("datasets", "metrics", "measures", "dimension_roles", "unavailable_metrics"):
            _freeze(self, name)
        for name in ("relationships", "warnings"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def field(self, qualified: str) -> FieldIr:
        ds, _, name = qualified.partition(".")
        return self.datasets[ds].fields[name]


def _freeze(obj: Any, name: str) -> None:
    """Store a mapping attribute of a frozen IR value as a read-only view (once)."""
    value = getattr(obj, name)
    if not isinstance(value, MappingProxyType):
        object.__setattr__(obj, name, MappingProxyType(dict(value)))
