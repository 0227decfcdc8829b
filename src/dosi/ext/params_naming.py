"""D-PARAM output naming: the `{metric}__{param}_{value}` suffix of a bound metric column.

datus-extensions §3 D-PARAM "输出" (PARAM-OUT-*, PARAM-TOK-*):
- an int renders as its digits, a negative one with a `neg` prefix (`-3` -> `neg3`);
- a float renders as its shortest plain decimal with `.` -> `_` (`1.5` -> `1_5`, `2.0` -> `2`);
- a string renders as its ASCII stem (lowercase, every other character -> `_`, runs collapsed,
  ends trimmed: `o'neil` -> `o_neil`), unless the stem is empty, shared with another value of
  the declared `allowed` domain, or itself of the reserved `h<hex>` shape: then an opaque token,
  `h` + the first 8 hex digits of the value's 64-bit FNV-1a hash (16 digits for the whole domain
  once two 8-digit tokens of it collide). The hash constants are frozen as the reference engine
  has them (offset basis 0xcbf29ce484222325, multiplier 0x1000001b3), so tokens match it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from dosi.errors import DiagnosticSink
from dosi.ext.params import MetricParams, ParamDecl, Scalar

OPAQUE_TOKEN = "datus_param_opaque_token"
_FNV_BASIS = 0xCBF29CE484222325
_FNV_MULTIPLIER = 0x1000001B3  # frozen (PARAM-TOK-02): what the reference engine computes
_MASK = (1 << 64) - 1
_RESERVED = re.compile(r"h(?:[0-9a-f]{8}|[0-9a-f]{16})")
_NOT_STEM = re.compile(r"[^a-z0-9]+")


def fnv1a(text: str) -> int:
    h = _FNV_BASIS
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * _FNV_MULTIPLIER) & _MASK
    return h


def stem(text: str) -> str:
    """The ASCII stem: lowercase ASCII letters and digits, `_` for runs of anything else."""
    lowered = "".join(c.lower() if c.isascii() else "_" for c in text)
    return _NOT_STEM.sub("_", lowered).strip("_")


def plain_number(v: int | float) -> str:
    """The shortest plain decimal of a number: `3.0` -> `3`, `1e-07` -> `0.0000001`."""
    if not isinstance(v, float):
        return str(v)
    text = format(Decimal(repr(v)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def number_text(v: int | float) -> str:
    """`-1.5` -> `neg1_5`, `1e-07` -> `0_0000001`, `3.0` -> `3` (PARAM-OUT-03)."""
    text = plain_number(v)
    if text.startswith("-"):
        text = "neg" + text[1:]
    return text.replace(".", "_")


@lru_cache(maxsize=256)
def string_tokens(domain: tuple[str, ...]) -> dict[str, str]:
    """value -> suffix text for every value of a string domain (stem or opaque token).

    Depends only on the value and the declared domain, never on what a query binds or on
    the order of `allowed` (PARAM-TOK-04)."""
    stems = {v: stem(v) for v in domain}
    counts: dict[str, int] = {}
    for s in stems.values():
        counts[s] = counts.get(s, 0) + 1
    opaque = [v for v, s in stems.items() if not s or counts[s] > 1 or _RESERVED.fullmatch(s)]
    short = {v: f"h{fnv1a(v) >> 32:08x}" for v in opaque}
    if len(set(short.values())) < len(short):  # PARAM-TOK-03: widen the whole domain
        short = {v: f"h{fnv1a(v):016x}" for v in opaque}
    return {v: short.get(v, stems[v]) for v in domain}


def value_text(decl: ParamDecl, value: Scalar) -> str:
    """The suffix text of one bound value."""
    if isinstance(value, str):
        domain = tuple(str(v) for v in decl.allowed or ())
        if value in domain:
            return string_tokens(domain)[value]
        s = stem(value)
        return s if s and not _RESERVED.fullmatch(s) else f"h{fnv1a(value) >> 32:08x}"
    return number_text(value)


def opaque_values(decl: ParamDecl) -> dict[str, str]:
    """The values of a string domain that take an opaque token, with their tokens."""
    if decl.type != "string" or not decl.allowed:
        return {}
    domain = tuple(str(v) for v in decl.allowed)
    return {v: t for v, t in string_tokens(domain).items() if t != stem(v) or not stem(v)}


def column_name(metric: str, parts: list[tuple[ParamDecl, Scalar]]) -> str:
    """`{metric}__{param}_{value}` for each suffixed param, in declaration order."""
    return metric + "".join(f"__{d.name}_{value_text(d, v)}" for d, v in parts)


def warn_opaque(params: MetricParams, path: str | None, sink: DiagnosticSink) -> None:
    """PARAM-TOK-06: name each string value that falls back to an opaque token."""
    for d in params.decls:
        tokens = opaque_values(d)
        if not tokens:
            continue
        listed = ", ".join(f'"{v}" → _{t}' for v, t in tokens.items())
        sink.warn(
            OPAQUE_TOKEN,
            f'param "{d.name}": the ASCII stem sanitizer cannot tell these allowed values apart, '
            f"so their output columns take an opaque suffix ({listed}); read `outputs[].params` "
            "for the value",
            path=path,
        )
