"""Explicit join paths: a group-by item's `via` picks one of several many-to-one paths.

A dataset reachable along two relationship paths (a user reached directly, or through the
listing) answers `ambiguous_join_path` unless the query names the path (docs/query.md,
"Choosing a join path"). `via` lists the hops: each a relationship name or the dataset the hop
reaches; the field's own dataset may be left off the end. Only many-to-one paths are
candidates, so naming a path never joins against the arrow (`fan_out_risk` still applies).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dosi.errors import QueryError
from dosi.ir.model import RelationshipIr
from dosi.plan.joins import JoinGraph, route, via_spelling
from dosi.query.resolve import ResolvedDim, ResolvedQuery
from dosi.query.spec import query_to_dict

Path = tuple[RelationshipIr, ...]


def via_targets(dims: Iterable[ResolvedDim], fields: dict[str, str]) -> dict[str, ResolvedDim]:
    """Dataset -> the group-by item that names its path. Two items naming different paths to
    one dataset would join it twice: `conflicting_join_paths`. `fields`: the dataset each
    dim's field is read from in this branch."""
    out: dict[str, ResolvedDim] = {}
    for d in dims:
        if d.via is None or d.field is None:
            continue
        ds = fields[d.spelling]
        prev = out.get(ds)
        if prev is not None and prev.via != d.via:
            raise QueryError(
                "conflicting_join_paths",
                f"group_by `{prev.spelling}` and `{d.spelling}` reach `{ds}` along different "
                "paths; one query joins each dataset once",
                candidates=[prev.spelling, d.spelling],
                hint="query each path separately, or name the same `via` in both items",
            )
        out[ds] = d
    return out


def path_via(graph: JoinGraph, src: str, dst: str, via: Sequence[str], why: str) -> Path:
    """The one many-to-one path from `src` to `dst` whose hops `via` names."""
    if src == dst:
        return ()
    hops = _hops(graph, src, dst, via)
    found = graph.paths(src, dst)
    picked = [p for p in found if _matches(p, hops)]
    if len(picked) == 1:
        return picked[0]
    shown = ", ".join(via) or "(direct)"
    if not picked and not found:
        graph.path(src, dst, why)  # raises fan_out_risk / no_join_path
    raise QueryError(
        "ambiguous_join_path" if picked else "no_join_path",
        f"{why}: "
        + (
            f"`via` [{shown}] names {len(picked)} paths from `{src}` to `{dst}`"
            if picked
            else f"no many-to-one path from `{src}` to `{dst}` goes via [{shown}]"
        ),
        candidates=[route(src, p) for p in found],
        hint="name each hop by its relationship, or the dataset it reaches: "
        + "; ".join(f"via {via_spelling(found, p)}" for p in found),
    )


def retry_with_via(
    graph: JoinGraph, rq: ResolvedQuery, src: str, dst: str, read_on: dict[str, str]
) -> dict[str, Any] | None:
    """The query again with the group-by items read on `dst` naming the first path (the
    `suggested_retry` of `ambiguous_join_path`); None when no group-by item reads `dst`."""
    found = graph.paths(src, dst)
    if len(found) < 2 or dst not in read_on.values():
        return None
    via = via_spelling(found, found[0])
    fixed = query_to_dict(rq.query)
    items = []
    for g, out in zip(rq.query.group_by, fixed["group_by"], strict=True):
        if read_on.get(g.spelling) == dst and g.via is None:
            obj: dict[str, Any] = {"field": g.field, "via": via}
            if g.grain is not None:
                obj["grain"] = g.grain
            out = obj
        items.append(out)
    fixed["group_by"] = items
    return fixed


def _hops(graph: JoinGraph, src: str, dst: str, via: Sequence[str]) -> list[str]:
    known = set(graph.undirected) | {r.name for rs in graph.up.values() for r in rs}
    unknown = [v for v in via if v not in known]
    if unknown:
        raise QueryError(
            "unknown_join_step",
            f"`via` names `{unknown[0]}`, no relationship or related dataset of the model",
            candidates=sorted(known)[:20],
            hint="name each hop by its relationship, or the dataset it reaches",
        )
    hops = list(via)
    while hops and hops[0] == src:
        hops.pop(0)
    into_dst = {r.name for rs in graph.up.values() for r in rs if r.to_dataset == dst}
    if not hops or (hops[-1] != dst and hops[-1] not in into_dst):
        hops.append(dst)
    return hops


def _matches(path: Path, hops: Sequence[str]) -> bool:
    return len(path) == len(hops) and all(
        h in (r.name, r.to_dataset) for r, h in zip(path, hops, strict=True)
    )
