"""Query-side D-LOD checks that need only the model (the not-yet table, LOD-NI-07)."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.ir.model import ModelIr


def lod_metric_as_dimension(model: ModelIr, name: str) -> None:
    """A level-of-detail metric named as a group-by item: its grain is defined by the
    group-by, so it cannot be part of it (unknown_dimension, as the reference engine says);
    the error shows the fixed field that would work."""
    m = model.metrics.get(name)
    if m is None or m.lod is None:
        return
    lod = m.lod
    keys = ", ".join(lod.dims) if lod.dims else ""
    ds = next(iter(m.datasets), "dataset")
    spelling = f"fixed({lod.base}{', ' + keys if keys else ''})"
    raise QueryError(
        "unknown_dimension",
        f"`{name}` is a level-of-detail metric ({lod.text}), not a dimension: "
        + (
            "its grain is defined by the query's group-by, so it cannot be part of it"
            if lod.relative
            else "its value attaches to view rows; it is not a column of them"
        ),
        metrics=[name],
        hint=f"to group by a pinned value, declare a fixed field on `{ds}` "
        f'(custom_extensions DATUS {{"lod": {{"expr": "{spelling}"}}}}) and group by it',
    )
