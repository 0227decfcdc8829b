"""Reading a LookML project with `lkml`: views (with `extends` and `+refinements`) and
explores.

A project is a folder (every `.lkml` file under it, dashboards excepted) or one file. Each
view keeps its dimensions, dimension groups and measures by name; `extends: [base]` starts
from the base view's members and overrides them by name, and a refinement `view: +name`
layers its members over the view it refines (in file order, as Looker applies them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lkml

from dosi.importers.common import Notes

MEMBER_KINDS = ("dimensions", "dimension_groups", "measures")


@dataclass
class LookmlView:
    name: str
    raw: dict[str, Any]
    file: str
    dimensions: list[dict[str, Any]] = field(default_factory=list)
    dimension_groups: list[dict[str, Any]] = field(default_factory=list)
    measures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LookmlProject:
    views: dict[str, LookmlView]
    explores: list[dict[str, Any]]
    name: str


def _merge(base: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = {m["name"]: m for m in base}
    for m in own:
        out[m["name"]] = {**out.get(m["name"], {}), **m}
    return list(out.values())


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.lkml") if p.is_file())


def read_project(path: Path, notes: Notes) -> LookmlProject:
    raw_views: dict[str, tuple[dict[str, Any], str]] = {}
    refinements: list[tuple[dict[str, Any], str]] = []
    explores: dict[str, dict[str, Any]] = {}
    for f in _files(path):
        rel = str(f.relative_to(path)) if path.is_dir() else f.name
        try:
            data = lkml.load(f.read_text(encoding="utf-8", errors="replace"))
        except Exception as exc:  # lkml raises its own SyntaxError subclasses
            notes.warn(
                "lookml_file_unreadable",
                f"not parseable LookML ({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})",
                path=rel,
            )
            continue
        for view in data.get("views", []) or []:
            name = str(view.get("name", ""))
            if name.startswith("+"):
                refinements.append(({**view, "name": name[1:]}, rel))
            elif name:
                raw_views[name] = (view, rel)
        for explore in data.get("explores", []) or []:
            name = str(explore.get("name", ""))
            if name.startswith("+") and name[1:] in explores:
                base = explores[name[1:]]
                explores[name[1:]] = {
                    **base,
                    **explore,
                    "name": name[1:],
                    "joins": _merge(base.get("joins") or [], explore.get("joins") or []),
                }
            elif name:
                explores[name] = explore
    views: dict[str, LookmlView] = {}

    def build(name: str, seen: tuple[str, ...] = ()) -> LookmlView | None:
        if name in views:
            return views[name]
        if name not in raw_views or name in seen:
            return None
        raw, rel = raw_views[name]
        view = LookmlView(name, raw, rel)
        for kind in MEMBER_KINDS:
            setattr(view, kind, list(raw.get(kind) or []))
        parents = [p for group in raw.get("extends__all") or [] for p in group]
        for parent_name in parents:
            parent = build(str(parent_name), (*seen, name))
            if parent is None:
                notes.warn(
                    "lookml_extends_unknown",
                    f"view {name} extends {parent_name}, which is not in the project",
                    path=name,
                )
                continue
            for kind in MEMBER_KINDS:
                setattr(view, kind, _merge(getattr(parent, kind), getattr(view, kind)))
            for key in ("sql_table_name", "derived_table"):
                if key not in view.raw and key in parent.raw:
                    view.raw = {**view.raw, key: parent.raw[key]}
        views[name] = view
        return view

    for name in raw_views:
        build(name)
    for ref, rel in refinements:
        view = views.get(ref["name"])
        if view is None:
            notes.warn(
                "lookml_refinement_unknown",
                f"refines view {ref['name']}, which is not defined",
                path=rel,
            )
            continue
        for kind in MEMBER_KINDS:
            setattr(view, kind, _merge(getattr(view, kind), list(ref.get(kind) or [])))
        view.raw = {**view.raw, **{k: v for k, v in ref.items() if k not in MEMBER_KINDS}}
    project = path.name if path.is_dir() else path.stem.split(".")[0]
    return LookmlProject(views, list(explores.values()), project)
