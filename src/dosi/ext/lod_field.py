"""D-LOD on a Field: the `lod` payload key, `{"expr": "fixed(base, dims...)"}`
(datus-extensions §3 D-LOD "fixed fields"; CHECKLIST LOD-FLD-01..05).

One grammar, two carriers: the expression is parsed by the same parser as the metric's
`derive: {type: "lod"}` (`dosi.ext.lod_metric.parse_lod_expr`); this module adds what the
field carrier accepts. A field takes only `fixed`, with no outer aggregate (its value is one
per key); `include` / `exclude` are relative to a view, so they belong on a metric. A dims entry
may be written bare (`user_id`): it names a field of the field's own dataset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink
from dosi.ext.envelope import datus_entries, json_type
from dosi.ext.envelope import show_json as _show
from dosi.ext.lod_metric import LodSpec, parse_lod_expr

INVALID = "invalid_datus_extension"
HINT = 'write e.g. {"expr": "fixed(active_days, sessions.user_id)"} (datus-extensions D-LOD)'

_FIXED = re.compile(r"\s*fixed\s*\((.*)\)\s*", re.S | re.I)
_OUTER = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*\(\s*(fixed|include|exclude)\s*\(", re.I)
_RELATIVE = re.compile(r"\s*(include|exclude)\s*\(", re.I)
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class FieldLodPayload:
    """The validated `lod` object of a field: its expression text, parsed by the compiler
    once the field's dataset is known (`parse_field_lod`)."""

    expr: str


def validate_field_lod(
    value: Any, path: str | None, sink: DiagnosticSink
) -> FieldLodPayload | None:
    """The payload shape: an object with exactly one key, `expr`, a non-empty string."""
    if not isinstance(value, dict):
        sink.error(
            INVALID,
            f'`lod` must be an object {{"expr": ...}} (got {json_type(value)} {_show(value)})',
            path=path,
            hint=HINT,
        )
        return None
    extra = [k for k in value if k != "expr"]
    if extra:
        sink.error(
            INVALID, f"`lod.{extra[0]}` is not a key of `lod` (only `expr`)", path=path, hint=HINT
        )
        return None
    text = value.get("expr")
    if not isinstance(text, str) or not text.strip():
        sink.error(
            INVALID,
            f"`lod.expr` must be a non-empty string (got {json_type(text)} {_show(text)})",
            path=path,
            hint=HINT,
        )
        return None
    return FieldLodPayload(text)


def parse_field_lod(
    text: str, dataset: str, path: str | None, sink: DiagnosticSink
) -> LodSpec | None:
    """`fixed(base, dims...)` with bare dims qualified by `dataset`; anything else a field
    cannot host is reported here, naming where it belongs."""
    rel = _RELATIVE.match(text)
    if rel is not None:
        sink.error(
            INVALID,
            f"`lod.expr` {rel.group(1).lower()}(...) is relative to a query's view, so it is "
            "hosted on a metric, not a field",
            path=path,
            hint=f'declare a metric with "derive": {{"type": "lod", "expr": "{text.strip()}"}}',
        )
        return None
    if _OUTER.match(text):
        sink.error(
            INVALID,
            f"`lod.expr` {text!r}: a field's level of detail is one value per key, so it takes "
            "no outer aggregate; write fixed(base, dims...)",
            path=path,
            hint="to aggregate the pinned value, declare an ordinary metric over this field "
            "(e.g. AVG(dataset.field))",
        )
        return None
    m = _FIXED.fullmatch(text)
    if m is not None and "(" not in m.group(1):
        args = [a.strip() for a in m.group(1).split(",")]
        dims = [f"{dataset}.{a}" if _BARE.fullmatch(a) else a for a in args[1:]]
        text = f"fixed({', '.join([args[0], *dims])})"
    spec = parse_lod_expr(text, path, sink)
    if spec is None:
        return None
    if spec.kind != "fixed":
        sink.error(
            INVALID,
            f"`lod.expr` {spec.kind}(...) is relative to a query's view, so it is hosted on a "
            "metric, not a field",
            path=path,
            hint=f'declare a metric with "derive": {{"type": "lod", "expr": "{spec.text}"}}',
        )
        return None
    return spec


def dropped_in_basic_mode(mode: str, custom_extensions: Any) -> bool:
    """Basic mode (datus-extensions §5): a field carrying a DATUS entry whose expression is an
    aggregate is dropped with `aggregate_field_dropped` (D-LOD is the one extension that
    cannot degrade to a value: without its declaration the expression is a bare aggregate);
    the payload is never read, so any DATUS entry counts."""
    return mode == "basic" and bool(datus_entries(custom_extensions))
