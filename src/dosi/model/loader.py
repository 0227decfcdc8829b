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

from dosi.errors import Diagnostic, ModelError, at_stage, bounded
from dosi.model.schema import OSI_DIALECTS, DocumentSpec
from dosi.model.versions import CURRENT, V0_1_1, document_version, upgrade_0_1_1
from dosi.model.yaml_build import Fallback, build_document

try:  # the C loader is several times faster on large models
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


#: Bounds on a model document (docs/limits.md): text size, nesting depth, YAML aliases.
MAX_MODEL_CHARS = 16_000_000
MAX_MODEL_DEPTH = 64
MAX_YAML_ALIASES = 10_000
#: What aliases may expand to, in YAML nodes (an anchored block's size times its uses).
MAX_ALIAS_EXPANSION = 1_000_000


def read_model_text(path: str | Path) -> str:
    shown = bounded(str(path), 200)
    try:
        with Path(path).open("rb") as fh:  # bounded: /dev/zero or a huge file cannot exhaust memory
            data = fh.read(4 * MAX_MODEL_CHARS + 1)
    except OSError as exc:
        raise ModelError(
            [Diagnostic("model_not_found", f"cannot read model file {shown}: {exc.strerror}")]
        ) from None
    except ValueError:  # a NUL byte in the path
        raise ModelError(
            [Diagnostic("model_not_found", f"cannot read model file {shown}: not a valid path")]
        ) from None
    if len(data) > 4 * MAX_MODEL_CHARS:
        raise ModelError([_too_large(len(data))])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(
            [
                Diagnostic(
                    "invalid_yaml",
                    f"model file {shown} is not UTF-8 text (byte {exc.start})",
                    hint="save the model as UTF-8",
                    stage="io",  # the reference's stage for an undecodable file
                )
            ]
        ) from None


def _too_large(size: int) -> Diagnostic:
    return Diagnostic(
        "invalid_yaml",
        f"the model is {size} characters long; the limit is {MAX_MODEL_CHARS}",
    )


def _invalid(message: str, line: int | None = None) -> ModelError:
    return ModelError([Diagnostic("invalid_yaml", message, line=line)])


def parse_document(text: str, lines: LineIndex | None = None) -> Any:
    """YAML is a superset of JSON, but JSON goes through the faster json module.

    `lines`: a YAML document's node tree is handed to that index, so the lines of diagnostics
    come from the one parse instead of a second one (docs/performance.md, "Model load").

    Bounded before and after parsing: the text size, the number of YAML aliases (an alias bomb
    is rejected before anything expands it) and the nesting depth of the result."""
    if not isinstance(text, str):
        raise _invalid("the model text must be a string")
    if len(text) > MAX_MODEL_CHARS:
        raise ModelError([_too_large(len(text))])
    stripped = text.lstrip()
    data: Any = None
    parsed = False
    if stripped.startswith("{"):
        try:
            data, parsed = json.loads(text), True
        except json.JSONDecodeError:
            pass  # fall through: YAML flow mappings also start with "{"
        except (ValueError, RecursionError):  # huge numbers, deep nesting
            raise _invalid(
                "the model JSON holds an out-of-range number or nests too deeply"
            ) from None
    if not parsed:
        if "*" in text and "&" in text:
            _check_aliases(text)
        try:
            data = _load_yaml(text, lines)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise _invalid(
                f"the model is not valid YAML or JSON: {str(exc)[:500]}", line=line
            ) from None
        except (ValueError, RecursionError, OverflowError):
            raise _invalid(
                "the model YAML holds an out-of-range value or nests too deeply"
            ) from None
    _check_depth(data)
    return data


def _load_yaml(text: str, lines: LineIndex | None) -> Any:
    """`yaml.load` in its two steps (compose the node tree, construct the data), keeping the
    node tree for `lines`; the data of a plain document is built without PyYAML's constructor."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if lines is not None:
            lines.adopt(root)
        if root is None:
            return None
        try:
            return build_document(loader, root)  # plain documents (dosi.model.yaml_build)
        except Fallback:
            return loader.construct_document(root)
    finally:
        loader.dispose()


def _check_aliases(text: str) -> None:
    """Bound YAML aliases from the event stream, before anything expands them: at most
    MAX_YAML_ALIASES, expanding to at most MAX_ALIAS_EXPANSION nodes in all, and no alias of a
    collection that itself holds an alias (the nesting that makes an alias bomb grow
    exponentially). Generated YAML (PyYAML's dump of shared objects) uses many flat aliases;
    those load."""
    aliases = 0
    expanded = 0
    events = 0
    open_anchors: list[tuple[str | None, int]] = []  # each open collection: anchor, first event
    holds_alias: set[str] = set()
    size: dict[str, int] = {}  # nodes of each closed anchored block
    try:
        for event in yaml.parse(text, Loader=_Loader):
            events += 1
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                open_anchors.append((event.anchor, events))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                if open_anchors:
                    anchor, first = open_anchors.pop()
                    if anchor is not None:
                        size[anchor] = events - first
            elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                size[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                expanded += size.get(str(event.anchor), 1)
                line = event.start_mark.line + 1 if event.start_mark else None
                if aliases > MAX_YAML_ALIASES or expanded > MAX_ALIAS_EXPANSION:
                    raise _invalid(
                        f"the model's YAML aliases exceed the budget ({MAX_YAML_ALIASES:,} "
                        f"aliases expanding to {MAX_ALIAS_EXPANSION:,} nodes)",
                        line=line,
                    )
                if event.anchor in holds_alias:
                    raise _invalid(
                        f"YAML alias *{str(event.anchor)[:40]} refers to a block that itself "
                        "holds aliases; nested aliases are not allowed",
                        line=line,
                    )
                holds_alias.update(a for a, _ in open_anchors if a is not None)
    except yaml.YAMLError:
        return  # yaml.load reports it with its line


def _check_depth(data: Any) -> None:
    """Reject a document nested deeper than MAX_MODEL_DEPTH (walked without recursion);
    shared (aliased) containers are visited once."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = list(node.values())
        elif isinstance(node, list):
            children = node
        else:
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if depth > MAX_MODEL_DEPTH:
            raise _invalid(f"the model nests deeper than {MAX_MODEL_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)


@dataclass(frozen=True)
class LoadedDocument:
    """A validated document, the Ossie version it was written in, and load warnings."""

    spec: DocumentSpec
    version: str = CURRENT
    warnings: list[Diagnostic] = field(default_factory=list)
    lines: LineIndex | None = None  # the document's YAML lines, for later diagnostics


def read_document(text: str) -> LoadedDocument:
    """Parse and validate; a 0.1.1 document is checked against the 0.1.1 schema's own rules
    and upgraded in memory to the current model (one `model_version_upgraded` warning)."""
    lines = LineIndex(text)
    try:
        data = parse_document(text, lines)
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
    issues: list[Diagnostic] = []
    version = CURRENT
    warnings: list[Diagnostic] = []
    if is_flat(data):
        data = {
            "version": data.get("version"),
            "semantic_model": [{k: v for k, v in data.items() if k != "version"}],
        }
        warnings.append(
            Diagnostic(
                "model_document_wrapped",
                "the document holds one semantic model's keys (name, datasets, ...) at the top "
                "level, as the Ossie DuckDB converter writes it; read as `semantic_model: "
                "[{...}]`",
                "warning",
                path="semantic_model",
                hint="nest the model under `semantic_model:` (a list) to silence this",
            )
        )
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
    warnings += _outside_dialects(data, lines)
    return LoadedDocument(spec, version, warnings, lines)


def is_flat(data: Any) -> bool:
    """A single semantic model written at the top level, beside `version` (no
    `semantic_model` list): the shape the Ossie DuckDB converter emits."""
    return isinstance(data, dict) and "semantic_model" not in data and "datasets" in data


def _dialect_locs(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(location, name) of every expression dialect entry of fields and metrics."""
    out: list[tuple[tuple[Any, ...], str]] = []
    for i, sm in enumerate(data.get("semantic_model") or []):
        holders: list[tuple[tuple[Any, ...], Any]] = []
        for j, ds in enumerate(sm.get("datasets") or []):
            for k, f in enumerate(ds.get("fields") or []):
                holders.append((("semantic_model", i, "datasets", j, "fields", k), f))
        for j, m in enumerate(sm.get("metrics") or []):
            holders.append((("semantic_model", i, "metrics", j), m))
        for loc, obj in holders:
            for n, entry in enumerate(obj["expression"]["dialects"]):
                out.append(((*loc, "expression", "dialects", n, "dialect"), entry["dialect"]))
    return out


def _outside_dialects(data: Any, lines: LineIndex) -> list[Diagnostic]:
    """One `unknown_expression_dialect` warning per dialect name outside the schema's
    enumeration (at its first entry, with how many entries use it): the model loads, and the
    compiler uses such an entry when it matches the execution dialect and it can read it."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for loc, name in _dialect_locs(data):
        if name not in OSI_DIALECTS:
            found.setdefault(name, []).append(loc)
    out = []
    for name, locs in found.items():
        more = f" (and {len(locs) - 1} more entries)" if len(locs) > 1 else ""
        out.append(
            Diagnostic(
                "unknown_expression_dialect",
                f"expression dialect `{name}` is not one of the Ossie schema's "
                f"dialects ({', '.join(OSI_DIALECTS)}){more}; the model loads, and such an "
                "entry is used when it matches the SQL dialect the model runs on (ANSI_SQL "
                "otherwise)",
                "warning",
                path=object_path(data, locs[0]),
                line=lines.line_of(locs[0]),
                hint="add an ANSI_SQL entry to run the expression on every engine, or keep the "
                "dialect-specific entry for the engine it names",
            )
        )
    return out


def _schema_issue(err: Any, data: Any, lines: LineIndex) -> Diagnostic:
    loc: Sequence[Any] = err["loc"]
    path = object_path(data, loc)
    kind = err["type"]
    field = loc[-1] if loc else ""
    if list(loc) == ["version"]:
        code, msg = (
            "unsupported_version",
            (
                f"model version {bounded(data.get('version'))} is not supported; this engine "
                f"reads Ossie {CURRENT} and {V0_1_1}"
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
    if field == "expression" and isinstance(err.get("input"), (str, int, float)):
        return _plain_expression(err["input"], path, lines.line_of(loc))
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


def _plain_expression(value: Any, path: str, line: int | None) -> Diagnostic:
    """`expression: amount` (a plain value): Ossie writes one expression per dialect, so the
    fix is the same text inside the dialects form, shown with the user's own SQL."""
    quoted = json.dumps(str(value)) if isinstance(value, str) else str(value)
    return Diagnostic(
        "invalid_model_value",
        f"`expression` is the plain value {bounded(value, 60)}; Ossie writes an expression per "
        "dialect, as a mapping with a `dialects` list",
        path=path,
        line=line,
        hint=f"write it as expression: {{dialects: [{{dialect: ANSI_SQL, expression: {quoted}}}]}}",
    )


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
        # per sequence node: item name -> the first item of that name (built on first use, so
        # a model's thousand lookups cost one pass over each list, not one per lookup)
        self._by_name: dict[int, dict[str, Any]] = {}

    def adopt(self, root: Any) -> None:
        """The node tree of the text, composed by the loader's own parse."""
        self._root = root
        self._composed = True

    def _compose(self) -> Any:
        if not self._composed:
            self._composed = True
            try:
                self._root = yaml.compose(self._text, Loader=_Loader)
            except yaml.YAMLError:
                self._root = None
        return self._root

    def _flat(self, node: Any) -> bool:
        return (
            isinstance(node, yaml.MappingNode)
            and _map_get(node, "semantic_model") is None
            and _map_get(node, "datasets") is not None
        )

    def line_of(self, loc: Sequence[Any]) -> int | None:
        node = self._compose()
        if node is None:
            return None
        if self._flat(node) and len(loc) >= 2 and list(loc[:2]) == ["semantic_model", 0]:
            loc = loc[2:]  # a flat document: its root is the semantic model
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
        # enter the first semantic model (a flat document's root is the model)
        if not self._flat(node):
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
            found = self._named(seq).get(name)
            if found is None:
                return best
            node = found
            best = found.start_mark.line + 1
        return best

    def _named(self, seq: Any) -> dict[str, Any]:
        """The items of a YAML sequence by their `name` scalar, first occurrence winning."""
        if not isinstance(seq, yaml.SequenceNode):
            return {}
        index = self._by_name.get(id(seq))
        if index is None:
            index = {}
            for item in seq.value:
                nm = _map_get(item, "name")
                if isinstance(nm, yaml.ScalarNode) and isinstance(nm.value, str):
                    index.setdefault(nm.value, item)
            self._by_name[id(seq)] = index
        return index


def _map_get(node: Any, key: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                return v
    return None
