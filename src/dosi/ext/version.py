"""The envelope version gate: reading `v` and classifying it (datus-extensions §2 `v`).

| situation                                   | outcome (code)                                  |
|---------------------------------------------|-------------------------------------------------|
| `v` absent or null                          | silent                                          |
| malformed (bad string, wrong type, ≥2 dp)   | error `invalid_datus_extension`                 |
| below 1.0, or a MAJOR newer than ours       | error `unsupported_datus_ext_version`           |
| MINOR newer than ours                       | warning `datus_ext_version_ahead`               |
| a key newer than the declared `v`           | warning `datus_ext_key_newer_than_declared`     |
| older MINOR, every key inside its range     | silent                                          |

CHECKLIST ENV-V-01 … ENV-V-10.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import DiagnosticSink
from dosi.ext.registry import DATUS_EXT_VERSION, ENGINE_VERSION, REGISTRY

INVALID = "invalid_datus_extension"
UNSUPPORTED_VERSION = "unsupported_datus_ext_version"
VERSION_AHEAD = "datus_ext_version_ahead"

Version = tuple[int, int]
GateOutcome = Literal["ok", "ahead", "unsupported"]

# "1" is read as 1.0, as the reference engine does; "MAJOR.MINOR" is the canonical form
_STRING_FORM = re.compile(r"(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?")
_NUMBER_FORM = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")


class VersionFormatError(ValueError):
    """`v` is malformed: reported as `invalid_datus_extension` (ENV-V-05)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class BelowOne:
    """A well-formed `v` below 1.0 (e.g. `0.9`, `-1`): reported as unsupported (ENV-V-06)."""

    text: str


def fmt(version: Version) -> str:
    """`(1, 10)` → `"1.10"`."""
    return f"{version[0]}.{version[1]}"


def parse_declared(raw: Any) -> Version | BelowOne | None:
    """Read a payload's `v`: `None` when absent/null (ENV-V-04), else `(major, minor)`.

    Accepts the canonical string `"MAJOR.MINOR"` (ENV-V-01) and JSON numbers: an integer `n`
    means `n.0`, a number with one decimal is `MAJOR.MINOR` (ENV-V-02). A number with two or
    more decimals (or an exponent) is rejected with a hint to use the string form, because
    `1.10` and `1.1` are the same float (ENV-V-03). `bool` is not a number.
    Raises `VersionFormatError` for a malformed `v` (ENV-V-05).
    """
    if raw is None:
        return None
    if isinstance(raw, bool):
        raise VersionFormatError(
            f'`v` must be a "MAJOR.MINOR" string or a number, not a boolean ({str(raw).lower()})',
            'write the version as a string, e.g. "v": "1.10"',
        )
    if isinstance(raw, int) and raw.bit_length() > 32:
        raise VersionFormatError("`v` is out of range", 'write e.g. "v": "1.1"')
    if isinstance(raw, int):
        if raw < 1:
            return BelowOne(str(raw))
        return raw, 0
    if isinstance(raw, (str, float)) and len(getattr(raw, "text", None) or str(raw)) > 24:
        raise VersionFormatError(
            "`v` is too long to be a MAJOR.MINOR version",
            'write e.g. "v": "1.1"',
        )
    if isinstance(raw, float):
        text = getattr(raw, "text", None) or repr(raw)
        m = _NUMBER_FORM.fullmatch(text)
        if m is None or (m.group(3) is not None and len(m.group(3)) >= 2):
            raise VersionFormatError(
                f"`v` {text} cannot be read as MAJOR.MINOR: a JSON number can only express minors "
                "0-9 (1.10 and 1.1 are the same number)",
                f'write the version as a string, e.g. "v": "{_string_hint(text)}"',
            )
        sign, major_s, minor_s = m.group(1), m.group(2), m.group(3) or "0"
        if sign:
            return BelowOne(text)
        version = int(major_s), int(minor_s)
        if version < (1, 0):
            return BelowOne(text)
        return version
    if isinstance(raw, str):
        m = _STRING_FORM.fullmatch(raw)
        if m is None:
            raise VersionFormatError(
                f'`v` "{raw}" is not of the form "MAJOR.MINOR"',
                f'write e.g. "v": "1.1" (this engine implements "{fmt(ENGINE_VERSION)}")',
            )
        version = int(m.group(1)), int(m.group(2) or 0)
        if version < (1, 0):
            return BelowOne(raw)
        return version
    kind = "an array" if isinstance(raw, list) else "an object" if isinstance(raw, dict) else "?"
    raise VersionFormatError(
        f'`v` must be a "MAJOR.MINOR" string or a number, not {kind}',
        'write the version as a string, e.g. "v": "1.1"',
    )


def _string_hint(text: str) -> str:
    m = re.fullmatch(r"([0-9]+)\.([0-9]+)", text)
    if m is None:
        return fmt(ENGINE_VERSION)
    return f"{int(m.group(1))}.{int(m.group(2))}"


def classify(declared: Version) -> GateOutcome:
    """Compare a declared version with this engine's (ENV-V-06/07/09)."""
    if declared[0] != ENGINE_VERSION[0]:
        return "unsupported"
    if declared[1] > ENGINE_VERSION[1]:
        return "ahead"
    return "ok"


def gate_version(
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
