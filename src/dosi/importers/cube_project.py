"""Reading a Cube project: the YAML model files, their cubes and views, and `extends`.

A project is a folder (Cube's `model/` or `schema/`, searched recursively for `.yml` /
`.yaml`) or one file. JavaScript models and Jinja-templated YAML cannot be read without
running Cube itself; each such file is a structured warning naming it. Member lists are read
in both the list form (`- name: count`) and the older mapping form (`count: {...}`), and
camelCase keys (`primaryKey`, `rollingWindow`) as their snake_case twins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dosi.importers.common import Notes

MEMBER_KINDS = ("dimensions", "measures", "segments", "joins", "pre_aggregations", "hierarchies")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_NAMED = frozenset({*MEMBER_KINDS, "cubes", "views"})
_JINJA = re.compile(r"\{%|\{\{")


def snake(key: str) -> str:
    return _CAMEL.sub("_", key).lower()


def normalize(value: Any, names: bool = False) -> Any:
    """camelCase keys as snake_case, recursively (Cube accepts both spellings); the keys of a
    member mapping (`measures: {totalAmount: ...}`) are names and stay as written."""
    if isinstance(value, dict):
        return {
            (str(k) if names else snake(str(k))): normalize(
                v, not names and snake(str(k)) in _NAMED
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def members(raw: Any) -> list[dict[str, Any]]:
    """A member list in list form, or the mapping form `{name: {...}}`, as a list."""
    if isinstance(raw, list):
        return [m for m in raw if isinstance(m, dict) and isinstance(m.get("name"), str)]
    if isinstance(raw, dict):
        return [{"name": str(k), **(v if isinstance(v, dict) else {})} for k, v in raw.items()]
    return []


@dataclass
class CubeSpec:
    """One cube after `extends`: its members by kind, in declaration order."""

    name: str
    raw: dict[str, Any]
    file: str
    dimensions: list[dict[str, Any]] = field(default_factory=list)
    measures: list[dict[str, Any]] = field(default_factory=list)
    segments: list[dict[str, Any]] = field(default_factory=list)
    joins: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CubeProject:
    cubes: dict[str, CubeSpec]
    views: dict[str, dict[str, Any]]
    name: str


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    for sub in ("model", "schema"):
        if (path / sub).is_dir():
            path = path / sub
            break
    return sorted(p for p in path.rglob("*") if p.is_file())


def _merge(base: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`extends`: the parent's members, each overridden by a child member of the same name."""
    names = {m["name"] for m in own}
    return [m for m in base if m["name"] not in names] + own


def read_project(path: Path, notes: Notes) -> CubeProject:
    """Every cube and view of the project (files that cannot be read are warnings)."""
    raw_cubes: dict[str, tuple[dict[str, Any], str]] = {}
    views: dict[str, dict[str, Any]] = {}
    for f in _files(path):
        rel = str(f.relative_to(path)) if path.is_dir() else f.name
        if f.suffix in (".js", ".ts"):
            notes.warn(
                "cube_js_model_skipped",
                f"{rel}: a JavaScript model cannot be read without running Cube",
                path=rel,
                hint="convert it to YAML (Cube reads both), then import again",
            )
            continue
        if f.suffix not in (".yml", ".yaml"):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if _JINJA.search(text):
            notes.warn(
                "cube_jinja_skipped",
                f"{rel}: Jinja templates are rendered by Cube at run time; this file was skipped",
                path=rel,
                hint="render the template (or import Cube's compiled YAML) and import again",
            )
            continue
        try:
            data = normalize(yaml.safe_load(text))
        except yaml.YAMLError as exc:
            notes.warn(
                "cube_file_unreadable", f"{rel}: not valid YAML ({str(exc)[:200]})", path=rel
            )
            continue
        if not isinstance(data, dict):
            continue
        for cube in members(data.get("cubes")):
            raw_cubes[cube["name"]] = (cube, rel)
        for view in members(data.get("views")):
            views[view["name"]] = view
    cubes: dict[str, CubeSpec] = {}

    def build(name: str, seen: tuple[str, ...] = ()) -> CubeSpec | None:
        if name in cubes:
            return cubes[name]
        if name not in raw_cubes or name in seen:
            return None
        raw, rel = raw_cubes[name]
        spec = CubeSpec(name, raw, rel)
        for kind in ("dimensions", "measures", "segments", "joins"):
            setattr(spec, kind, members(raw.get(kind)))
        parent_name = raw.get("extends")
        if isinstance(parent_name, str):
            parent = build(parent_name.strip("{}$ "), (*seen, name))
            if parent is None:
                notes.warn(
                    "cube_extends_unknown",
                    f"cube {name} extends {parent_name}, which is not in the project",
                    path=name,
                )
            else:
                for kind in ("dimensions", "measures", "segments", "joins"):
                    setattr(spec, kind, _merge(getattr(parent, kind), getattr(spec, kind)))
                if "sql" not in raw and "sql_table" not in raw:
                    spec.raw = {
                        **raw,
                        **{k: parent.raw[k] for k in ("sql", "sql_table") if k in parent.raw},
                    }
        cubes[name] = spec
        return spec

    for name in raw_cubes:
        build(name)
    project = path.name if path.is_dir() else path.stem
    return CubeProject(cubes, views, project)
