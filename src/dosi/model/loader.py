"""Read an Ossie document (YAML or JSON) into the pydantic schema.

Every schema violation is reported at once, each with an object path such as
`datasets[orders].fields[amount]` and, for YAML, the line it sits on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from dosi.errors import Diagnostic, ModelError, at_stage
from dosi.model.schema import DocumentSpec
from dosi.model.versions import CURRENT, V0_1_1, document_version, upgrade_0_1_1

try:  # the C loader is several times faster on large models
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


def read_model_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelError(
            [Diagnostic("model_not_found", f"cannot read model file {path}: {exc.strerror}")]
        ) from None


def parse_document(text: str) -> Any:
    """YAML is a superset of JSON, but JSON goes through the faster json module."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass  # fall through: YAML flow mappings also start with "{"
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ModelError(
            [Diagnostic("invalid_yaml", f"the model is not valid YAML or JSON: {exc}", line=line)]
        ) from None


@dataclass(frozen=True)
class LoadedDocument:
    """A validated document, the Ossie version it was written in, and load warnings."""

    spec: DocumentSpec
    version: str = CURRENT
    warnings: list[Diagnostic] = field(default_factory=list)


def read_document(text: str) -> LoadedDocument:
    """Parse and validate; a 0.1.1 document is checked against the 0.1.1 schema's own rules
    and upgraded in memory to the current model (one `model_version_upgraded` warning)."""
    try:
        data = parse_document(text)
    except ModelError as err:  # whatever reading the text found is a `parse` problem
        raise ModelError(at_stage(err.issues, "parse"), err.warnings) from None
    if not isinstance(data, dict):
        raise ModelError(
            [
                Diagnostic(
                    "invalid_model",
                    "the model must be a mapping with `version` and `semantic_model`",
                    hint="start the file with `version: 0.2.0.dev0` and `semantic_model: [...]`",
                )
            ]
        )
    lines = LineIndex(text)
    issues: list[Diagnostic] = []
    version = CURRENT
    warnings: list[Diagnostic] = []
    original = data
    if document_version(data) == V0_1_1:
        version = V0_1_1
        data, findings = upgrade_0_1_1(data)
        issues = [
            Diagnostic(
                f.code,
                f.message,
                path=object_path(original, f.loc),
                line=lines.line_of(f.loc),
                hint=f.hint,
            )
            for f in findings
        ]
        warnings.append(
            Diagnostic(
                "model_version_upgraded",
                f"read an Ossie {V0_1_1} document; upgraded it in memory to {CURRENT}",
                "warning",
                path="version",
                line=lines.line_of(("version",)),
                hint=f"set `version: {CURRENT}` (and drop top-level `dialects` / `vendors`) to "
                "silence this",
            )
        )
    try:
        spec = DocumentSpec.model_validate(data)
    except ValidationError as exc:
        issues += [_schema_issue(err, original, lines) for err in exc.errors()]
    if issues:
        raise ModelError(issues, warnings)
    return LoadedDocument(spec, version, warnings)


def _schema_issue(err: Any, data: Any, lines: LineIndex) -> Diagnostic:
    loc: Sequence[Any] = err["loc"]
    path = object_path(data, loc)
    kind = err["type"]
    field = loc[-1] if loc else ""
    if list(loc) == ["version"]:
        code, msg = (
            "unsupported_version",
            (
                f"model version {data.get('version')!r} is not supported; this engine reads Ossie "
                f"{CURRENT} and {V0_1_1}"
            ),
        )
        if kind == "missing":
            code, msg = "missing_model_key", "required key `version` is missing (0.2.0.dev0)"
        return Diagnostic(
            code, msg, path="version", line=lines.line_of(loc), hint="set `version: 0.2.0.dev0`"
        )
    if kind == "too_short" and loc and loc[-1] == "datasets":
        code, msg = "empty_datasets", "a semantic model needs at least one dataset"
        return Diagnostic(code, msg, path=object_path(data, loc), line=lines.line_of(loc))
    if kind == "extra_forbidden":
        code, msg = "unknown_model_key", f"unknown key `{field}` (the Ossie schema forbids it)"
    elif kind == "missing":
        code, msg = "missing_model_key", f"required key `{field}` is missing"
    elif kind in ("literal_error", "enum"):
        code, msg = "invalid_model_value", f"`{field}`: {err['msg']}"
    else:
        code, msg = "invalid_model_value", f"`{field}`: {err['msg']}"
    parent = object_path(data, loc[:-1]) if kind in ("missing",) else path
    return Diagnostic(code, msg, path=parent or path, line=lines.line_of(loc))


def object_path(data: Any, loc: Sequence[Any]) -> str:
    """Turn a pydantic location into `datasets[orders].fields[amount]` (named where it can)."""
    parts: list[str] = []
    node = data
    i = 0
    loc = list(loc)
    # A single semantic model is the common case: drop the `semantic_model[x].` prefix.
    if len(loc) >= 2 and loc[0] == "semantic_model" and isinstance(loc[1], int):
        models = data.get("semantic_model") if isinstance(data, dict) else None
        if isinstance(models, list) and len(models) == 1:
            node = models[0]
            i = 2
    while i < len(loc):
        key = loc[i]
        if isinstance(key, int):
            name = None
            if isinstance(node, list) and 0 <= key < len(node):
                item = node[key]
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    name = item["name"]
                node = item
            else:
                node = None
            label = name if name is not None else str(key)
            if parts:
                parts[-1] += f"[{label}]"
            else:
                parts.append(f"[{label}]")
        else:
            parts.append(str(key))
            node = node.get(key) if isinstance(node, dict) else None
        i += 1
    return ".".join(parts)


class LineIndex:
    """Lazily maps a location (keys and list indexes) to a 1-based YAML line."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._root: Any = None
        self._composed = False

    def _compose(self) -> Any:
        if not self._composed:
            self._composed = True
            try:
                self._root = yaml.compose(self._text, Loader=_Loader)
            except yaml.YAMLError:
                self._root = None
        return self._root

    def line_of(self, loc: Sequence[Any]) -> int | None:
        node = self._compose()
        if node is None:
            return None
        best = node.start_mark.line + 1
        for key in loc:
            nxt = None
            if isinstance(node, yaml.MappingNode) and isinstance(key, str):
                for k, v in node.value:
                    if getattr(k, "value", None) == key:
                        best = k.start_mark.line + 1
                        nxt = v
                        break
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(key, int)
                and 0 <= key < len(node.value)
            ):
                nxt = node.value[key]
                best = nxt.start_mark.line + 1
            if nxt is None:
                break
            node = nxt
        return best

    def line_of_named(self, path: Sequence[tuple[str, str | None]]) -> int | None:
        """Line of an object addressed by (list key, item name) steps, e.g.
        [("datasets", "orders"), ("fields", "amount")]."""
        node = self._compose()
        if node is None:
            return None
        # enter the first semantic model
        node = _map_get(node, "semantic_model")
        if isinstance(node, yaml.SequenceNode) and node.value:
            node = node.value[0]
        best = None
        for key, name in path:
            seq = _map_get(node, key)
            if seq is None:
                return best
            if name is None:
                node = seq
                best = seq.start_mark.line + 1
                continue
            found = None
            if isinstance(seq, yaml.SequenceNode):
                for item in seq.value:
                    nm = _map_get(item, "name")
                    if nm is not None and getattr(nm, "value", None) == name:
                        found = item
                        break
            if found is None:
                return best
            node = found
            best = found.start_mark.line + 1
        return best


def _map_get(node: Any, key: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                return v
    return None
