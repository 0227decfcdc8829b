"""The relationship graph of a model: many-to-one edges, paths and reachability.

Shared by model compile (which dataset owns a multi-dataset aggregate) and the planner (join
paths); query-level errors about paths live in `dosi.plan.joins`.
"""

from __future__ import annotations

from collections.abc import Iterable

from dosi.ir.model import RelationshipIr


class RelationshipGraph:
    def __init__(self, relationships: Iterable[RelationshipIr]) -> None:
        self.up: dict[str, list[RelationshipIr]] = {}
        self.undirected: dict[str, set[str]] = {}  # every dataset a relationship names
        for r in relationships:
            self.up.setdefault(r.from_dataset, []).append(r)
            self.undirected.setdefault(r.from_dataset, set()).add(r.to_dataset)
            self.undirected.setdefault(r.to_dataset, set()).add(r.from_dataset)
        self._reach: dict[tuple[str, str], bool] = {}

    def paths(self, src: str, dst: str, limit: int = 8) -> list[tuple[RelationshipIr, ...]]:
        """Distinct many-to-one relationship paths from `src` to `dst` (at most `limit`)."""
        out: list[tuple[RelationshipIr, ...]] = []
        _walk(self.up, dst, limit, out, src, frozenset({src}), ())
        return out

    def reachable(self, src: str, dst: str) -> bool:
        """`dst` is `src`, or one many-to-one hop chain away from it (kept per pair: a model
        load asks it for every multi-dataset aggregate; the graph never changes)."""
        if src == dst:
            return True
        key = (src, dst)
        got = self._reach.get(key)
        if got is None:
            got = self._reach[key] = bool(self.paths(src, dst, limit=1))
        return got


def _walk(
    up: dict[str, list[RelationshipIr]],
    dst: str,
    limit: int,
    out: list[tuple[RelationshipIr, ...]],
    cur: str,
    seen: frozenset[str],
    acc: tuple[RelationshipIr, ...],
) -> None:
    """Depth first, in declaration order. A function of its own, not a closure: a recursive
    closure is a reference cycle, garbage only the cyclic collector frees (docs/performance.md,
    "Model load")."""
    if len(out) >= limit:
        return
    for r in up.get(cur, ()):
        if r.to_dataset in seen:
            continue
        step = (*acc, r)
        if r.to_dataset == dst:
            out.append(step)
        else:
            _walk(up, dst, limit, out, r.to_dataset, seen | {r.to_dataset}, step)
