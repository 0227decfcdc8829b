"""What every model writer shares: Ossie object builders, the DATUS envelope a producer owes
(`v` and `requires`, datus-extensions §2), name sanitising, structured import warnings, and
the check that a written model loads.

Importers (`dosi import cube|lookml|dbt`) and the scaffolder (`dosi init`) build plain dicts in
the Ossie document shape with these helpers, then render them with `yaml_writer.to_yaml`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.compiler.model_compiler import compile_model_text
from dosi.errors import Diagnostic, DiagnosticSink, ModelError
from dosi.ext.envelope import DATUS_VENDOR
from dosi.ext.registry import REGISTRY, WINDOW_FEATURES, parse_engine_version
from dosi.ext.window.payload import parse_window
from dosi.importers.yaml_writer import COMMENT, strip_comments, to_yaml
from dosi.model.versions import CURRENT

SQL_DIALECT = "ANSI_SQL"

_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")


def expression(sql: str) -> dict[str, Any]:
    """An Ossie Expression holding one ANSI_SQL text."""
    return {"dialects": [{"dialect": SQL_DIALECT, "expression": sql}]}


def safe_name(text: str, taken: Iterable[str] = ()) -> str:
    """`text` as an identifier the query syntax can address (`dataset.field:grain` forbids
    dots and colons): other characters become `_`, a leading digit gets `_`, and a name
    already in `taken` gets a numeric suffix."""
    name = _NOT_NAME.sub("_", text.strip()).strip("_") or "unnamed"
    if name[0].isdigit():
        name = "_" + name
    used = set(taken)
    out, n = name, 2
    while out in used:
        out, n = f"{name}_{n}", n + 1
    return out


def _version_of(payload: Mapping[str, Any]) -> tuple[int, int]:
    """The lowest DATUS version whose engines know every key and window shape used."""
    best = (1, 0)
    for key in payload:
        info = REGISTRY.get(key)
        if info is not None:
            best = max(best, parse_engine_version(info.since))
    if "window" in payload:
        parsed = parse_window(payload["window"], path=None, sink=DiagnosticSink())
        for feature in parsed.features:
            since = WINDOW_FEATURES.get(feature)
            if since is not None:
                best = max(best, parse_engine_version(since))
        if isinstance(payload["window"], Mapping) and "base" in payload["window"]:
            best = max(best, (1, 4))
    derive = payload.get("derive")
    if isinstance(derive, Mapping) and derive.get("type") == "lod":
        best = max(best, parse_engine_version(REGISTRY["lod"].since))
    return best


def datus_entry(payload: Mapping[str, Any]) -> dict[str, Any]:
    """One `custom_extensions` entry carrying `payload`, with the envelope a producer owes:
    `v` (the version that introduced the newest key used) and `requires` listing every
    silent-impact key (datus-extensions §2 `requires`, ENV-REQ-03)."""
    silent = [k for k in payload if k in REGISTRY and REGISTRY[k].requires_needed]
    major, minor = _version_of(payload)
    data: dict[str, Any] = {"v": f"{major}.{minor}"}
    if silent:
        data["requires"] = silent
    data.update(payload)
    return {"vendor_name": DATUS_VENDOR, "data": json.dumps(data, ensure_ascii=False)}


def _common(
    obj: dict[str, Any],
    *,
    label: str | None = None,
    description: str | None = None,
    synonyms: Sequence[str] = (),
    datus: Mapping[str, Any] | None = None,
    comment: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    if comment:
        obj = {COMMENT: comment, **obj}
    if label:
        obj["label"] = label
    if description:
        obj["description"] = description
    if synonyms:
        obj["ai_context"] = {"synonyms": list(dict.fromkeys(synonyms))}
    if datus:
        obj["custom_extensions"] = [datus_entry(datus)]
    return obj


def field_obj(
    name: str,
    sql: str,
    *,
    datatype: str | None = None,
    is_time: bool | None = None,
    **common: Any,
) -> dict[str, Any]:
    """An Ossie Field (`datatype` one of the Ossie DataType names)."""
    obj: dict[str, Any] = {"name": name, "expression": expression(sql)}
    if is_time is not None:
        obj["dimension"] = {"is_time": is_time}
    if datatype is not None:
        obj["datatype"] = datatype
    return _common(obj, **common)


def metric_obj(
    name: str, sql: str, *, datatype: str | None = None, **common: Any
) -> dict[str, Any]:
    """An Ossie Metric."""
    obj: dict[str, Any] = {"name": name, "expression": expression(sql)}
    if datatype is not None:
        obj["datatype"] = datatype
    return _common(obj, **common)


def relationship_obj(
    name: str,
    from_: str,
    to: str,
    from_columns: Sequence[str],
    to_columns: Sequence[str],
    **common: Any,
) -> dict[str, Any]:
    """An Ossie Relationship, many (`from_`) to one (`to`)."""
    obj: dict[str, Any] = {
        "name": name,
        "from": from_,
        "to": to,
        "from_columns": list(from_columns),
        "to_columns": list(to_columns),
    }
    common.pop("label", None)
    common.pop("description", None)
    return _common(obj, **common)


def document_obj(
    name: str,
    datasets: Sequence[dict[str, Any]],
    relationships: Sequence[dict[str, Any]] = (),
    metrics: Sequence[dict[str, Any]] = (),
    description: str | None = None,
) -> dict[str, Any]:
    """An Ossie document holding one semantic model."""
    model: dict[str, Any] = {"name": name}
    if description:
        model["description"] = description
    model["datasets"] = list(datasets)
    if relationships:
        model["relationships"] = list(relationships)
    if metrics:
        model["metrics"] = list(metrics)
    return {"version": CURRENT, "semantic_model": [model]}


def column_field(fields: list[dict[str, Any]], column: str, quoted: bool = False) -> str:
    """The field of `fields` exposing source column `column`: the first whose expression is
    exactly that column, else a hidden one added for it (D-DIM `is_dimension: false`: it
    exists for the metrics that read it, not to group by)."""
    text = exp.column(column, quoted=quoted).sql()
    for f in fields:
        if f["expression"]["dialects"][0]["expression"] == text:
            return str(f["name"])
    name = safe_name(column, [f["name"] for f in fields])
    fields.append(
        field_obj(
            name,
            text,
            description=f"Source column {column} (read by metrics).",
            datus={"is_dimension": False},
            comment="a source column the metrics read; no dimension of the source exposes it",
        )
    )
    return name


@dataclass
class Notes:
    """Structured warnings collected while converting: each names the object it concerns
    (`path`, in the source's own terms) and what was done instead."""

    items: list[Diagnostic] = field(default_factory=list)

    def warn(
        self, code: str, message: str, path: str | None = None, hint: str | None = None
    ) -> None:
        self.items.append(Diagnostic(code, message, "warning", path=path, hint=hint))


@dataclass(frozen=True)
class Converted:
    """A generated model: the document (with `"#"` comments), its warnings and file header."""

    document: dict[str, Any]
    warnings: tuple[Diagnostic, ...] = ()
    header: tuple[str, ...] = ()

    def yaml(self) -> str:
        return to_yaml(self.document, self.header)

    def plain(self) -> dict[str, Any]:
        """The document as a loader sees it (comments dropped)."""
        return strip_comments(self.document)

    def check(self, mode: str = "datus") -> list[Diagnostic]:
        """The errors the engine reports loading the written YAML (empty: it loads)."""
        return model_errors(self.yaml(), mode)


def model_errors(text: str, mode: str = "datus") -> list[Diagnostic]:
    """Compile `text`; the errors, or an empty list when the model loads."""
    try:
        compile_model_text(text, mode)
    except ModelError as err:
        return list(err.issues)
    return []
