"""dbt's element names and the Ossie names they become.

dbt names a dimension by the entities that lead to it: `booking__is_instant` (the dimension
`is_instant` of the semantic model whose entity is `booking`), `listing__user__home_state`
(two hops), `metric_time__month`, `booking__ds__week`. The import keeps every semantic model
as a dataset of the same name and every dimension, entity and measure as a field of that
dataset, so a dbt name resolves to one `dataset.field`. This module owns that resolution, for
the converter (filters, saved queries) and for anyone translating dbt queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest
from dbt_semantic_interfaces.implementations.semantic_model import PydanticSemanticModel
from dbt_semantic_interfaces.type_enums.dimension_type import DimensionType
from dbt_semantic_interfaces.type_enums.entity_type import EntityType

from dosi.errors import OsiError, closest
from dosi.importers.dbt.time_grains import spine_calendar

DUNDER = "__"
METRIC_TIME = "metric_time"
#: entity types that identify a row of their semantic model (a join lands on them)
IDENTIFYING = frozenset({EntityType.PRIMARY, EntityType.UNIQUE, EntityType.NATURAL})
GRAINS = ("day", "week", "month", "quarter", "year")
"""The time grains dosi queries by (D-GRAIN), coarsest last."""
ALL_GRAINS = (
    "nanosecond",
    "microsecond",
    "millisecond",
    "second",
    "minute",
    "hour",
    *GRAINS,
)
DATE_PARTS = ("year", "quarter", "month", "week", "day", "dow", "doy")


class DbtNameError(OsiError):
    """A dbt element name that names nothing in the project (code `unknown_dbt_name`)."""

    kind = "import_error"


@dataclass(frozen=True)
class Element:
    """One dimension, entity or measure, and the field it became."""

    model: str  # semantic model = dataset name
    name: str  # dbt element name
    field: str  # Ossie field name
    kind: str  # "dimension" | "time_dimension" | "entity" | "measure"
    expr: str  # the row-level SQL (the element's expr, or its name)
    grain: str | None = None  # a time dimension's granularity
    entity_type: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.model}.{self.field}"


def item_spelling(item: str | Mapping[str, Any]) -> str:
    """A translated group-by item's spelling: the string, or the object form's (an item that
    names its join path, `{"field", "grain", "via"}`) `field[:grain]`."""
    if isinstance(item, str):
        return item
    grain = item.get("grain")
    return f"{item['field']}:{grain}" if grain else str(item["field"])


@dataclass(frozen=True)
class Resolved:
    """A dbt group-by or filter item resolved to a field (or to `metric_time`)."""

    element: Element | None  # None for metric_time
    grain: str | None = None
    date_part: str | None = None
    entity_path: tuple[str, ...] = ()

    @property
    def is_metric_time(self) -> bool:
        return self.element is None


@dataclass
class ModelInfo:
    """What the converter needs of one semantic model."""

    sm: PydanticSemanticModel
    elements: dict[str, Element] = field(default_factory=dict)  # by dbt element name
    identifying: tuple[str, ...] = ()  # entity names a join may land on
    primary_entity: str | None = None

    @property
    def name(self) -> str:
        return self.sm.name


class DbtNames:
    """Resolution of dbt element names against one manifest."""

    def __init__(self, manifest: PydanticSemanticManifest) -> None:
        self.manifest = manifest
        self.models: dict[str, ModelInfo] = {}
        for sm in manifest.semantic_models:
            self.models[sm.name] = _model_info(sm)
        pc = manifest.project_configuration
        self.custom_grains = frozenset(
            cg.name for ts in (pc.time_spines or ()) for cg in (ts.custom_granularities or ())
        )
        #: the day time spine with custom granularities, imported as the calendar table
        self.calendar = spine_calendar(manifest, set(self.models))

    # -- lookups -----------------------------------------------------------------------------
    def element(self, model: str, name: str) -> Element:
        return self.models[model].elements[name]

    def measure(self, name: str) -> Element:
        for info in self.models.values():
            el = info.elements.get(name)
            if el is not None and el.kind == "measure":
                return el
        raise DbtNameError("unknown_dbt_name", f"no semantic model has the measure `{name}`")

    def entity_models(self, entity: str) -> list[ModelInfo]:
        """Semantic models a join on `entity` lands on (it identifies their rows)."""
        return [m for m in self.models.values() if entity in m.identifying]

    def agg_time(self, el: Element) -> Element | None:
        """The agg time dimension of a measure (its own, else its model's default)."""
        info = self.models[el.model]
        name = None
        for m in info.sm.measures:
            if m.name == el.name:
                name = m.agg_time_dimension
        if name is None and info.sm.defaults is not None:
            name = info.sm.defaults.agg_time_dimension
        if name is None:
            times = [e for e in info.elements.values() if e.kind == "time_dimension"]
            return times[0] if len(times) == 1 else None
        return info.elements.get(name)

    # -- dbt names ---------------------------------------------------------------------------
    def resolve(
        self,
        name: str,
        entity_path: Sequence[str] = (),
        *,
        grain: str | None = None,
        date_part: str | None = None,
        kind: str | None = None,
        near: Iterable[str] = (),
    ) -> Resolved:
        """`name` in dbt spelling (`listing__country_latest`, `metric_time__month`,
        `booking__ds__week`, `user`), with an optional explicit entity path. `near` lists the
        datasets the query reads (a bare entity resolves to their own column first)."""
        parts = [p for p in name.split(DUNDER) if p]
        if not parts:
            raise DbtNameError("unknown_dbt_name", f"`{name}` is not a dbt element name")
        if (
            len(parts) > 1
            and grain is None
            and (parts[-1] in ALL_GRAINS or parts[-1] in self.custom_grains)
        ):
            grain = parts.pop()
        elif len(parts) > 1 and parts[-1].startswith("extract_") and date_part is None:
            date_part = parts.pop()[len("extract_") :]
        path = (*entity_path, *parts[:-1])
        leaf = parts[-1]
        if leaf == METRIC_TIME and not path:
            return Resolved(None, grain, date_part)
        candidates = self._candidates(leaf, path, kind)
        if not candidates:
            known = sorted({e for m in self.models.values() for e in m.elements})
            raise DbtNameError(
                "unknown_dbt_name",
                f"`{name}` names no dimension or entity of the project",
                candidates=closest(leaf, known),
            )
        nearby = list(near)

        def key(c: tuple[Element, int]) -> tuple[int, int, str]:
            own = 0 if c[0].model in nearby else 1
            # a bare entity reads the queried dataset's own key column first
            return (own, c[1], c[0].model) if not path else (c[1], own, c[0].model)

        best = min(candidates, key=key)
        return Resolved(best[0], grain, date_part, tuple(path))

    def _candidates(
        self, leaf: str, path: Sequence[str], kind: str | None
    ) -> list[tuple[Element, int]]:
        """Elements named `leaf`, each with a rank: 0 when the path's last entity identifies
        its model (a join lands there), 1 when that entity is only a foreign key of it."""
        out = []
        for info in self.models.values():
            el = info.elements.get(leaf)
            if el is None or el.kind == "measure":
                continue
            if kind == "entity" and el.kind != "entity":
                continue
            if kind in ("dimension", "time_dimension") and el.kind == "entity":
                continue
            if not path:
                rank = 0 if el.kind != "entity" or el.entity_type != "foreign" else 1
            elif path[-1] in info.identifying:
                rank = 0
            elif path[-1] in info.elements:
                rank = 1
            else:
                continue
            out.append((el, rank))
        return out


def _model_info(sm: PydanticSemanticModel) -> ModelInfo:
    info = ModelInfo(sm)
    taken: set[str] = set()

    def add(name: str, kind: str, expr: str | None, **kw: str | None) -> None:
        fname = name if name not in taken else f"{name}_{kind}"
        n = 2
        while fname in taken:
            fname, n = f"{name}_{kind}_{n}", n + 1
        taken.add(fname)
        info.elements[name] = Element(sm.name, name, fname, kind, expr or name, **kw)

    for e in sm.entities:
        add(e.name, "entity", e.expr, entity_type=e.type.value)
    for d in sm.dimensions:
        if d.type is DimensionType.TIME:
            g = d.type_params.time_granularity.value if d.type_params else None
            add(d.name, "time_dimension", d.expr, grain=g)
        else:
            add(d.name, "dimension", d.expr)
    for m in sm.measures:
        add(m.name, "measure", m.expr)
    ident = [e.name for e in sm.entities if e.type in IDENTIFYING]
    primary = sm.primary_entity or next(
        (e.name for e in sm.entities if e.type is EntityType.PRIMARY), None
    )
    if primary and primary not in ident:
        ident.insert(0, primary)
    info.identifying = tuple(ident)
    info.primary_entity = primary
    return info
