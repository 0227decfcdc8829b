"""Join paths over many-to-one relationships.

A branch reads one fact dataset and may join only "up" (many -> one), so an aggregate never sees
duplicated rows. A dataset reachable only against the arrow is a fan-out (`fan_out_risk`); two
distinct paths are ambiguous (`ambiguous_join_path`); a dataset no many-to-one path connects is
`no_join_path`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from dosi.errors import QueryError
from dosi.ir.graph import RelationshipGraph
from dosi.ir.model import ModelIr, RelationshipIr


class JoinGraph(RelationshipGraph):
    """The model's relationship graph, with join paths that explain why they cannot exist."""

    def __init__(self, model: ModelIr) -> None:
        super().__init__(model.relationships)
        self.path = lru_cache(maxsize=4096)(self._path)

    def _path(self, src: str, dst: str, purpose: str) -> tuple[RelationshipIr, ...]:
        if src == dst:
            return ()
        found = self.paths(src, dst)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise QueryError(
                "ambiguous_join_path",
                f"{purpose}: `{dst}` is reachable from `{src}` along {len(found)} different "
                "relationship paths",
                candidates=[route(src, p) for p in found],
                hint='name the path in the group-by object (docs/query.md, "Choosing a join '
                'path"): '
                + "; ".join(f"via {via_spelling(found, p)}" for p in found)
                + ", or remove one relationship",
            )
        if self.fans_out_to(src, dst):
            raise QueryError(
                "fan_out_risk",
                f"{purpose}: `{dst}` is on the many side of `{src}`; joining it would repeat "
                f"`{src}` rows and inflate the aggregate",
                hint=f"group by fields that `{src}` reaches through many-to-one relationships, "
                f"or use a metric that aggregates `{dst}`",
            )
        raise QueryError(
            "no_join_path",
            f"{purpose}: no join path reaches `{dst}` from `{src}`: no dataset reaches both "
            f"`{src}` and `{dst}` along many-to-one relationships",
            hint=f"group by and filter on fields `{src}` reaches, or declare a many-to-one "
            f"relationship that connects `{src}` to `{dst}`",
        )

    def fans_out_to(self, src: str, dst: str) -> bool:
        """`dst` sits on a many side of `src`: some dataset (`dst` itself, or a bridge such as
        order lines between orders and products) reaches both many-to-one, so a join exists
        but would repeat `src` rows. Otherwise no join path reaches `dst` at all (siblings
        hanging off a shared one side, or unrelated datasets): `no_join_path`, as the
        reference engine answers."""
        return any(
            self.reachable(x, src) and self.reachable(x, dst) for x in (dst, *self.undirected)
        )


def route(src: str, path: tuple[RelationshipIr, ...]) -> str:
    """A path as `a -> b -> c (via r1, r2)`, the candidates of path errors."""
    return " -> ".join([src, *(r.to_dataset for r in path)]) + (
        f" (via {', '.join(r.name for r in path)})"
    )


def via_spelling(
    found: Sequence[tuple[RelationshipIr, ...]], path: tuple[RelationshipIr, ...]
) -> list[str]:
    """The shortest `via` that picks `path` among `found`: the datasets it passes through,
    or its relationship names when two paths pass through the same datasets."""
    stops = [r.to_dataset for r in path[:-1]]
    same = [p for p in found if [r.to_dataset for r in p[:-1]] == stops and len(p) == len(path)]
    return stops if len(same) == 1 else [r.name for r in path]


def join_order(paths: list[tuple[RelationshipIr, ...]]) -> list[RelationshipIr]:
    """Union of the paths, each relationship once, parents before children."""
    out: list[RelationshipIr] = []
    seen: set[str] = set()
    for p in paths:
        for r in p:
            if r.name not in seen:
                seen.add(r.name)
                out.append(r)
    return out
