"""Row filters through relationships: a policy restricts a fact table (`orders`) by the
fields of a dataset it reaches many-to-one (`customers.region = {user.region}`). The fact's
base relation keeps a row when its related row passes: a chain of correlated EXISTS along the
relationship path, each hop reading the related dataset's own source (a row whose key finds
no related row is not kept: deny by default)."""

from __future__ import annotations

from collections import deque

from sqlglot import exp

from dosi.errors import AccessError
from dosi.ir.model import ModelIr, RelationshipIr
from dosi.sql.util import table_aliased


def _path(model: ModelIr, start: str, goal: str) -> list[RelationshipIr] | None:
    """The shortest many-to-one path from `start` to `goal` (breadth first)."""
    seen = {start}
    queue: deque[tuple[str, list[RelationshipIr]]] = deque([(start, [])])
    while queue:
        at, path = queue.popleft()
        if at == goal:
            return path
        for r in model.relationships:
            if r.kind == "many_to_one" and r.from_dataset == at and r.to_dataset not in seen:
                seen.add(r.to_dataset)
                queue.append((r.to_dataset, [*path, r]))
    return None


def through_path(
    model: ModelIr, policy: str, target: str, dataset: str, predicate: exp.Expression
) -> exp.Expression:
    """`EXISTS (SELECT 1 FROM <next> WHERE <join> AND ... <predicate>)` over `target`'s
    columns, for the path `target` -> ... -> `dataset`."""
    if target not in model.datasets:
        raise AccessError(
            "access_policy_invalid",
            f"policy `{policy}`: no dataset `{target}` in the model",
            hint="name a dataset of the model in the row filter's `dataset`",
            detail={"policy": policy},
        )
    path = _path(model, target, dataset)
    if not path:
        raise AccessError(
            "access_policy_invalid",
            f"policy `{policy}`: `{target}` does not reach `{dataset}` through many-to-one "
            "relationships",
            hint="filter the dataset itself, or one it joins many-to-one",
            detail={"policy": policy},
        )
    inner: exp.Expression = predicate
    for r in reversed(path):
        on = [
            exp.EQ(this=a.copy(), expression=b.copy())
            for a, b in zip(r.from_exprs, r.to_exprs, strict=True)
        ]
        cond: exp.Expression = inner
        for eq in reversed(on):
            cond = exp.And(this=eq, expression=cond)
        ds = model.datasets[r.to_dataset]
        sub = (
            exp.select(exp.Literal.number(1))
            .from_(table_aliased(ds.source.copy(), ds.name), copy=False)
            .where(cond, copy=False)
        )
        inner = exp.Exists(this=sub)
    return inner
