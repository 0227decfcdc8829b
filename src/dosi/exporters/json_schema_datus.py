"""The DATUS half of the model's JSON Schema: every payload key per carrier, the window
families and sugars, derive families, params, lod and time formats, with each key's ignore
impact in its description. Every enum comes from the engine's own tables in `dosi.ext`, and
building it asserts that every registered key is described (`dosi.exporters.json_schema` puts
the pieces together)."""

from __future__ import annotations

from typing import Any

from dosi.ext.calendar import CALENDAR_KEYS, FISCAL_KEYS, RETAIL_KEYS
from dosi.ext.conform import CARDINALITIES
from dosi.ext.conversion import CALCULATIONS as CONVERSION_CALCULATIONS
from dosi.ext.conversion import PAIR_KEYS, WINDOW_KEYS
from dosi.ext.grains import NATIVE_GRAINS, WEEK_STARTS, WEEKDAYS
from dosi.ext.key_validators import JOIN_TYPES
from dosi.ext.lod_metric import KEYWORDS, OUTER_AGGS
from dosi.ext.params import DECL_KEYS, PARAM_TYPES
from dosi.ext.registry import DATUS_EXT_VERSION, REGISTRY
from dosi.ext.semi_additive import SNAPSHOTS
from dosi.ext.time_format import NATIVE_FORMATS, STORAGES, TIME_KEYS
from dosi.ext.window.frame_rules import EXCLUSIONS, HISTORIES, UNITS
from dosi.ext.window.functions import (
    FRAME_DISTINCT,
    FRAME_FUNCTIONS,
    FRAME_W1,
    FRAME_W2,
    RANK_FUNCTIONS,
    VALUE_FUNCTIONS,
)
from dosi.ext.window.offset import CALCULATIONS, DIRECTIONS, OFFSET_KEYS, PERIOD_STARTS
from dosi.ext.window.period_value import OFFSET_PICKS, PERIOD_GRAINS, PICKS
from dosi.ext.window.share import SHARE_KEYS
from dosi.ext.window.span import SPAN_GRAINS
from dosi.ext.window.spec import (
    GRAINS,
    NULLS,
    ORDER_BY,
    ORDER_DIRECTIONS,
    PARTITION_MODES,
    RESET_GRAINS,
)
from dosi.ext.window.streak import COMPARES, OPS, STREAK_KEYS

_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
_QUALIFIED = "^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$"


def ref(name: str) -> dict[str, Any]:
    """A reference to one of the schema's $defs."""
    return {"$ref": f"#/$defs/{name}"}


def enum(values: Any, description: str) -> dict[str, Any]:
    """A string enum with its description."""
    return {"type": "string", "enum": list(values), "description": description}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """A payload key's value, or null (null reads as absent, datus-extensions §2)."""
    return {
        "anyOf": [schema, {"type": "null"}],
        **({"description": schema["description"]} if "description" in schema else {}),
    }


def _key_doc(key: str) -> str:
    info = REGISTRY[key]
    return (
        f"{info.extension} (DATUS {info.since}; ignore impact {info.impact}"
        f"{', list it in requires' if info.requires_needed else ''}). Without it: {info.fallback}."
    )


def _slot(minimum: int, description: str) -> dict[str, Any]:
    """An integer slot a D-PARAM parameter may fill (`{"param": name}`)."""
    return {
        "description": description,
        "oneOf": [{"type": "integer", "minimum": minimum}, ref("ParamRef")],
    }


def window_defs() -> dict[str, Any]:
    order = {
        "type": "object",
        "properties": {
            "by": enum(ORDER_BY, "Order rows by the time axis or by the metric value."),
            "direction": enum(ORDER_DIRECTIONS, "asc by time, desc by value by default."),
            "nulls": enum(NULLS, "Where NULL values sort (1.9)."),
        },
        "additionalProperties": False,
    }
    partition = {
        "type": "object",
        "properties": {
            "mode": enum(PARTITION_MODES, "What the window restarts over."),
            "exclude": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "pattern": _QUALIFIED},
                "description": "dataset.field dimensions left out (query_dimensions_except).",
            },
        },
        "required": ["mode"],
        "additionalProperties": False,
        "if": {"properties": {"mode": {"const": "query_dimensions_except"}}},
        "then": {"required": ["exclude"]},
        "else": {"properties": {"exclude": False}},
    }
    offset = {
        "description": '"<count> <granularity>" (e.g. "1 month") or {count, granularity, '
        "direction}.",
        "oneOf": [
            {"type": "string", "pattern": f"^[0-9]+ ({'|'.join(GRAINS)})s?$"},
            {
                "type": "object",
                "properties": {
                    "count": _slot(1, "Buckets to shift by."),
                    "granularity": enum(GRAINS, "The calendar unit."),
                    "direction": enum(DIRECTIONS, "back (default) or forward."),
                },
                "required": [k for k in OFFSET_KEYS if k not in ("direction", "period_start")],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "period_start": enum(
                        PERIOD_STARTS, "The period whose first bucket each bucket reads (1.15)."
                    )
                },
                "required": ["period_start"],
                "additionalProperties": False,
            },
        ],
    }
    history = enum(
        HISTORIES,
        "all: a running total counts the rows before a time_range start (1.15); range (the "
        "default): it starts at the range start.",
    )
    span = {
        "description": "A trailing frame of calendar time (1.15): the buckets that start after "
        "`t - span`, up to the current one.",
        "oneOf": [
            {"type": "string", "pattern": "^[0-9]+ [a-z]+$"},
            {
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "minimum": 1},
                    "granularity": enum(SPAN_GRAINS, "The calendar unit."),
                },
                "required": ["count", "granularity"],
                "additionalProperties": False,
            },
        ],
    }
    period_value = {
        "description": "Accumulate per `grain` (day by default); a coarser query bucket "
        "reports the first, last or average of those running values.",
        "oneOf": [
            enum(PICKS, "Which running value stands for the bucket."),
            {
                "type": "object",
                "properties": {
                    "value": enum(PICKS, "Which running value stands for the bucket."),
                    "grain": enum(PERIOD_GRAINS, "The grain the frame accumulates at."),
                },
                "required": ["value"],
                "additionalProperties": False,
            },
        ],
    }
    offset_period_value = {
        "description": "An offset at a grain its shift does not land on (1.15): each `grain` "
        "bucket reads its shifted bucket and a coarser bucket reports their sum, first, last or "
        "average.",
        "oneOf": [
            enum(OFFSET_PICKS, "Which running value stands for the bucket."),
            {
                "type": "object",
                "properties": {
                    "value": enum(OFFSET_PICKS, "Which running value stands for the bucket."),
                    "grain": enum(PERIOD_GRAINS, "The grain the frame accumulates at."),
                },
                "required": ["value"],
                "additionalProperties": False,
            },
        ],
    }
    frame = {
        "type": "object",
        "description": "An ordered re-aggregation of the metric's buckets.",
        "properties": {
            "function": enum(FRAME_FUNCTIONS, "How the frame's values combine."),
            "preceding": {
                "description": 'Buckets before the current one, or "unbounded".',
                "oneOf": [
                    {"type": "integer", "minimum": 0},
                    {"const": "unbounded"},
                    ref("ParamRef"),
                ],
            },
            "reset": enum(RESET_GRAINS, "Restart the frame each period."),
            "require_full_window": {"type": "boolean"},
            "order": ref("WindowOrder"),
            "partition": ref("WindowPartition"),
            "units": enum(UNITS, "rows, range (value-ordered cumulative frames) or groups (1.14)."),
            "second": {
                "type": "string",
                "description": "The second series of covar / corr, or x of regr_* (1.14).",
            },
            "scope": {"const": "partition", "description": "The whole partition (1.9)."},
            "following": {
                "description": 'Buckets after the current one, or "unbounded" (1.14).',
                "oneOf": [{"type": "integer", "minimum": 0}, {"const": "unbounded"}],
            },
            "exclusion": enum(EXCLUSIONS, "Rows left out of the frame (1.14)."),
            "fraction": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "The percentile of percentile_cont / percentile_disc (1.14).",
            },
            "period_value": period_value,
            "history": history,
            "span": span,
        },
        "required": ["function"],
        "anyOf": [{"required": ["preceding"]}, {"required": ["scope"]}, {"required": ["span"]}],
        "additionalProperties": False,
    }

    def ordered(functions: Any, arg: str, arg_fn: str, description: str) -> dict[str, Any]:
        return {
            "type": "object",
            "description": description,
            "properties": {
                "function": enum(functions, "The window function."),
                arg: _slot(1, f"The argument of {arg_fn}."),
                "order": ref("WindowOrder"),
                "partition": ref("WindowPartition"),
            },
            "required": ["function"],
            "additionalProperties": False,
            "if": {"properties": {"function": {"const": arg_fn}}},
            "then": {"required": [arg]},
            "else": {"properties": {arg: False}},
        }

    sugar_fns = [*FRAME_W1, *FRAME_W2, *FRAME_DISTINCT]  # count_distinct: 1.15
    common = {"base": {"type": "string", "description": "Window another metric (D-DERIVE)."}}
    forbid = dict.fromkeys(
        ("offset", "calculation", "frame", "rank", "value", "function", "periods", "reset",
         "require_full_window", "period_value", "history", "span"),
        False,
    )  # fmt: skip

    def shape(kind: str | None, allowed: dict[str, Any], required: list[str]) -> dict[str, Any]:
        props = {**forbid, **common, **allowed}
        if kind is not None:
            props["type"] = {"const": kind}
        out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if kind is None:
            out["not"] = {"required": ["type"]}
        return out

    general = shape(
        None,
        {
            "offset": ref("WindowOffset"),
            "calculation": enum(CALCULATIONS, "Compare with the shifted bucket."),
            "period_value": offset_period_value,
            "frame": ref("WindowFrame"),
            "rank": ref("WindowRank"),
            "value": ref("WindowValue"),
        },
        [],
    )
    general["oneOf"] = [
        {"required": ["offset", "calculation"]},
        {"required": ["frame"], "properties": {"calculation": False, "period_value": False}},
        {"required": ["rank"], "properties": {"calculation": False, "period_value": False}},
        {"required": ["value"], "properties": {"calculation": False, "period_value": False}},
    ]
    share = {"partition": ref("WindowPartition")}
    streak = {
        "compare": enum(COMPARES, "The bucket's value, or its change from the previous one."),
        "op": enum(OPS, "How the value (or change) compares with the target."),
        "target": {
            "description": "The threshold, or a D-PARAM int / float param bound at query time.",
            "oneOf": [{"type": "number"}, ref("ParamRef")],
        },
        "partition": ref("WindowPartition"),
    }
    assert set(share) == set(SHARE_KEYS) and set(streak) == set(STREAK_KEYS)
    window = {
        "description": _key_doc("window"),
        "oneOf": [
            shape(
                "pop",
                {"offset": ref("WindowOffset"), "calculation": enum(CALCULATIONS, "")},
                ["type", "offset"],
            ),
            {
                **shape(
                    "rolling",
                    {
                        "function": enum(sugar_fns, "How the buckets combine."),
                        "periods": _slot(1, "Buckets in the window, the current one included."),
                        "require_full_window": {"type": "boolean"},
                        "period_value": period_value,
                        "span": span,
                    },
                    ["type", "function"],
                ),
                "anyOf": [{"required": ["periods"]}, {"required": ["span"]}],
            },
            shape(
                "cumulative",
                {
                    "function": enum(sugar_fns, "How the buckets combine."),
                    "reset": enum(RESET_GRAINS, "Restart each period."),
                    "period_value": period_value,
                    "history": history,
                },
                ["type", "function"],
            ),
            shape("share", share, ["type"]),
            shape("streak", streak, ["type"]),
            shape(None, {"share": _closed(share)}, ["share"]),
            shape(None, {"streak": _closed(streak)}, ["streak"]),
            general,
        ],
    }
    return {
        "Window": window,
        "WindowOffset": offset,
        "WindowFrame": frame,
        "WindowRank": ordered(RANK_FUNCTIONS, "buckets", "ntile", "Rank the metric's rows."),
        "WindowValue": _with_ignore_nulls(
            ordered(VALUE_FUNCTIONS, "n", "nth_value", "A value of another row.")
        ),
        "WindowOrder": order,
        "WindowPartition": partition,
        "ParamRef": {
            "type": "object",
            "description": "A slot filled by the metric's parameter of this name (D-PARAM).",
            "properties": {"param": {"type": "string"}},
            "required": ["param"],
            "additionalProperties": False,
        },
    }


def _closed(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def _pair() -> dict[str, Any]:
    """A field name, or one per side ({"base": ..., "conversion": ...})."""
    side = {"type": "string", "minLength": 1}
    return {"oneOf": [side, _closed(dict.fromkeys(PAIR_KEYS, side), PAIR_KEYS)]}


def calendar_def() -> dict[str, Any]:
    month = {"oneOf": [{"type": "integer", "minimum": 1, "maximum": 12}, {"type": "string"}]}
    props = {
        "week_start": enum(WEEK_STARTS, "The first day of every week bucket."),
        "fiscal_year": _closed({"start_month": month}, FISCAL_KEYS),
        "retail": _closed(
            {
                "pattern": enum(["4-4-5", "4-5-4", "5-4-4"], "Weeks per month of a quarter."),
                "year_end_month": month,
                "year_end_weekday": enum(WEEKDAYS, "The weekday a retail year ends on."),
                "rule": enum(["last", "nearest"], "Last on or before, or nearest to."),
            }
        ),
        "table": {
            "type": "object",
            "properties": {
                "dataset": {"type": "string", "minLength": 1},
                "date": {"type": "string", "minLength": 1},
                "grains": {
                    "oneOf": [
                        {"type": "array", "items": {"type": "string"}},
                        {"type": "object", "additionalProperties": {"type": "string"}},
                    ]
                },
            },
            "required": ["dataset", "date", "grains"],
        },
    }
    assert set(props) == set(CALENDAR_KEYS) and set(props["retail"]["properties"]) == set(
        RETAIL_KEYS
    )
    return {**_closed(props), "description": _key_doc("calendar")}


def payload_defs() -> dict[str, Any]:
    envelope = {
        "v": {
            "description": "The DATUS version this entry is written for (MAJOR.MINOR; the "
            f"engine implements {DATUS_EXT_VERSION}).",
            "oneOf": [
                {"type": "string", "pattern": "^(0|[1-9][0-9]*)(\\.(0|[1-9][0-9]*))?$"},
                {"type": "number"},
                {"type": "null"},
            ],
        },
        "requires": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Keys a consumer must not ignore (list every silent-impact key).",
        },
    }
    lod_metric = (
        f"^\\s*(({'|'.join(OUTER_AGGS)})\\s*\\(\\s*)?({'|'.join(KEYWORDS)})\\s*\\(.*\\)\\s*$"
    )
    param = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
            "type": enum(PARAM_TYPES, "int for window slots."),
            "default": {"type": ["integer", "number", "string"]},
            "allowed": {
                "type": "array",
                "minItems": 1,
                "items": {"type": ["integer", "number", "string"]},
            },
            "min": {"type": "number"},
            "max": {"type": "number"},
            "description": {"type": "string"},
        },
        "required": ["name", "type", "default"],
        "additionalProperties": False,
    }
    assert set(param["properties"]) == set(DECL_KEYS)
    derive = {
        "description": _key_doc("derive"),
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "type": {"const": "filter"},
                    "base": {"type": "string", "minLength": 1},
                    "where": {"type": "string", "minLength": 1},
                },
                "required": ["type", "base", "where"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "type": {"const": "compose"},
                    "expr": {"type": "string", "minLength": 1},
                    "fill": {"type": "number"},
                },
                "required": ["type", "expr"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "description": "D-LOD on a metric: agg(include(...)), exclude(...), fixed(...).",
                "properties": {
                    "type": {"const": "lod"},
                    "expr": {"type": "string", "pattern": lod_metric},
                },
                "required": ["type", "expr"],
                "additionalProperties": False,
            },
        ],
    }
    time = {
        "type": "object",
        "description": _key_doc("time"),
        "properties": {
            "format": {
                "type": "string",
                "description": f"A native type ({', '.join(NATIVE_FORMATS)}) or a layout such "
                "as %Y%m%d.",
                "anyOf": [{"enum": list(NATIVE_FORMATS)}, {"pattern": "%[YmdHMS]"}],
            },
            "storage": enum(STORAGES, "How a layout is stored."),
            "granularity": enum(GRAINS, "The stored grain."),
        },
        "additionalProperties": False,
    }
    assert set(time["properties"]) == set(TIME_KEYS)

    def payload(description: str, keys: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "description": description + " Unknown keys are allowed (newer DATUS versions).",
            "properties": {**envelope, **{k: _nullable(v) for k, v in keys.items()}},
            "additionalProperties": True,
        }

    defs = {
        "ModelPayload": payload("DATUS payload of a semantic model.", {"calendar": calendar_def()}),
        "DatasetPayload": payload(
            "DATUS payload of a dataset.",
            {
                "time_dimension": {
                    "type": "string",
                    "pattern": "^\\S(.*\\S)?$",
                    "description": _key_doc("time_dimension"),
                },
                "validity": {
                    "type": "object",
                    "description": _key_doc("validity"),
                    "properties": {
                        "start": {"type": "string", "minLength": 1},
                        "end": {"type": "string", "minLength": 1},
                    },
                    "required": ["start", "end"],
                    "additionalProperties": False,
                },
            },
        ),
        "FieldPayload": payload(
            "DATUS payload of a field.",
            {
                "time_granularity": enum(NATIVE_GRAINS, _key_doc("time_granularity")),
                "is_dimension": {"type": "boolean", "description": _key_doc("is_dimension")},
                "lod": {
                    "type": "object",
                    "description": _key_doc("lod"),
                    "properties": {
                        "expr": {
                            "type": "string",
                            "pattern": "^\\s*[Ff][Ii][Xx][Ee][Dd]\\s*\\(.*\\)\\s*$",
                        }
                    },
                    "required": ["expr"],
                    "additionalProperties": False,
                },
                "time": time,
            },
        ),
        "RelationshipPayload": payload(
            "DATUS payload of a relationship.",
            {
                "join_type": enum(JOIN_TYPES, _key_doc("join_type")),
                "cardinality": enum(CARDINALITIES, _key_doc("cardinality")),
            },
        ),
        "MetricPayload": payload(
            "DATUS payload of a metric.",
            {
                "fill_nulls_with": {"type": "number", "description": _key_doc("fill_nulls_with")},
                "time_dimension": {
                    "type": "string",
                    "pattern": "^[^.\\s]([^.]*[^.\\s])?(\\.[^.\\s]([^.]*[^.\\s])?)?$",
                    "description": _key_doc("time_dimension"),
                },
                "dataset": {"type": "string", "minLength": 1, "description": _key_doc("dataset")},
                "measure": {
                    "type": "object",
                    "description": _key_doc("measure"),
                    "properties": {"name": {"type": "string", "pattern": _NAME}},
                    "required": ["name"],
                    "additionalProperties": False,
                },
                "window": ref("Window"),
                "params": {
                    "type": "array",
                    "items": ref("ParamDecl"),
                    "description": _key_doc("params"),
                },
                "derive": derive,
                "semi_additive": {
                    **_closed(
                        {
                            "dimension": {"type": "string", "minLength": 1},
                            "snapshot": enum(SNAPSHOTS, "Which snapshot stands for a period."),
                            "window_groupings": {"type": "array", "items": {"type": "string"}},
                        },
                        ("dimension",),
                    ),
                    "description": _key_doc("semi_additive"),
                },
                "conversion": {
                    **_closed(
                        {
                            "base": {"type": "string", "minLength": 1},
                            "conversion": {"type": "string", "minLength": 1},
                            "entity": _pair(),
                            "window": {
                                "oneOf": [
                                    {"type": "string", "minLength": 1},
                                    _closed(
                                        {
                                            "count": {"type": "integer", "minimum": 1},
                                            "granularity": {"type": "string"},
                                        },
                                        WINDOW_KEYS,
                                    ),
                                ]
                            },
                            "calculation": enum(CONVERSION_CALCULATIONS, "The output."),
                            "constant_properties": {"type": "array", "items": _pair()},
                        },
                        ("base", "conversion", "entity"),
                    ),
                    "description": _key_doc("conversion"),
                },
                "empty_buckets": enum(("keep", "drop"), _key_doc("empty_buckets")),
            },
        ),
        "ParamDecl": param,
    }
    listed = {k for d in defs.values() for k in d.get("properties", {})} - set(envelope)
    missing = set(REGISTRY) - listed
    assert not missing, f"JSON Schema lacks DATUS keys {sorted(missing)}"
    return defs


def _with_ignore_nulls(value: dict[str, Any]) -> dict[str, Any]:
    """The value family's 1.14 `ignore_nulls`."""
    value["properties"]["ignore_nulls"] = {
        "type": "boolean",
        "description": "Navigate the non-NULL values only (1.14).",
    }
    return value
