"""`read_extensions`: the one entry point that reads a carrier's DATUS extension.

The mode branch lives here and nowhere else (datus-extensions §5 "implementation boundary",
ENV-MODE-07):

* datus mode (default): envelope checks (§2), the version gate (§2 `v`), `requires` (§2),
  then every key this engine implements is validated into the typed payload (§3).
* basic mode: the DATUS entry is inert. Its payload is not validated (even a malformed one),
  no version diagnostics are produced, and each carrying element gets exactly one
  `ignored_vendor_extension` warning naming the fallback that applies instead (§5,
  ENV-MODE-02/04, WM "Engine modes"; its text: `dosi.ext.basic_mode`).

The version gate is `dosi.ext.version`, `requires` is `dosi.ext.requires`, the warnings about
keys read elsewhere or not implemented are `dosi.ext.key_warnings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import Diagnostic, DiagnosticSink
from dosi.ext.basic_mode import basic_warning, fail_closed_keys
from dosi.ext.derive import read_window_base
from dosi.ext.envelope import Entry, PayloadDecodeError, datus_entries, decode_entry
from dosi.ext.history import WINDOW_FEATURES
from dosi.ext.key_validators import KeyResult, validate_key
from dosi.ext.key_warnings import (
    CARRIER_NAMES,
    non_empty,
    warn_misplaced,
    warn_not_implemented,
    warn_requires_missing,
)
from dosi.ext.lod_metric import is_lod_derive, lod_shape_ok, read_lod_derive
from dosi.ext.params import MetricParams, read_params
from dosi.ext.params_naming import warn_opaque
from dosi.ext.payloads import (
    PAYLOAD_FIELDS,
    MetricExt,
    Payload,
    build_payload,
    default_payload,
)
from dosi.ext.registry import (
    CARRIERS,
    DATUS_EXT_VERSION,
    ENVELOPE_KEYS,
    REGISTRY,
    Carrier,
    parse_engine_version,
)
from dosi.ext.requires import check_requires, read_requires
from dosi.ext.version import fmt, gate_version

Mode = Literal["datus", "basic"]
MODES: tuple[Mode, ...] = ("datus", "basic")

# Diagnostic codes (CHECKLIST §18) raised here; the version gate's are in `version`, the
# requires checks' in `requires`, the key warnings' in `key_warnings`, basic mode's in
# `basic_mode`.
INVALID = "invalid_datus_extension"
KEY_NEWER = "datus_ext_key_newer_than_declared"


@dataclass(frozen=True)
class ExtRead:
    """What one carrier's DATUS extension says.

    `present`: a DATUS entry was found (in either mode). `payload`: typed values, defaults for
    anything absent, invalid or ignored. `diagnostics`: errors and warnings, in reading order.
    `keys`: payload keys of the (first) DATUS entry, envelope keys excluded; empty when the
    payload was not read. `declared_version`: the entry's `v` as "MAJOR.MINOR" when valid.
    """

    present: bool
    payload: Payload
    diagnostics: tuple[Diagnostic, ...] = ()
    keys: tuple[str, ...] = ()
    declared_version: str | None = None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")


def read_extensions(
    carrier: Carrier,
    path: str,
    custom_extensions: Sequence[Any] | None,
    mode: Mode = "datus",
) -> ExtRead:
    """Read the DATUS extension of one Ossie object.

    `carrier` is the object kind, `path` the object path used in diagnostics (e.g.
    `"metrics[revenue_mom]"`), `custom_extensions` the raw list of `{"vendor_name", "data"}`
    entries (dicts or objects with those attributes). Never raises for bad payloads.
    """
    if carrier not in CARRIERS:
        raise ValueError(f"unknown DATUS carrier {carrier!r}; expected one of {CARRIERS}")
    if mode not in MODES:
        raise ValueError(f"unknown engine mode {mode!r}; expected one of {MODES}")
    entries = datus_entries(custom_extensions)
    if not entries:
        return ExtRead(False, default_payload(carrier))
    if mode == "basic":
        payload = default_payload(carrier)
        closed = fail_closed_keys(carrier, entries)
        if closed:  # D-SEMI / D-CONVERSION: the metric is refused, never summed plainly
            payload = MetricExt(basic_fail_closed=closed)
        return ExtRead(True, payload, (basic_warning(carrier, path, entries),))
    return _read_datus(carrier, path, entries)


# --------------------------------------------------------------------------------------------
# datus mode


def _read_datus(carrier: Carrier, path: str, entries: list[Entry]) -> ExtRead:
    sink = DiagnosticSink()
    first, *extra = entries
    for e in extra:
        sink.error(
            INVALID,
            f"custom_extensions[{e.index}] is a second DATUS entry on this "
            f"{CARRIER_NAMES[carrier]}: at most one DATUS entry per object "
            f"(custom_extensions[{first.index}] is the one read)",
            path=path,
            hint="merge the payloads into a single DATUS entry",
        )
    try:
        obj = decode_entry(first)
    except PayloadDecodeError as exc:
        sink.error(
            INVALID,
            f"the DATUS payload (custom_extensions[{first.index}].data) is malformed: {exc}",
            path=path,
            hint="`data` must be a JSON string holding one object, e.g. "
            f'\'{{"v": "{DATUS_EXT_VERSION}", ...}}\'',
        )
        return ExtRead(True, default_payload(carrier), tuple(sink.items))

    keys = tuple(k for k in obj if k not in ENVELOPE_KEYS)
    requires = read_requires(obj.get("requires"), sink, path)

    declared = gate_version(obj.get("v"), keys, requires, sink, path)
    if declared == "unsupported":
        # A future major (or a pre-1.0 v) is the only blanket rejection: nothing is read (§2).
        return ExtRead(True, default_payload(carrier), tuple(sink.items), keys)

    values: dict[str, Any] = {}
    newer: list[tuple[str, str]] = []
    params: MetricParams | None = None
    if carrier == "metric" and obj.get("params") is not None:
        # D-PARAM: slots take their defaults before `window` is validated (PARAM-INST-01)
        obj, params = read_params(obj, path, sink)
        if params is not None:
            warn_opaque(params, path, sink)
    for key in keys:
        value = obj[key]
        info = REGISTRY.get(key)
        required = key in requires
        if info is None:
            continue  # unknown: ignored (ENV-CAR-06), or datus_ext_key_required below
        if carrier not in info.carriers:
            if not required:
                warn_misplaced(info, carrier, sink, path)
            continue
        if carrier == "metric" and key == "derive" and is_lod_derive(value):
            lod = read_lod_derive(value, path, sink)  # D-LOD on a metric (ext/lod_metric.py)
            if lod is not None:
                values["lod"] = lod
            elif lod_shape_ok(value):  # a grammar error: reported once, no nested_aggregate
                values["lod_invalid"] = True
            continue
        if (carrier, key) not in PAYLOAD_FIELDS:
            if not required:
                warn_not_implemented(info, sink, path)
                if info.requires_needed and non_empty(value):
                    warn_requires_missing(info, sink, path)
            continue
        if value is None and key not in _NULL_IS_INVALID:
            continue  # null ≡ absent
        if key == "params":  # read above, with the window slots it fills
            result = KeyResult(params is not None, params)
        else:
            result = validate_key(carrier, key, value, path, sink)
        if info.requires_needed and non_empty(value) and not required:
            warn_requires_missing(info, sink, path)
        if not result.ok:
            continue
        values[PAYLOAD_FIELDS[(carrier, key)]] = result.value
        if declared is not None:
            if parse_engine_version(info.since) > declared:
                newer.append((key, info.since))
            for feat in result.features:
                if parse_engine_version(WINDOW_FEATURES[feat]) > declared:
                    newer.append((feat, WINDOW_FEATURES[feat]))

    for key, since in newer:
        assert declared is not None
        sink.warn(
            KEY_NEWER,
            f"`{key}` was added in DATUS {since}, newer than the declared v {fmt(declared)}; "
            "it is still honored",
            path=path,
            hint=f'declare "v": "{since}" (or newer) on this entry',
        )

    if carrier == "metric" and "window" in values:
        base = read_window_base(obj)  # D-DERIVE M2
        if base is not None:
            values["window_base"] = base
    check_requires(carrier, obj, requires, sink, path)
    return ExtRead(
        True,
        build_payload(carrier, values),
        tuple(sink.items),
        keys,
        fmt(declared) if declared is not None else None,
    )


# D-FILL: "a JSON number" — a null fill is a malformed payload (as the reference engine says),
# not an absent key that would silently keep NULL groups NULL.
_NULL_IS_INVALID = frozenset({"fill_nulls_with"})
