"""The validators of every key this engine implements, one per key (datus-extensions §3, §4).

A key whose value is malformed is reported as `invalid_datus_extension` naming the key, and
its field keeps the default so the compiler can go on and report every problem in one run
(§2, ENV-CAR-08/09). Each validator answers a `KeyResult`; `dosi.ext.reader` files the value
into the carrier's payload (`dosi.ext.payloads`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink, closest
from dosi.ext.calendar import read_calendar
from dosi.ext.conform import CARDINALITIES, CARDINALITY_HINT, cardinality_value
from dosi.ext.conversion import read_conversion
from dosi.ext.derive import read_derive
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show
from dosi.ext.grains import NATIVE_GRAINS, SUB_DAY_GRAINS
from dosi.ext.lod_field import validate_field_lod
from dosi.ext.registry import Carrier
from dosi.ext.semi_additive import read_semi_additive
from dosi.ext.time_format import read_time
from dosi.ext.validity import read_validity
from dosi.ext.window import GRAINS, parse_window

INVALID = "invalid_datus_extension"

JOIN_TYPES: tuple[str, ...] = ("left", "inner")
MEASURE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class KeyResult:
    """Outcome of validating one key: `ok` False means an error was reported."""

    ok: bool
    value: Any = None
    features: tuple[str, ...] = ()


class _Ctx:
    def __init__(self, carrier: Carrier, path: str | None, sink: DiagnosticSink) -> None:
        self.carrier = carrier
        self.path = path
        self.sink = sink

    def bad(
        self, key: str, message: str, hint: str | None = None, cands: list[str] | None = None
    ) -> KeyResult:
        self.sink.error(
            INVALID, f"`{key}` {message}", path=self.path, hint=hint, candidates=tuple(cands or ())
        )
        return KeyResult(False)


def _join_type(ctx: _Ctx, value: Any) -> KeyResult:
    """D-JOIN: `"left"` | `"inner"` (JOIN-01, JOIN-05)."""
    if isinstance(value, str) and value in JOIN_TYPES:
        return KeyResult(True, value)
    cands = closest(value, JOIN_TYPES) if isinstance(value, str) else []
    return ctx.bad(
        "join_type",
        f'must be "left" or "inner" (got {json_type(value)} {_show(value)})',
        'write "join_type": "inner" to drop unmatched many-side rows, or "left" (the default)',
        cands,
    )


def _cardinality(ctx: _Ctx, value: Any) -> KeyResult:
    """D-CONFORM: `"many_to_one"` | `"many_to_many"` (CONF-01)."""
    found = cardinality_value(value)
    if found is not None:
        return KeyResult(True, found)
    cands = closest(value, CARDINALITIES) if isinstance(value, str) else []
    return ctx.bad(
        "cardinality",
        f'must be "many_to_one" or "many_to_many" (got {json_type(value)} {_show(value)})',
        CARDINALITY_HINT,
        cands,
    )


def _fill_nulls_with(ctx: _Ctx, value: Any) -> KeyResult:
    """D-FILL: a finite JSON number; booleans are not numbers (FILL-01, FILL-08)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return KeyResult(True, int(value))
    if isinstance(value, float) and math.isfinite(value):
        return KeyResult(True, float(value))
    return ctx.bad(
        "fill_nulls_with",
        f"must be a finite JSON number (got {json_type(value)} {_show(value)})",
        'e.g. "fill_nulls_with": 0 (unquoted)',
    )


def _empty_buckets(ctx: _Ctx, value: Any) -> KeyResult:
    """`empty_buckets` (dosi 1.15): `"keep"` (the D-DERIVE filter's rule, the default) or
    `"drop"` (a bucket where no row passes the metric's filter is no row of its branch)."""
    if value in ("keep", "drop"):
        return KeyResult(True, value)
    return ctx.bad(
        "empty_buckets",
        f'must be "keep" or "drop" (got {json_type(value)} {_show(value)})',
        '"empty_buckets": "drop" drops the buckets the metric\'s filter matches no row in',
    )


def _time_dimension(ctx: _Ctx, value: Any) -> KeyResult:
    """D-TIME: on a dataset a field name; on a metric `"field"` or `"dataset.field"` (TIME-01)."""
    ok = isinstance(value, str) and value.strip() != "" and value == value.strip()
    if ok and ctx.carrier == "metric":
        parts = value.split(".")
        ok = len(parts) <= 2 and all(p and p == p.strip() for p in parts)
    if ok:
        return KeyResult(True, value)
    if ctx.carrier == "metric":
        hint = 'name a time field as "field" or "dataset.field", e.g. "orders.order_date"'
    else:
        hint = 'name one of this dataset\'s is_time fields, e.g. "order_date"'
    return ctx.bad(
        "time_dimension",
        f"must be a field name string (got {json_type(value)} {_show(value)})",
        hint,
    )


def _time_granularity(ctx: _Ctx, value: Any) -> KeyResult:
    """D-GRAIN: `day` | `week` | `month` | `quarter` | `year` (GRAIN-02), and (issue 22) the
    sub-day `hour` | `minute` | `second` of timestamp columns (issue 22)."""
    if isinstance(value, str) and value in GRAINS:
        return KeyResult(True, value)
    if isinstance(value, str) and value in SUB_DAY_GRAINS:
        return KeyResult(True, value)
    cands = closest(value, NATIVE_GRAINS) if isinstance(value, str) else []
    return ctx.bad(
        "time_granularity",
        f"must be one of {', '.join(NATIVE_GRAINS)} (got {json_type(value)} {_show(value)})",
        None,
        cands,
    )


def _dataset(ctx: _Ctx, value: Any) -> KeyResult:
    """D-DATASET: a dataset name string (DSET-01); existence is checked by the compiler."""
    if isinstance(value, str) and value.strip() != "" and value == value.strip():
        return KeyResult(True, value)
    return ctx.bad(
        "dataset",
        f"must be a dataset name string (got {json_type(value)} {_show(value)})",
        'e.g. "dataset": "chat_record"',
    )


def _measure(ctx: _Ctx, value: Any) -> KeyResult:
    """D-MEASURE: `{"name": <identifier>}`, identifier = ASCII `[A-Za-z_][A-Za-z0-9_]*` (MEAS-01).

    Unknown keys inside `measure` are rejected: the key is silent-impact, so a newer in-family
    addition must fail closed rather than be dropped.
    """
    hint = 'e.g. "measure": {"name": "orders_new_product_amount_sum"}'
    if not isinstance(value, dict):
        return ctx.bad(
            "measure",
            f'must be an object {{"name": ...}} (got {json_type(value)} {_show(value)})',
            hint,
        )
    ok = True
    for k in value:
        if k != "name":
            ctx.bad(f"measure.{k}", "is not a key of `measure` (only `name`)", "remove it")
            ok = False
    name = value.get("name")
    if name is None:
        return ctx.bad("measure.name", "is required", hint)
    if not isinstance(name, str) or MEASURE_NAME.fullmatch(name) is None:
        return ctx.bad(
            "measure.name",
            "must be an ASCII identifier: a letter or underscore, then letters, digits or "
            f"underscores (got {json_type(name)} {_show(name)})",
            hint,
        )
    return KeyResult(True, name) if ok else KeyResult(False)


def _is_dimension(ctx: _Ctx, value: Any) -> KeyResult:
    """D-DIM: a boolean (DIM-01)."""
    if isinstance(value, bool):
        return KeyResult(True, value)
    return ctx.bad(
        "is_dimension",
        f"must be true or false (got {json_type(value)} {_show(value)})",
        'e.g. "is_dimension": false to stop recommending the field as a dimension',
    )


def _time(ctx: _Ctx, value: Any) -> KeyResult:
    """D-FORMAT: the `time` block's shape (FMT-DEC-01..18; datatype checks in the compiler)."""
    spec, problems = read_time(value, GRAINS)
    for problem in problems:
        ctx.sink.error(
            INVALID,
            problem,
            path=ctx.path,
            hint='e.g. "time": {"format": "%Y%m%d"} for a string like \'20260907\'',
        )
    return KeyResult(spec is not None, spec)


def _window(ctx: _Ctx, value: Any) -> KeyResult:
    """D-WINDOW: see `dosi.ext.window`."""
    parsed = parse_window(value, path=ctx.path, sink=ctx.sink)
    return KeyResult(parsed.spec is not None, parsed.spec, parsed.features)


def _lod(ctx: _Ctx, value: Any) -> KeyResult:
    """D-LOD on a field: see `lod_field.py`."""
    parsed = validate_field_lod(value, ctx.path, ctx.sink)
    return KeyResult(parsed is not None, parsed)


def _calendar(ctx: _Ctx, value: Any) -> KeyResult:
    """D-CALENDAR: see `calendar.py` (the dataset and fields are the compiler's)."""
    spec, problems = read_calendar(value)
    for message, hint in problems:
        ctx.sink.error(INVALID, message, path=ctx.path, hint=hint)
    return KeyResult(spec is not None, spec)


def _derive(ctx: _Ctx, value: Any) -> KeyResult:
    """D-DERIVE: see `derive.py`."""
    ok, payload = read_derive(value, ctx.path, ctx.sink)
    return KeyResult(ok, payload)


def _semi_additive(ctx: _Ctx, value: Any) -> KeyResult:
    """D-SEMI: see `semi_additive.py`."""
    spec = read_semi_additive(value, ctx.path, ctx.sink)
    return KeyResult(spec is not None, spec)


def _conversion(ctx: _Ctx, value: Any) -> KeyResult:
    """D-CONVERSION: see `conversion.py`."""
    spec = read_conversion(value, ctx.path, ctx.sink)
    return KeyResult(spec is not None, spec)


def _validity(ctx: _Ctx, value: Any) -> KeyResult:
    """D-VALIDITY (dosi 1.15): see `validity.py`."""
    spec = read_validity(value, ctx.path, ctx.sink)
    return KeyResult(spec is not None, spec)


_VALIDATORS: dict[str, Callable[[_Ctx, Any], KeyResult]] = {
    "derive": _derive,
    "join_type": _join_type,
    "fill_nulls_with": _fill_nulls_with,
    "time_dimension": _time_dimension,
    "time_granularity": _time_granularity,
    "dataset": _dataset,
    "measure": _measure,
    "is_dimension": _is_dimension,
    "window": _window,
    "lod": _lod,
    "cardinality": _cardinality,
    "time": _time,
    "semi_additive": _semi_additive,
    "conversion": _conversion,
    "calendar": _calendar,
    "empty_buckets": _empty_buckets,
    "validity": _validity,
}


def validate_key(
    carrier: Carrier, key: str, value: Any, path: str | None, sink: DiagnosticSink
) -> KeyResult:
    """Validate an implemented key's value on `carrier` (the caller checked it is read here)."""
    return _VALIDATORS[key](_Ctx(carrier, path, sink), value)
