"""`dosi import cube --view NAME`: one Cube view as the model.

A view exposes members of the cubes along its join paths, under its own names (`prefix`
gives `<cube>_<member>`, `alias` renames one member). The model keeps the datasets on those
paths and the relationships between them; the view's measures become the metrics, named as
the view names them, and the dimensions it does not include stay queryable but are no longer
recommended as dimensions (D-DIM `is_dimension: false`). Join paths are not pinned: the
engine joins along the model's relationships, so a view that picks one of two paths between
the same cubes is a warning.
"""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp

from dosi.errors import closest
from dosi.importers.cube_convert import CubeConverter, hide_dimension
from dosi.importers.cube_project import members
from dosi.importers.sql_refs import parse, render


def _entries(conv: CubeConverter, name: str, seen: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    view = conv.project.views[name]
    out: list[dict[str, Any]] = []
    parent = view.get("extends")
    parent = parent.strip("{}$ ") if isinstance(parent, str) else None
    if parent in conv.project.views and parent not in seen:
        out += _entries(conv, parent, (*seen, name))
    for entry in view.get("cubes") or []:
        if isinstance(entry, dict) and isinstance(entry.get("join_path"), str):
            out.append(entry)
    return out


def _included(conv: CubeConverter, cube: str, entry: dict[str, Any]) -> dict[str, str]:
    """Cube member -> its name in the view."""
    ds = conv.datasets[cube]
    every = [m["name"] for m in ds.spec.measures] + [d["name"] for d in ds.spec.dimensions]
    every += [s["name"] for s in ds.spec.segments]
    raw = entry.get("includes", "*")
    chosen: dict[str, str] = {}
    if raw == "*" or raw == ["*"]:
        chosen = {m: m for m in every}
    else:
        for item in raw if isinstance(raw, list) else [raw]:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                chosen[item["name"]] = str(item.get("alias") or item["name"])
            elif isinstance(item, str):
                chosen[item] = item
    for ex in entry.get("excludes") or []:
        chosen.pop(str(ex), None)
    if entry.get("prefix"):
        prefix = str(entry.get("alias") or cube)
        chosen = {m: (v if v != m else f"{prefix}_{m}") for m, v in chosen.items()}
    for m in list(chosen):
        if m not in every:
            near = closest(m, every)
            conv.notes.warn(
                "cube_view_unknown_member",
                f"view member {cube}.{m} does not exist; skipped",
                path=f"{cube}.{m}",
                hint=f"did you mean {', '.join(near)}?" if near else None,
            )
            chosen.pop(m)
    return chosen


def apply_view(
    conv: CubeConverter, view: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(datasets, relationships, metrics) of the model restricted to `view`."""
    if view not in conv.project.views:
        raise KeyError(view)
    used: list[str] = []
    exposed: dict[tuple[str, str], str] = {}
    for entry in _entries(conv, view):
        path = entry["join_path"].split(".")
        missing = [c for c in path if c not in conv.datasets]
        if missing:
            conv.notes.warn(
                "cube_view_path_unknown",
                f"view {view}: join path {entry['join_path']} reads {', '.join(missing)}, which "
                "is not imported; skipped",
                path=view,
            )
            continue
        used += [c for c in path if c not in used]
        for member, alias in _included(conv, path[-1], entry).items():
            exposed[(path[-1], member)] = alias
    for kind in ("measures", "dimensions"):
        for m in members(conv.project.views[view].get(kind)):
            conv.notes.warn(
                "cube_view_member_not_carried",
                f"view {view}: member {m['name']} defined on the view itself is not carried",
                path=f"{view}.{m['name']}",
                hint="define it on a cube and include it",
            )
    renames: dict[str, str] = {}
    for metric_name, (cube, member) in conv.metric_member.items():
        alias = exposed.get((cube, member))
        if alias is not None:
            renames[metric_name] = alias
    by_name = {m["name"]: m for m in conv.metrics}
    keep: list[str] = [n for n in by_name if n in renames]
    for name in keep:  # grows: the metrics a kept one is staged on stay, under their names
        keep += [d for d in metric_dependencies(by_name[name]) if d in by_name and d not in keep]
    metrics = [
        _renamed({**m, "name": renames.get(m["name"], m["name"])}, renames)
        for m in conv.metrics
        if m["name"] in keep
    ]
    for cube in used:
        ds = conv.datasets[cube]
        for dim in ds.spec.dimensions:
            fname = ds.field_of.get(dim["name"])
            if fname is None:
                continue
            fobj = next(f for f in ds.fields if f["name"] == fname)
            if (cube, dim["name"]) not in exposed:
                hide_dimension(fobj)
            elif exposed[(cube, dim["name"])] != dim["name"]:
                syn = fobj.setdefault("ai_context", {"synonyms": []}).setdefault("synonyms", [])
                syn.append(f"{view}.{exposed[(cube, dim['name'])]}")
    names = {conv.datasets[c].name for c in used}
    rels = [r for r in conv.relationships if r["from"] in names and r["to"] in names]
    pairs = [(r["from"], r["to"]) for r in rels]
    for pair in sorted({p for p in pairs if pairs.count(p) > 1}):
        conv.notes.warn(
            "cube_view_join_path",
            f"view {view}: {pair[0]} reaches {pair[1]} by more than one relationship; the view's "
            "join path is not pinned",
            path=view,
        )
    datasets = conv.dataset_objs(set(used))
    return datasets, rels, metrics


def _payload(metric: dict[str, Any]) -> dict[str, Any]:
    for e in metric.get("custom_extensions") or []:
        if str(e.get("vendor_name", "")).upper() == "DATUS":
            data = json.loads(e.get("data") or "{}")
            return data if isinstance(data, dict) else {}
    return {}


def metric_dependencies(metric: dict[str, Any]) -> list[str]:
    """The metrics a metric's DATUS payload names: compose members, lod bases, window bases."""
    payload = _payload(metric)
    out: list[str] = []
    derive = payload.get("derive") or {}
    if derive.get("type") == "compose" and isinstance(derive.get("expr"), str):
        out += [c.name for c in parse(derive["expr"], None).find_all(exp.Column)]
    if derive.get("type") == "lod" and isinstance(derive.get("expr"), str):
        inner = derive["expr"].split("(", 2)[-1]
        out.append(inner.split(",")[0].strip(" )"))
    window = payload.get("window") or {}
    if isinstance(window, dict) and isinstance(window.get("base"), str):
        out.append(window["base"])
    return out


def _renamed(metric: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """A compose metric's expression with the renamed metrics' new names."""
    exts = metric.get("custom_extensions") or []
    out = []
    for e in exts:
        data = e.get("data", "")
        if '"compose"' in data and renames:
            payload = json.loads(data)
            derive = payload.get("derive") or {}
            tree = parse(derive["expr"], None)
            tree = tree.transform(
                lambda n: (
                    exp.column(renames[n.name])
                    if isinstance(n, exp.Column) and n.name in renames
                    else n
                )
            )
            derive["expr"] = render(tree)
            e = {**e, "data": json.dumps(payload)}
        out.append(e)
    if out:
        metric["custom_extensions"] = out
    return metric
