"""The DATUS capability registry: every payload key this engine knows, and the version history.

This table is the single source of truth (datus-extensions §2.1, CHECKLIST ENV-REG-01/02): the
version gate (`version.py`), the basic-mode and not-implemented warning texts (`envelope.py`,
`reader.py`), `dosi info` and `GET /v1/capabilities` all read it at run time, so none of them
can drift. The §7 changelog is mirrored in `HISTORY` (`dosi.ext.history`); a test checks that
every key appears in exactly one history row, at its `since` version.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from dosi.ext.history import HISTORY, WINDOW_FEATURES

DATUS_EXT_VERSION = "1.15"
"""The DATUS extension version this engine implements (datus-extensions header, §2.1)."""

Carrier = Literal["semantic_model", "dataset", "field", "relationship", "metric"]
CARRIERS: tuple[Carrier, ...] = ("semantic_model", "dataset", "field", "relationship", "metric")

Impact = Literal["inert", "degraded", "documented", "silent"]
IMPACTS: dict[Impact, str] = {
    "inert": "presentation metadata the engine never consumes; results are identical",
    "degraded": "no wrong numbers: the request fails loudly (a structured error, or a query "
    "name that no longer resolves)",
    "documented": "numbers change, predictably and in a documented direction "
    "(LEFT vs INNER, NULL vs 0)",
    "silent": "numbers are wrong and the caller cannot tell; the key must be listed in `requires`",
}
"""Ignore-impact levels in increasing danger (datus-extensions §2.1, ENV-IMP-01)."""

ENVELOPE_KEYS: frozenset[str] = frozenset({"v", "requires"})
"""Reserved envelope keys (datus-extensions §2, ENV-CAR-04); never payload keys."""


@dataclass(frozen=True)
class KeyInfo:
    """One registered payload key (datus-extensions §2.1 / §7, ENV-REG-03)."""

    key: str
    extension: str
    carriers: tuple[Carrier, ...]
    since: str
    impact: Impact
    fallback: str
    implemented: bool

    @property
    def requires_needed(self) -> bool:
        """Producers must list silent-impact keys in `requires` (§2 requires, ENV-REQ-03)."""
        return self.impact == "silent"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "extension": self.extension,
            "carriers": list(self.carriers),
            "since": self.since,
            "impact": self.impact,
            "fallback": self.fallback,
            "implemented": self.implemented,
            "requires_needed": self.requires_needed,
        }
        if self.key == "window":
            out["features"] = dict(WINDOW_FEATURES)
        return out


_KEYS: tuple[KeyInfo, ...] = (
    KeyInfo(
        "join_type",
        "D-JOIN",
        ("relationship",),
        "1.0",
        "documented",
        "LEFT join: unmatched many-side rows are kept and land in the NULL group",
        True,
    ),
    KeyInfo(
        "fill_nulls_with",
        "D-FILL",
        ("metric",),
        "1.0",
        "documented",
        "no fill except the S-FAN-6 count default (pure COUNT metrics fill 0, every other "
        "metric stays NULL)",
        True,
    ),
    KeyInfo(
        "time_dimension",
        "D-TIME",
        ("dataset", "metric"),
        "1.1",
        "degraded",
        "primary time only from single-is_time inference (otherwise no_primary_time_dimension)",
        True,
    ),
    KeyInfo(
        "time_granularity",
        "D-GRAIN",
        ("field",),
        "1.1",
        "documented",
        "native grain inferred from the datatype only; otherwise any query grain may be requested",
        True,
    ),
    KeyInfo(
        "dataset",
        "D-DATASET",
        ("metric",),
        "1.1",
        "degraded",
        "ownership derived from the metric SQL only (an ambiguous COUNT(*) fails with "
        "count_star_needs_dataset)",
        True,
    ),
    KeyInfo(
        "window",
        "D-WINDOW",
        ("metric",),
        "1.2",
        "documented",
        "no window derivation applies: the metric is its plain base aggregate",
        True,
    ),
    KeyInfo(
        "derive",
        "D-DERIVE",
        ("metric",),
        "1.4",
        "degraded",
        "no derivation: the metric is its own expression as written (equal numbers on the "
        "flatten tier, an approximation on the stage tier, nested_aggregate for lod)",
        True,
    ),
    KeyInfo(
        "measure",
        "D-MEASURE",
        ("metric",),
        "1.4",
        "silent",
        "the sanitizer-generated measure stem (S-MEASURE-1) names the measure, silently "
        "renaming result columns and metadata",
        True,
    ),
    KeyInfo(
        "params",
        "D-PARAM",
        ("metric",),
        "1.5",
        "degraded",
        "no parameters: every slot is its declared literal and query-time params are "
        "unknown_metric_param",
        True,
    ),
    KeyInfo(
        "time",
        "D-FORMAT",
        ("field",),
        "1.6",
        "silent",
        "the column is treated as a native date/timestamp: on a string or integer column this "
        "is a warehouse type error or silently wrong rows",
        True,
    ),
    KeyInfo(
        "is_dimension",
        "D-DIM",
        ("field",),
        "1.7",
        "documented",
        "the dimension role is inferred from the model structure (keys, relationship columns, "
        "measured columns)",
        True,
    ),
    KeyInfo(
        "cardinality",
        "D-CONFORM",
        ("relationship",),
        "1.8",
        "silent",
        "the edge is an ordinary many-to-one join: the facts are joined row by row and "
        "duplicate-sensitive aggregates fan out",
        True,
    ),
    KeyInfo(
        "lod",
        "D-LOD",
        ("field",),
        "1.10",
        "degraded",
        "the field is dropped (aggregate_field_dropped): its expression is a bare aggregate, so "
        "metrics and queries that reference it fail with unknown_field / unknown_column",
        True,
    ),
    KeyInfo(
        "semi_additive",
        "D-SEMI",
        ("metric",),
        "1.11",
        "silent",
        "the metric adds up every snapshot along its time dimension: period-end balances are "
        "summed across snapshots, a plain wrong number (basic mode refuses the metric)",
        True,
    ),
    KeyInfo(
        "conversion",
        "D-CONVERSION",
        ("metric",),
        "1.12",
        "silent",
        "the metric is its plain expression: the conversion events' aggregate over the base "
        "events' with no entity link, window or ordering, a wrong rate (basic mode refuses "
        "the metric)",
        True,
    ),
    KeyInfo(
        "calendar",
        "D-CALENDAR",
        ("semantic_model",),
        "1.10",  # dosi's own key (issue 22): no version of its own
        "degraded",
        "weeks start on Monday, and the fiscal, retail and calendar-table grains it declares "
        "do not resolve (unknown_grain)",
        True,
    ),
    KeyInfo(
        "empty_buckets",
        "D-BUCKETS",
        ("metric",),
        "1.15",  # dosi's own key (issue 23 bed): the DATUS documents do not define it
        "documented",
        "a bucket where the metric's filter matches no row is kept, its value NULL (or the "
        "D-FILL value), as the D-DERIVE filter folds it",
        True,
    ),
    KeyInfo(
        "validity",
        "D-VALIDITY",
        ("dataset",),
        "1.15",  # dosi's own key (issue 20 bed, slowly changing dimensions)
        "silent",
        "a join to the dataset matches every version of the key: each fact row repeats once "
        "per version and the aggregates inflate",
        True,
    ),
)

REGISTRY: dict[str, KeyInfo] = {k.key: k for k in _KEYS}
"""Every payload key this engine knows, by name."""
DOSI_KEYS: frozenset[str] = frozenset({"calendar"})
"""Keys dosi adds beyond the DATUS specification (issue 22): read from 1.10 on, so they have
no row in its version history."""


def parse_engine_version(text: str) -> tuple[int, int]:
    """`"1.10"` → `(1, 10)`; for registry strings only (user input goes through version.py)."""
    major, minor = text.split(".")
    return int(major), int(minor)


ENGINE_VERSION: tuple[int, int] = parse_engine_version(DATUS_EXT_VERSION)


def keys_for(carrier: Carrier) -> tuple[KeyInfo, ...]:
    """Registered keys read on `carrier` (semantic_model: D-CALENDAR alone)."""
    return tuple(k for k in _KEYS if carrier in k.carriers)


def _build() -> dict[str, Any]:
    # the reference engine's shape: keys as a list of rows, history rows with `added`
    return {
        "vendor_name": "DATUS",
        "version": DATUS_EXT_VERSION,
        "min_version": "1.0",
        "keys": [{"key": k.key, **k.to_dict()} for k in _KEYS],
        "history": [h.to_dict() for h in HISTORY],
    }


DATUS_EXT: dict[str, Any] = _build()
"""The registry as plain JSON-able data: `{"vendor_name", "version", "min_version", "keys",
"history"}` (§7, ENV-REG-06)."""


def registry_row(key: str) -> dict[str, Any]:
    """The `DATUS_EXT["keys"]` row of one key."""
    return next(row for row in DATUS_EXT["keys"] if row["key"] == key)


def capabilities() -> dict[str, Any]:
    """A fresh copy of `DATUS_EXT` for `dosi info` / `GET /v1/capabilities` (ENV-REG-06/07)."""
    return copy.deepcopy(DATUS_EXT)
