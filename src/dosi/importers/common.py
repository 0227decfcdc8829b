"""Model-writing helpers every importer shares: Ossie objects, DATUS envelopes, warnings, YAML.

An importer reads another tool's semantic model and writes an Ossie document. What it cannot
carry is a structured warning (`ImportWarning`: a stable code, the object it concerns and the
reason), never a silent drop. The envelope helper stamps each DATUS payload with the version
its keys need and lists silent-impact keys in `requires` (datus-extensions §2.1), read from
the capability registry so an importer never hard-codes either.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from dosi.errors import OsiError
from dosi.ext.registry import REGISTRY
from dosi.model.versions import CURRENT as OSSIE_VERSION

DIALECT = "ANSI_SQL"
"""The dialect importers write expressions in (the source tools' SQL is warehouse SQL)."""

DATUS = "DATUS"


class ImportFailure(OsiError):
    """The input cannot be imported at all (unreadable, or not a valid project / manifest)."""

    kind = "import_error"


@dataclass(frozen=True)
class ImportWarning:
    """Something the importer could not carry: `code` is stable, `object` names the source
    object (`metric:bookings_mom`, `semantic_model:orders.measure:balance`)."""

    code: str
    object: str
    message: str
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": "warning",
            "object": self.object,
            "message": self.message,
        }
        if self.hint:
            out["hint"] = self.hint
        return out

    def __str__(self) -> str:
        return f"[{self.code}] {self.object}: {self.message}"


@dataclass
class ImportResult:
    """An imported Ossie document (plain dicts in Ossie key order) and what did not carry."""

    document: dict[str, Any]
    warnings: list[ImportWarning] = field(default_factory=list)
    header: str = ""

    def to_yaml(self) -> str:
        return dump_yaml(self.document, self.header)


def expression(sql: str) -> dict[str, Any]:
    """An Ossie expression object in the importers' dialect."""
    return {"dialects": [{"dialect": DIALECT, "expression": sql}]}


def payload_version(keys: Iterable[str], at_least: str = "1.0") -> str:
    """The lowest DATUS version that holds every key (the registry's `since`)."""
    best = _version_tuple(at_least)
    for key in keys:
        info = REGISTRY.get(key)
        if info is not None:
            best = max(best, _version_tuple(info.since))
    return f"{best[0]}.{best[1]}"


def datus(payload: Mapping[str, Any], at_least: str = "1.0") -> dict[str, Any]:
    """A DATUS custom_extensions entry: `v` from the keys' versions, `requires` listing every
    silent-impact key (a consumer that cannot honour it must fail, not compute another
    number)."""
    keys = list(payload)
    body: dict[str, Any] = {"v": payload_version(keys, at_least)}
    required = [k for k in keys if k in REGISTRY and REGISTRY[k].requires_needed]
    if required:
        body["requires"] = required
    body.update(payload)
    return vendor(DATUS, body)


def vendor(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A custom_extensions entry; `data` is a JSON string, as the Ossie schema demands."""
    return {"vendor_name": name, "data": json.dumps(payload, separators=(", ", ": "))}


def read_vendor(obj: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The decoded payload of `obj`'s custom_extensions entry for vendor `name` ({} if none)."""
    for ext in obj.get("custom_extensions") or ():
        if str(ext.get("vendor_name", "")).upper() == name.upper():
            try:
                data = json.loads(ext.get("data") or "{}")
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def make_field(
    name: str,
    sql: str,
    *,
    datatype: str | None = None,
    is_time: bool | None = None,
    label: str | None = None,
    description: str | None = None,
    extensions: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """An Ossie field in schema key order; optional keys only when set."""
    out: dict[str, Any] = {"name": name, "expression": expression(sql)}
    if is_time is not None:
        out["dimension"] = {"is_time": is_time}
    if label:
        out["label"] = label
    if description:
        out["description"] = description
    if datatype:
        out["datatype"] = datatype
    exts = list(extensions)
    if exts:
        out["custom_extensions"] = exts
    return out


def make_metric(
    name: str,
    sql: str,
    *,
    description: str | None = None,
    synonyms: Iterable[str] = (),
    extensions: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """An Ossie metric; a label (Ossie metrics have none) rides as an ai_context synonym."""
    out: dict[str, Any] = {"name": name, "expression": expression(sql)}
    if description:
        out["description"] = description
    syn = [s for s in dict.fromkeys(synonyms) if s and s != name]
    if syn:
        out["ai_context"] = {"synonyms": syn}
    exts = list(extensions)
    if exts:
        out["custom_extensions"] = exts
    return out


def make_document(model: dict[str, Any]) -> dict[str, Any]:
    """The top-level Ossie document holding one semantic model."""
    return {"version": OSSIE_VERSION, "semantic_model": [model]}


def quote_ident(name: str) -> str:
    """`name` as a SQL identifier: bare when it is a plain lower-case word, else quoted."""
    if name.isidentifier() and name == name.lower():
        return name
    return '"' + name.replace('"', '""') + '"'


class _Dumper(yaml.SafeDumper):
    """Block-style YAML that keeps key order and writes multi-line strings as `|` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(document: Mapping[str, Any], header: str = "") -> str:
    """The document as YAML, optionally under a `#` comment header."""
    body = yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
    )
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    return "\n".join([*lines, body]) if lines else body


def _version_tuple(v: str) -> tuple[int, int]:
    major, _, minor = v.partition(".")
    return int(major), int(minor or 0)


__all__ = [
    "DATUS",
    "DIALECT",
    "OSSIE_VERSION",
    "ImportFailure",
    "ImportResult",
    "ImportWarning",
    "datus",
    "dump_yaml",
    "expression",
    "make_document",
    "make_field",
    "make_metric",
    "payload_version",
    "quote_ident",
    "read_vendor",
    "vendor",
]
