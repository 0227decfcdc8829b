"""Basic mode (datus-extensions §5, ENV-MODE-02/04, WM "Engine modes"): the DATUS entry is
inert, and each carrying element gets exactly one `ignored_vendor_extension` warning naming
the fallback that applies instead. The mode branch itself is in `dosi.ext.reader`.
"""

from __future__ import annotations

from dosi.errors import Diagnostic
from dosi.ext.envelope import Entry, PayloadDecodeError, decode_entry
from dosi.ext.key_warnings import CARRIER_NAMES
from dosi.ext.registry import ENVELOPE_KEYS, REGISTRY, Carrier

IGNORED_VENDOR = "ignored_vendor_extension"

#: Metric keys without which the metric's expression is a wrong number (D-SEMI, D-CONVERSION):
#: basic mode makes such a metric unavailable instead of computing its plain expression.
FAIL_CLOSED: frozenset[str] = frozenset({"semi_additive", "conversion"})


def fail_closed_keys(carrier: Carrier, entries: list[Entry]) -> tuple[str, ...]:
    """The FAIL_CLOSED keys a carrying metric's entries hold (decoded only to see which keys
    appear, as the warning does; a payload that does not decode holds none)."""
    if carrier != "metric":
        return ()
    found: list[str] = []
    for entry in entries:
        try:
            obj = decode_entry(entry)
        except PayloadDecodeError:
            continue
        found.extend(k for k in obj if k in FAIL_CLOSED and obj[k] is not None and k not in found)
    return tuple(found)


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
    where = CARRIER_NAMES[carrier]
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
