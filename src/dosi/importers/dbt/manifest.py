"""Read a dbt semantic layer into dbt's own objects (`dbt-semantic-interfaces`).

Three inputs: a `semantic_manifest.json` (what `dbt parse` writes to `target/`), a dbt project
folder (its `semantic_models:` / `metrics:` / `saved_queries:` YAML, with `model: ref('x')`
naming the table), or a folder of MetricFlow-style documents (`semantic_model:` / `metric:`
per YAML document, as MetricFlow's own test manifests are written). Whatever the input, the
result is a `PydanticSemanticManifest` after dbt's standard transformations (measure proxies,
agg-time defaults), so the converter sees one shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from string import Template
from typing import Any

import yaml
from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest
from dbt_semantic_interfaces.parsing.dir_to_model import (
    parse_yaml_files_to_validation_ready_semantic_manifest,
)
from dbt_semantic_interfaces.parsing.objects import YamlConfigFile
from dbt_semantic_interfaces.transformations.pydantic_rule_set import (
    PydanticSemanticManifestTransformRuleSet,
)
from dbt_semantic_interfaces.transformations.semantic_manifest_transformer import (
    PydanticSemanticManifestTransformer,
)

from dosi.errors import OsiError

_DSI_KEYS = frozenset({"semantic_model", "metric", "saved_query", "project_configuration"})
_DBT_KEYS = ("semantic_models", "metrics", "saved_queries")
_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?\s*\)\s*$""")
#: dbt-only keys of a semantic model / metric entry that dbt-semantic-interfaces does not read
_DBT_ONLY = frozenset({"model", "meta", "group", "tags"})


class DbtInputError(OsiError, ValueError):
    """The input is not a dbt semantic layer dosi can read (code `invalid_dbt_project`)."""

    kind = "import_error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__("invalid_dbt_project", message, hint=hint)


def load_manifest(path: str | Path, schema: str | None = None) -> PydanticSemanticManifest:
    """The semantic manifest at `path` (a file or a folder). `schema` is the warehouse schema
    of the tables: it fills `$source_schema` placeholders and the schema of `ref()` models."""
    p = Path(path)
    if not p.exists():
        raise DbtInputError(
            f"no such file or folder: {p}",
            hint="pass a dbt project folder or a semantic_manifest.json",
        )
    if p.is_file() and p.suffix == ".json":
        return _from_json(p, schema)
    if p.is_dir() and (p / "target" / "semantic_manifest.json").is_file():
        return _from_json(p / "target" / "semantic_manifest.json", schema)
    files = [p] if p.is_file() else _yaml_files(p)
    return _from_yaml(files, schema)


def _from_json(path: Path, schema: str | None) -> PydanticSemanticManifest:
    try:
        text = path.read_text(encoding="utf-8")
        manifest = PydanticSemanticManifest.parse_raw(text)
    except (OSError, UnicodeDecodeError) as err:
        raise DbtInputError(f"cannot read {path}: {err}") from None
    except Exception as err:  # pydantic's validation error: the file is not a manifest
        raise DbtInputError(
            f"{path} is not a dbt semantic manifest: {_first_line(err)}",
            hint="pass the semantic_manifest.json that `dbt parse` writes to target/",
        ) from None
    for sm in manifest.semantic_models:
        # dbt writes `"database"."schema"."alias"`; the warehouse connection already names the
        # database, so the table is read as schema.alias (or in the schema passed in)
        rel = sm.node_relation
        rel.schema_name = schema or rel.schema_name
        rel.relation_name = f"{rel.schema_name}.{rel.alias}"
    for ts in manifest.project_configuration.time_spines or ():
        rel = ts.node_relation  # the calendar table reads the time spine the same way
        rel.schema_name = schema or rel.schema_name
        rel.relation_name = f"{rel.schema_name}.{rel.alias}"
    return manifest


def _yaml_files(folder: Path) -> list[Path]:
    skip = {"target", "dbt_packages", "logs", ".venv", "node_modules"}
    out = []
    for f in sorted(folder.rglob("*")):
        parts = f.relative_to(folder).parts
        if f.suffix in (".yaml", ".yml") and f.is_file() and not skip.intersection(parts):
            out.append(f)
    return out


def _from_yaml(files: list[Path], schema: str | None) -> PydanticSemanticManifest:
    mapping = {"source_schema": schema or "main", "system_schema": schema or "main"}
    configs: list[YamlConfigFile] = []
    has_project = False
    spines: list[dict[str, Any]] = []
    for f in files:
        try:
            raw = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise DbtInputError(f"cannot read {f}: {err}") from None
        text = Template(raw).safe_substitute(mapping)
        try:
            docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
        except yaml.YAMLError as err:
            raise DbtInputError(f"{f} is not YAML: {_first_line(err)}") from None
        dsi_docs = [d for d in docs if len(d) == 1 and next(iter(d)) in _DSI_KEYS]
        if dsi_docs and len(dsi_docs) == len(docs):
            has_project = has_project or any("project_configuration" in d for d in docs)
            configs.append(YamlConfigFile(filepath=str(f), contents=text))
            continue
        spines += list(_time_spines(docs, schema))
        converted = list(_dbt_documents(docs, schema, f))
        has_project = has_project or any("project_configuration" in d for d in converted)
        if converted:
            body = yaml.safe_dump_all(converted, sort_keys=False)
            configs.append(YamlConfigFile(filepath=str(f), contents=body))
    if not configs:
        raise DbtInputError(
            f"found no dbt semantic models or metrics in {len(files)} YAML file(s)",
            hint="pass the project folder holding `semantic_models:` YAML, or its "
            "target/semantic_manifest.json",
        )
    if not has_project:
        project = {"time_spine_table_configurations": [], "time_spines": spines}
        body = yaml.safe_dump({"project_configuration": project}, sort_keys=False)
        configs.append(YamlConfigFile(filepath="<dosi default>", contents=body))
    try:
        result = parse_yaml_files_to_validation_ready_semantic_manifest(
            configs, apply_transformations=False, raise_issues_as_exceptions=False
        )
    except Exception as err:  # dbt's parser raises its own exception types
        raise DbtInputError(f"dbt could not parse the project: {_first_line(err)}") from None
    blocking = [i for i in result.issues.all_issues if _is_error(i)]
    if blocking:
        raise DbtInputError(
            f"dbt reports {len(blocking)} problem(s); the first: {_first_line(blocking[0])}"
        )
    try:
        rules = PydanticSemanticManifestTransformRuleSet().all_rules
        return PydanticSemanticManifestTransformer.transform(result.semantic_manifest, rules)
    except Exception as err:
        raise DbtInputError(f"dbt could not complete the manifest: {_first_line(err)}") from None


def _dbt_documents(
    docs: list[dict[str, Any]], schema: str | None, where: Path
) -> Iterator[dict[str, Any]]:
    """dbt project YAML (`semantic_models:` lists) as MetricFlow documents."""
    for doc in docs:
        project = doc.get("project_configuration")  # the time spines (dosi export dbt)
        if isinstance(project, dict):
            yield {"project_configuration": project}
        for key in _DBT_KEYS:
            entries = doc.get(key)
            if not isinstance(entries, list):
                continue
            for entry in entries:
                if not isinstance(entry, dict):
                    continue
                if key == "semantic_models":
                    yield {"semantic_model": _semantic_model(entry, schema, where)}
                elif key == "metrics":
                    yield {"metric": _metric(entry)}
                else:
                    yield {"saved_query": {k: v for k, v in entry.items() if k != "config"}}


def _time_spines(docs: list[dict[str, Any]], schema: str | None) -> Iterator[dict[str, Any]]:
    """dbt-core `models:` entries with a `time_spine` block as MetricFlow time spines (the
    day spine and its custom granularities, which dosi imports as its calendar table)."""
    for doc in docs:
        for entry in doc.get("models") or ():
            spine = entry.get("time_spine") if isinstance(entry, dict) else None
            if not isinstance(spine, dict) or not spine.get("standard_granularity_column"):
                continue
            col = str(spine["standard_granularity_column"])
            grain = next(
                (
                    c.get("granularity")
                    for c in entry.get("columns") or ()
                    if isinstance(c, dict) and c.get("name") == col
                ),
                "day",
            )
            yield {
                "node_relation": {"alias": entry["name"], "schema_name": schema or "main"},
                "primary_column": {"name": col, "time_granularity": grain or "day"},
                "custom_granularities": [
                    {k: v for k, v in cg.items() if k in ("name", "column_name")}
                    for cg in spine.get("custom_granularities") or ()
                    if isinstance(cg, dict)
                ],
            }


def _metric(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A dbt metric entry; dbt-core's shorthands (an input metric as a bare name) expanded
    to the objects dbt-semantic-interfaces reads."""
    out = {k: v for k, v in entry.items() if k not in _DBT_ONLY and k != "config"}
    tp = out.get("type_params")
    if isinstance(tp, dict):
        tp = dict(tp)
        for key in ("numerator", "denominator"):
            if isinstance(tp.get(key), str):
                tp[key] = {"name": tp[key]}
        if isinstance(tp.get("metrics"), list):
            tp["metrics"] = [{"name": m} if isinstance(m, str) else m for m in tp["metrics"]]
        out["type_params"] = tp
    return out


def _semantic_model(entry: Mapping[str, Any], schema: str | None, where: Path) -> dict[str, Any]:
    out = {k: v for k, v in entry.items() if k not in _DBT_ONLY and k != "config"}
    model = entry.get("model")
    m = _REF.match(str(model or ""))
    if m is None:
        raise DbtInputError(
            f"semantic model `{entry.get('name')}` in {where}: `model` must be ref('name'), "
            f"got {model!r}"
        )
    alias = m.group(2) or m.group(1)
    out["node_relation"] = {"alias": alias, "schema_name": schema or "main"}
    if schema is None:
        out["node_relation"]["relation_name"] = alias
    return out


def _is_error(issue: object) -> bool:
    level = getattr(issue, "level", None)
    return str(getattr(level, "name", level)).upper() in ("ERROR", "FATAL")


def _first_line(err: object) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__
