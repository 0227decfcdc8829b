"""Typed payloads per carrier: what `read_extensions` answers (the validators of each key are
`dosi.ext.key_validators`).

datus-extensions §3 (catalogue) and §4 (defaults): each payload dataclass holds the Ossie default
for every key (`None` = "not declared, apply the default in §4"). A key whose value is malformed
is reported as `invalid_datus_extension` naming the key, and its field keeps the default so the
compiler can go on and report every problem in one run (§2, ENV-CAR-08/09).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dosi.ext.calendar import CalendarSpec
from dosi.ext.conform import Cardinality
from dosi.ext.conversion import ConversionSpec
from dosi.ext.lod_field import FieldLodPayload
from dosi.ext.lod_metric import LodSpec
from dosi.ext.params import MetricParams
from dosi.ext.registry import Carrier
from dosi.ext.semi_additive import SemiAdditiveSpec
from dosi.ext.time_format import TimeSpec
from dosi.ext.validity import ValiditySpec
from dosi.ext.window import Grain, WindowSpec


@dataclass(frozen=True)
class ModelExt:
    """SemanticModel carrier: D-CALENDAR `calendar` (issue 22); the envelope gate runs (§5)."""

    calendar: CalendarSpec | None = None


@dataclass(frozen=True)
class DatasetExt:
    """Dataset carrier: D-TIME `time_dimension` (a field of this dataset), D-VALIDITY
    `validity` (dosi 1.15: the dataset is a slowly changing dimension)."""

    time_dimension: str | None = None
    validity: ValiditySpec | None = None


@dataclass(frozen=True)
class FieldExt:
    """Field carrier: D-GRAIN `time_granularity`, D-DIM `is_dimension`, D-FORMAT `time`."""

    time_granularity: Grain | None = None
    is_dimension: bool | None = None
    lod: FieldLodPayload | None = None  # D-LOD fixed field (ext/lod_field.py)
    time: TimeSpec | None = None


@dataclass(frozen=True)
class RelationshipExt:
    """Relationship carrier: D-JOIN `join_type` (None = the LEFT default), D-CONFORM
    `cardinality` (None = the many_to_one default)."""

    join_type: Literal["left", "inner"] | None = None
    cardinality: Cardinality | None = None


@dataclass(frozen=True)
class MetricExt:
    """Metric carrier: D-FILL, D-TIME, D-DATASET, D-MEASURE (`measure_name`), D-WINDOW,
    D-SEMI `semi_additive`, D-CONVERSION `conversion`."""

    fill_nulls_with: float | int | None = None
    time_dimension: str | None = None
    dataset: str | None = None
    measure_name: str | None = None
    window: WindowSpec | None = None
    params: MetricParams | None = None  # D-PARAM (read by dosi.ext.params)
    lod: LodSpec | None = None  # D-DERIVE `lod` family (ext/lod_metric.py)
    lod_invalid: bool = False  # a lod declaration whose grammar was reported invalid
    derive: Any = None  # D-DERIVE: the family's payload (ext/derive.py)
    window_base: str | None = None  # D-DERIVE M2 `window.base`
    semi_additive: SemiAdditiveSpec | None = None  # D-SEMI (ext/semi_additive.py)
    conversion: ConversionSpec | None = None  # D-CONVERSION (ext/conversion.py)
    empty_buckets: str | None = None  # dosi 1.15: "keep" (default) | "drop"
    # basic mode: keys present whose loss would make the metric a wrong number, so the
    # compiler makes it unavailable instead (the payload itself is not read)
    basic_fail_closed: tuple[str, ...] = ()


Payload = ModelExt | DatasetExt | FieldExt | RelationshipExt | MetricExt

_PAYLOAD_TYPES: dict[str, type[Payload]] = {
    "semantic_model": ModelExt,
    "dataset": DatasetExt,
    "field": FieldExt,
    "relationship": RelationshipExt,
    "metric": MetricExt,
}

# Which payload attribute each implemented key fills, per carrier.
PAYLOAD_FIELDS: dict[tuple[str, str], str] = {
    ("relationship", "join_type"): "join_type",
    ("metric", "fill_nulls_with"): "fill_nulls_with",
    ("metric", "time_dimension"): "time_dimension",
    ("dataset", "time_dimension"): "time_dimension",
    ("dataset", "validity"): "validity",
    ("field", "time_granularity"): "time_granularity",
    ("metric", "dataset"): "dataset",
    ("metric", "measure"): "measure_name",
    ("metric", "window"): "window",
    ("metric", "params"): "params",
    ("field", "is_dimension"): "is_dimension",
    ("field", "lod"): "lod",
    ("metric", "derive"): "derive",
    ("relationship", "cardinality"): "cardinality",
    ("field", "time"): "time",
    ("metric", "semi_additive"): "semi_additive",
    ("metric", "conversion"): "conversion",
    ("metric", "empty_buckets"): "empty_buckets",
    ("semantic_model", "calendar"): "calendar",
}


def default_payload(carrier: Carrier) -> Payload:
    """The all-defaults payload of a carrier (key absent everywhere, §4)."""
    return _PAYLOAD_TYPES[carrier]()


def build_payload(carrier: Carrier, values: dict[str, Any]) -> Payload:
    """Payload of `carrier` from `{attribute: value}` for the keys that validated."""
    return _PAYLOAD_TYPES[carrier](**values)


def implemented_here(carrier: Carrier, key: str) -> bool:
    """True when this engine reads `key` on `carrier`."""
    return (carrier, key) in PAYLOAD_FIELDS
