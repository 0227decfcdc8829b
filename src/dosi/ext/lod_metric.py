"""D-DERIVE `lod` family: the level-of-detail grammar hosted on a metric (datus-extensions §3
D-LOD "relative views" and "fixed on a metric"; CHECKLIST LOD-REL-*, LOD-FXM-*).

`{"type": "lod", "expr": "<expr>"}` where `<expr>` is one of

* `agg(include(base, dims...))`  -- inner grouping = view dims + dims; the outer aggregate is
  required (something must fold the extra rows away);
* `exclude(base, dims...)`       -- inner grouping = view dims - dims, attached to every view
  row; an outer aggregate is forbidden (each view row meets one coarser row);
* `fixed(base[, dims...])`       -- grouped by dims only, computed before dimension filters;
  an outer aggregate is rejected (re-aggregating FIXED values is the field carrier's shape).

Only the grammar is read here; names are resolved by the compiler (compiler/lod_metric.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show

INVALID = "invalid_datus_extension"
LodKind = Literal["include", "exclude", "fixed"]
KEYWORDS: tuple[LodKind, ...] = ("include", "exclude", "fixed")
# outer aggregates an include may fold its finer rows with
OUTER_AGGS: tuple[str, ...] = ("sum", "avg", "min", "max", "count")
HINT = (
    'write e.g. "avg(include(revenue, orders.user_id))", "exclude(revenue, orders.channel_id)" '
    'or "fixed(revenue)" (datus-extensions D-LOD)'
)

_CALL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*", re.S)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class LodSpec:
    """A parsed `lod` derive: keyword, base metric name, qualified dims, outer aggregate."""

    kind: LodKind
    base: str
    dims: tuple[str, ...]  # "dataset.field", as written
    outer: str | None  # lower-case aggregate name (include only)
    text: str  # the expr as authored

    def describe(self) -> str:
        return self.text


def read_lod_derive(value: Any, path: str | None, sink: DiagnosticSink) -> LodSpec | None:
    """The `derive` payload of the `lod` family, or None after reporting why it is invalid."""
    if not isinstance(value, dict):
        sink.error(INVALID, f"`derive` must be an object (got {json_type(value)})", path=path)
        return None
    extra = [k for k in value if k not in ("type", "expr")]
    if extra:
        sink.error(
            INVALID,
            f"`derive.{extra[0]}` is not a key of the lod family (only `type` and `expr`)",
            path=path,
            hint="remove it",
        )
        return None
    text = value.get("expr")
    if not isinstance(text, str) or not text.strip():
        sink.error(
            INVALID,
            f"`derive.expr` of the lod family must be a non-empty string (got "
            f"{json_type(text)} {_show(text)})",
            path=path,
            hint=HINT,
        )
        return None
    return parse_lod_expr(text, path, sink)


def parse_lod_expr(text: str, path: str | None, sink: DiagnosticSink) -> LodSpec | None:
    """Parse `[agg(]keyword(base[, dims...])[)]`, reporting grammar errors."""

    def bad(message: str, cands: tuple[str, ...] = ()) -> None:
        sink.error(INVALID, message, path=path, hint=HINT, candidates=cands)

    call = _CALL.fullmatch(text)
    if call is None:
        bad(f"lod `expr` {text!r} is not a call such as exclude(base, dims...)")
        return None
    name, inner = call.group(1).lower(), call.group(2)
    outer: str | None = None
    if name not in KEYWORDS:
        nested = _CALL.fullmatch(inner)
        if nested is None or nested.group(1).lower() not in KEYWORDS:
            if name in OUTER_AGGS or nested is not None:
                bad(
                    f"lod `expr` {text!r} must be an include / exclude / fixed call, optionally "
                    f"inside one aggregate ({', '.join(OUTER_AGGS)})"
                )
            else:
                bad(
                    f"`{call.group(1)}` is not a level-of-detail keyword; expected one of "
                    f"{', '.join(KEYWORDS)}",
                    tuple(closest(name, KEYWORDS)),
                )
            return None
        if name not in OUTER_AGGS:
            bad(
                f"`{call.group(1)}` cannot fold a level of detail; the outer aggregate is one of "
                f"{', '.join(OUTER_AGGS)}",
                tuple(closest(name, OUTER_AGGS)),
            )
            return None
        outer = name
        name, inner = nested.group(1).lower(), nested.group(2)
    if "(" in inner or ")" in inner:
        bad(f"lod `expr` {text!r} nests calls: the arguments are a metric name and fields")
        return None
    args = [a.strip() for a in inner.split(",")]
    if not args or not args[0]:
        bad(f"{name}(...) names no base metric")
        return None
    base, dims = args[0], args[1:]
    if _NAME.fullmatch(base) is None:
        bad(f"{name}(...) base `{base}` must be a metric name")
        return None
    for d in dims:
        if _QUALIFIED.fullmatch(d) is None:
            bad(f"{name}(...) dimension `{d}` must be spelled dataset.field")
            return None
    if len(set(dims)) != len(dims):
        bad(f"{name}(...) names a dimension twice")
        return None
    kind: LodKind = name  # type: ignore[assignment]
    if kind == "include" and outer is None:
        bad(
            "include(...) is finer than the view, so it needs an outer aggregate to fold the "
            f"extra rows: e.g. avg({text.strip()})"
        )
        return None
    if kind == "include" and not dims:
        bad(
            "include(...) needs at least one dimension: with none it is the view's own grain "
            "and the metric is its base"
        )
        return None
    if kind == "exclude" and outer is not None:
        bad(
            "exclude(...) is coarser than the view, so every view row already meets one value; "
            "drop the outer aggregate"
        )
        return None
    if kind == "fixed" and outer is not None:
        bad(
            "an aggregate around fixed(...) re-aggregates FIXED values across keys, which is the "
            "field carrier's shape: declare a fixed field (lod on the field) and aggregate it "
            "with an ordinary metric"
        )
        return None
    return LodSpec(kind, base, tuple(dims), outer, text)


def is_lod_derive(value: Any) -> bool:
    """True for a `derive` payload of the lod family (the other families read elsewhere)."""
    return isinstance(value, dict) and value.get("type") == "lod"


def lod_shape_ok(value: Any) -> bool:
    """The lod payload's shape is right (only `type` and a string `expr`): a failure is then
    in the grammar, and the metric is not compiled from its nested-aggregate expression."""
    return (
        isinstance(value, dict)
        and set(value) <= {"type", "expr"}
        and isinstance(value.get("expr"), str)
        and bool(value["expr"].strip())
    )
