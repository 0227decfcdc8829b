"""`read_extensions`: the one entry point that reads a carrier's DATUS extension.

The mode branch lives here and nowhere else (datus-extensions §5 "implementation boundary",
ENV-MODE-07):

* datus mode (default): envelope checks (§2), the version gate (§2 `v`), `requires` (§2),
  then every key this engine implements is validated into the typed payload (§3).
* basic mode: the DATUS entry is inert. Its payload is not validated (even a malformed one),
  no version diagnostics are produced, and each carrying element gets exactly one
  `ignored_vendor_extension` warning naming the fallback that applies instead (§5,
  ENV-MODE-02/04, WM "Engine modes").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import Diagnostic, DiagnosticSink
from dosi.ext.derive import read_window_base
from dosi.ext.envelope import Entry, PayloadDecodeError, datus_entries, decode_entry
from dosi.ext.lod_metric import is_lod_derive, lod_shape_ok, read_lod_derive
from dosi.ext.params import MetricParams, read_params
from dosi.ext.params_naming import warn_opaque
from dosi.ext.payloads import (
    PAYLOAD_FIELDS,
    KeyResult,
    Payload,
    build_payload,
    default_payload,
    validate_key,
)
from dosi.ext.registry import (
    CARRIERS,
    DATUS_EXT_VERSION,
    ENVELOPE_KEYS,
    REGISTRY,
    WINDOW_FEATURES,
    Carrier,
    KeyInfo,
    parse_engine_version,
)
from dosi.ext.version import (
    BelowOne,
    Version,
    VersionFormatError,
    classify,
    fmt,
    parse_declared,
)

Mode = Literal["datus", "basic"]
MODES: tuple[Mode, ...] = ("datus", "basic")

# Diagnostic codes: CHECKLIST §18, plus datus_ext_key_not_implemented and datus_ext_key_misplaced
# (this engine's warnings for registered keys it does not read here).
INVALID = "invalid_datus_extension"
UNSUPPORTED_VERSION = "unsupported_datus_ext_version"
VERSION_AHEAD = "datus_ext_version_ahead"
KEY_NEWER = "datus_ext_key_newer_than_declared"
KEY_REQUIRED = "datus_ext_key_required"
REQUIRES_MISSING = "datus_ext_requires_missing"
KEY_NOT_IMPLEMENTED = "datus_ext_key_not_implemented"
KEY_MISPLACED = "datus_ext_key_misplaced"
IGNORED_VENDOR = "ignored_vendor_extension"
NOT_IMPLEMENTED = "not_implemented"

_CARRIER_NAMES: dict[str, str] = {
    "semantic_model": "semantic model",
    "dataset": "dataset",
    "field": "field",
    "relationship": "relationship",
    "metric": "metric",
}


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
        return ExtRead(True, default_payload(carrier), (basic_warning(carrier, path, entries),))
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
            f"{_CARRIER_NAMES[carrier]}: at most one DATUS entry per object "
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
    requires = _read_requires(obj.get("requires"), sink, path)

    declared = _gate_version(obj.get("v"), keys, requires, sink, path)
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
                _warn_misplaced(info, carrier, sink, path)
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
                _warn_not_implemented(info, sink, path)
                if info.requires_needed and _non_empty(value):
                    _warn_requires_missing(info, sink, path)
            continue
        if value is None and key not in _NULL_IS_INVALID:
            continue  # null ≡ absent
        if key == "params":  # read above, with the window slots it fills
            result = KeyResult(params is not None, params)
        else:
            result = validate_key(carrier, key, value, path, sink)
        if info.requires_needed and _non_empty(value) and not required:
            _warn_requires_missing(info, sink, path)
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
    _check_requires(carrier, obj, requires, sink, path)
    return ExtRead(
        True,
        build_payload(carrier, values),
        tuple(sink.items),
        keys,
        fmt(declared) if declared is not None else None,
    )


def _gate_version(
    raw: Any, keys: tuple[str, ...], requires: tuple[str, ...], sink: DiagnosticSink, path: str
) -> Version | Literal["unsupported"] | None:
    """Read `v` and apply the §2 table; returns the declared version, None, or "unsupported"."""
    try:
        declared = parse_declared(raw)
    except VersionFormatError as exc:
        sink.error(INVALID, exc.message, path=path, hint=exc.hint)
        return None
    if declared is None:
        return None
    if isinstance(declared, BelowOne):
        sink.error(
            UNSUPPORTED_VERSION,
            f"`v` {declared.text} is below 1.0: no DATUS version before 1.0 exists",
            path=path,
            hint=f'declare a version from "1.0" to "{DATUS_EXT_VERSION}", or omit v',
        )
        return "unsupported"
    outcome = classify(declared)
    if outcome == "unsupported":
        sink.error(
            UNSUPPORTED_VERSION,
            f"`v` {fmt(declared)} declares DATUS major {declared[0]}, but this engine implements "
            f"{DATUS_EXT_VERSION}: a major bump changes the meaning of at least one key, so the "
            "payload is not read",
            path=path,
            hint="run an engine that implements this major version, or re-export the model for "
            "datus-ext/1",
        )
        return "unsupported"
    if outcome == "ahead":
        dropped = [k for k in keys if k not in REGISTRY and k not in requires]
        detail = (
            f"keys this engine does not know are dropped: {', '.join(dropped)}"
            if dropped
            else "no key in this payload is unknown here, so nothing is dropped"
        )
        sink.warn(
            VERSION_AHEAD,
            f"`v` {fmt(declared)} is newer than this engine's DATUS {DATUS_EXT_VERSION}; "
            f"{detail}; every key this engine knows still applies",
            path=path,
            hint="upgrade the engine to honor the newer keys; list any key that must not be "
            "dropped in requires",
            candidates=tuple(dropped),
        )
    return declared


def _read_requires(raw: Any, sink: DiagnosticSink, path: str) -> tuple[str, ...]:
    """`requires`: an array of key names (ENV-REQ-01). Malformed → invalid; strings still count."""
    if raw is None:
        return ()
    if isinstance(raw, list) and all(isinstance(k, str) for k in raw):
        return tuple(dict.fromkeys(raw))
    sink.error(
        INVALID,
        f"`requires` must be an array of key names (strings), got {_describe(raw)}",
        path=path,
        hint='e.g. "requires": ["measure"]',
    )
    if isinstance(raw, list):
        return tuple(dict.fromkeys(k for k in raw if isinstance(k, str)))
    return ()


def _check_requires(
    carrier: Carrier,
    obj: dict[str, Any],
    requires: tuple[str, ...],
    sink: DiagnosticSink,
    path: str,
) -> None:
    """`datus_ext_key_required` for each listed key this engine would drop (ENV-REQ-02)."""
    for key in requires:
        if key in ENVELOPE_KEYS:
            continue
        info = REGISTRY.get(key)
        if info is None:
            message = (
                f'`requires` lists "{key}", a key this engine (DATUS {DATUS_EXT_VERSION}) does '
                "not know; it refuses to drop it"
            )
        elif not info.implemented and not (key == "derive" and is_lod_derive(obj.get(key))):
            message = (
                f'`requires` lists "{key}" ({info.extension}, DATUS {info.since}), which this '
                "engine registers but does not implement yet; it refuses to drop it"
            )
        elif carrier not in info.carriers and obj.get(key) is not None:
            message = (
                f'`requires` lists "{key}", which is not read on a {_CARRIER_NAMES[carrier]} '
                f"(only on {_carriers_text(info)}); it refuses to drop it"
            )
        else:
            continue
        sink.error(
            KEY_REQUIRED,
            message,
            path=path,
            hint=f"run an engine that implements {key}, or remove it from requires if ignoring "
            "it is safe",
            candidates=(key,),
        )


# D-FILL: "a JSON number" — a null fill is a malformed payload (as the reference engine says),
# not an absent key that would silently keep NULL groups NULL.
_NULL_IS_INVALID = frozenset({"fill_nulls_with"})


def _warn_misplaced(info: KeyInfo, carrier: Carrier, sink: DiagnosticSink, path: str) -> None:
    sink.warn(
        KEY_MISPLACED,
        f"`{info.key}` ({info.extension}) is not read on a {_CARRIER_NAMES[carrier]}: it belongs "
        f"on a {_carriers_text(info)}; ignored here",
        path=path,
        hint=f"move it into the DATUS entry of the {_carriers_text(info)} it describes",
    )


def _warn_not_implemented(info: KeyInfo, sink: DiagnosticSink, path: str) -> None:
    if info.requires_needed:
        hint = (
            "its impact is silent: numbers may be wrong with no other signal. Run an engine that "
            f"implements {info.extension}, and list {info.key} in requires"
        )
    else:
        hint = f"list {info.key} in requires to make this engine refuse the model instead"
    sink.warn(
        KEY_NOT_IMPLEMENTED,
        f"`{info.key}` ({info.extension}, DATUS {info.since}) is not implemented in this engine "
        f"and is ignored (ignore impact: {info.impact}); what applies instead: {info.fallback}",
        path=path,
        hint=hint,
    )


def _warn_requires_missing(info: KeyInfo, sink: DiagnosticSink, path: str) -> None:
    sink.warn(
        REQUIRES_MISSING,
        f"`{info.key}` ({info.extension}) has silent ignore impact but is not listed in "
        "`requires`: an engine that lacks it would return different numbers with no signal",
        path=path,
        hint=f'add it to the entry: "requires": ["{info.key}"]',
    )


def _non_empty(value: Any) -> bool:
    if value is None:
        return False
    return not (isinstance(value, str | list | dict) and len(value) == 0)


def _carriers_text(info: KeyInfo) -> str:
    return " or ".join(_CARRIER_NAMES[c] for c in info.carriers)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        bad = [v for v in value if not isinstance(v, str)]
        return f"an array with non-string entries ({', '.join(repr(b) for b in bad[:3])})"
    return f"{type(value).__name__} {value!r}"


# --------------------------------------------------------------------------------------------
# basic mode


def basic_warning(carrier: Carrier, path: str, entries: list[Entry]) -> Diagnostic:
    """The single `ignored_vendor_extension` warning for a carrying element (§5, ENV-MODE-02).

    The payload is not validated; it is decoded only to name the fallbacks of the keys that
    appear (registry texts). If it does not decode, a generic text is used.
    """
    keys: list[str] = []
    decoded = True
    for entry in entries:
        try:
            obj = decode_entry(entry)
        except PayloadDecodeError:
            decoded = False
            continue
        keys.extend(k for k in obj if k not in ENVELOPE_KEYS and k not in keys)
    where = _CARRIER_NAMES[carrier]
    silent: list[str] = []
    if decoded:
        parts: list[str] = []
        for key in keys:
            info = REGISTRY.get(key)
            if info is not None and carrier in info.carriers:
                parts.append(f"{info.extension} {key} → {info.fallback}")
                if info.requires_needed:
                    silent.append(key)
            else:
                parts.append(f"{key} → ignored (not a key this engine reads on a {where})")
        text = (
            "; ".join(parts) if parts else "the entry carries no extension keys, so nothing changes"
        )
    else:
        text = (
            f"the payload is not read, so every DATUS extension on this {where} falls back to its "
            "plain Ossie default"
        )
        if carrier == "metric":
            text += " (no window derivation applies: the metric is its plain base aggregate)"
    if silent:
        hint = (
            f"silent-impact keys ({', '.join(silent)}) are ignored: basic mode may return "
            "different numbers with no other signal; run this model in datus mode"
        )
    else:
        hint = "run in datus mode (the default, --osi-datus) to apply the extension"
    return Diagnostic(
        IGNORED_VENDOR,
        f"DATUS extension ignored in basic mode (--osi-basic); what applies instead: {text}",
        "warning",
        path=path,
        hint=hint,
    )
