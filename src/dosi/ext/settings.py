"""Engine settings a model carries for dosi: the `custom_extensions` entry whose `vendor_name`
is `DOSI` on the semantic model.

They are dosi's own settings, not DATUS extensions: the DATUS registry, its version and its
basic/datus mode branch stay exactly the spec's (datus-extensions §2.1, §7), and a setting
reads the same in both modes (it says how dosi answers, not what a field or metric means).
Another engine ignores the entry, as any vendor's it does not know. `data` is a JSON string
holding one object, strict JSON as DATUS payloads (`dosi.ext.envelope`):

* `densify`: `"time"` | `"all"` | `"windows"` | `"covered"` | `false` -- the model's default for the query
  key `densify` (dosi.query.densify); absent: `false`, no filling;
* `time_spine`: `{"dataset": <dataset>, "field": <its date field>}` -- the model's time-spine
  table (MetricFlow's time spine): empty buckets are read from its rows instead of a series
  generated in SQL.

A malformed value is `invalid_dosi_setting` (the model fails); an unknown key is the warning
`unknown_dosi_setting` with the known keys as candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import PayloadDecodeError, decode_json, json_type, show_json

DOSI_VENDOR = "DOSI"
INVALID = "invalid_dosi_setting"
UNKNOWN = "unknown_dosi_setting"
#: Setting keys of the semantic model's DOSI entry.
MODEL_SETTINGS: tuple[str, ...] = ("densify", "time_spine")
DENSIFY_DEFAULTS: tuple[str, ...] = ("time", "all", "windows", "covered")
_SPINE_KEYS: tuple[str, ...] = ("dataset", "field")
#: optional: where a spine without a time_range runs (issue 22): the data's first to last
#: bucket (the default), or every row of the table (MetricFlow's time spine)
_SPINE_BOUNDS: tuple[str, ...] = ("data", "table")


@dataclass(frozen=True)
class TimeSpineSetting:
    """The declared time-spine table: a dataset and its date field (names, checked by the
    compiler against the model)."""

    dataset: str
    field: str
    bounds: str = "data"  # "data" | "table": the extent of a spine without a time_range


@dataclass(frozen=True)
class ModelSettings:
    """The semantic model's DOSI settings; None where a setting is absent."""

    densify: str | None = None  # "time" | "all" | "windows" | "covered" | "none"
    time_spine: TimeSpineSetting | None = None


def _get(item: Any, name: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def read_model_settings(
    custom_extensions: Sequence[Any] | None, path: str, sink: DiagnosticSink
) -> ModelSettings:
    """The DOSI entry of the semantic model (at most one), its problems reported to `sink`."""
    entries = [
        (i, _get(e, "data"))
        for i, e in enumerate(custom_extensions or ())
        if isinstance(_get(e, "vendor_name"), str) and _get(e, "vendor_name").upper() == DOSI_VENDOR
    ]
    if not entries:
        return ModelSettings()
    for i, _ in entries[1:]:
        sink.error(
            INVALID,
            f"custom_extensions[{i}] is a second DOSI entry on the semantic model: at most one",
            path=path,
            hint="merge the settings into one DOSI entry",
        )
    index, data = entries[0]
    obj = _decode(index, data, path, sink)
    if obj is None:
        return ModelSettings()
    densify: str | None = None
    spine: TimeSpineSetting | None = None
    for key, value in obj.items():
        if key == "densify":
            densify = _densify(value, path, sink)
        elif key == "time_spine":
            spine = _time_spine(value, path, sink)
        else:
            sink.warn(
                UNKNOWN,
                f"`{key}` is not a dosi setting of the semantic model (ignored)",
                path=path,
                candidates=tuple(closest(key, MODEL_SETTINGS) or MODEL_SETTINGS),
                hint="settings: " + ", ".join(MODEL_SETTINGS),
            )
    return ModelSettings(densify, spine)


def _decode(index: int, data: Any, path: str, sink: DiagnosticSink) -> dict[str, Any] | None:
    where = f"custom_extensions[{index}].data"
    if not isinstance(data, str):
        sink.error(INVALID, f"{where} must be a JSON string", path=path)
        return None
    try:
        obj = decode_json(data)
    except PayloadDecodeError as exc:
        sink.error(INVALID, f"{where} is not strict JSON: {exc}", path=path)
        return None
    if not isinstance(obj, dict):
        sink.error(INVALID, f"{where} must decode to one JSON object", path=path)
        return None
    return obj


def _densify(value: Any, path: str, sink: DiagnosticSink) -> str | None:
    if value is False:
        return "none"
    if isinstance(value, str) and value in DENSIFY_DEFAULTS:
        return value
    sink.error(
        INVALID,
        f'`densify` must be "time", "all", "windows", "covered" or false (got {json_type(value)} '
        f"{show_json(value)})",
        path=path,
        candidates=tuple(closest(value, DENSIFY_DEFAULTS)) if isinstance(value, str) else (),
        hint='e.g. {"densify": "time"}: every query grouped by a time grain returns every bucket',
    )
    return None


def _time_spine(value: Any, path: str, sink: DiagnosticSink) -> TimeSpineSetting | None:
    hint = 'e.g. {"time_spine": {"dataset": "calendar", "field": "date_day"}}'
    if not isinstance(value, dict):
        sink.error(
            INVALID,
            f"`time_spine` must be an object {{dataset, field}} (got {json_type(value)})",
            path=path,
            hint=hint,
        )
        return None
    ok = True
    for key in value:
        if key not in (*_SPINE_KEYS, "bounds"):
            sink.error(
                INVALID,
                f"`time_spine.{key}` is not a key of time_spine (dataset, field, bounds)",
                path=path,
                candidates=tuple(closest(key, _SPINE_KEYS)),
                hint=hint,
            )
            ok = False
    names = {}
    for key in _SPINE_KEYS:
        v = value.get(key)
        if not isinstance(v, str) or not v.strip():
            sink.error(INVALID, f"`time_spine.{key}` must be a name string", path=path, hint=hint)
            ok = False
        else:
            names[key] = v.strip()
    bounds = value.get("bounds", "data")
    if bounds not in _SPINE_BOUNDS:
        sink.error(
            INVALID,
            f'`time_spine.bounds` must be "data" or "table" (got {json_type(bounds)})',
            path=path,
            hint='"table": a query without a time_range spans every row of the spine table',
        )
        ok = False
    if not ok:
        return None
    return TimeSpineSetting(names["dataset"], names["field"], bounds)
