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

    def paths(self, src: str, dst: str, limit: int = 8) -> list[tuple[RelationshipIr, ...]]:
        """Distinct many-to-one relationship paths from `src` to `dst` (at most `limit`)."""
        out: list[tuple[RelationshipIr, ...]] = []

        def walk(cur: str, seen: frozenset[str], acc: tuple[RelationshipIr, ...]) -> None:
            if len(out) >= limit:
                return
            for r in self.up.get(cur, ()):
                if r.to_dataset in seen:
                    continue
                step = (*acc, r)
                if r.to_dataset == dst:
                    out.append(step)
                else:
                    walk(r.to_dataset, seen | {r.to_dataset}, step)

        walk(src, frozenset({src}), ())
        return out

    def reachable(self, src: str, dst: str) -> bool:
        """`dst` is `src`, or one many-to-one hop chain away from it."""
        return src == dst or bool(self.paths(src, dst, limit=1))
