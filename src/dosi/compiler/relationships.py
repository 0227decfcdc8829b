"""Relationship compile: both ends must be datasets, columns pair one to one -> RelationshipIr.

Ossie "Relationships" are many-to-one edges (from -> to); the DATUS `join_type` extension
(read through dosi.ext) picks LEFT (default) or INNER joins.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dosi.compiler.conform import relationship_kind
from dosi.compiler.context import CompileContext
from dosi.compiler.fields import physical_column
from dosi.errors import closest
from dosi.ir.model import DatasetIr, RelationshipIr
from dosi.model.schema import RelationshipSpec


def compile_relationship(
    cx: CompileContext, rel: RelationshipSpec, datasets: Mapping[str, DatasetIr]
) -> RelationshipIr | None:
    rpath = f"relationships[{rel.name}]"
    rline = cx.line([("relationships", rel.name)])
    rext = cx.read_ext("relationship", rpath, rel.custom_extensions, rline)
    ok = True
    for side, ds in (("from", rel.from_), ("to", rel.to)):
        if ds not in datasets:
            cx.sink.error(
                "unknown_dataset",
                f"relationship `{rel.name}` {side} `{ds}`: no such dataset",
                path=rpath,
                line=rline,
                candidates=closest(ds, list(datasets)),
                stage="invalid_model",
            )
            ok = False
    if len(rel.from_columns) != len(rel.to_columns):
        cx.sink.error(
            "column_count_mismatch",
            f"relationship `{rel.name}` pairs {len(rel.from_columns)} from_columns with "
            f"{len(rel.to_columns)} to_columns; they must correspond one to one",
            path=rpath,
            line=rline,
        )
        ok = False
    if not ok:
        return None
    join_type = getattr(rext, "join_type", None) or "left"
    kind = relationship_kind(cx, rext, rpath, rline)  # D-CONFORM many_to_many
    return RelationshipIr(
        name=rel.name,
        from_dataset=rel.from_,
        to_dataset=rel.to,
        from_exprs=tuple(_columns(datasets[rel.from_], rel.from_columns)),
        to_exprs=tuple(_columns(datasets[rel.to], rel.to_columns)),
        from_columns=tuple(rel.from_columns),
        to_columns=tuple(rel.to_columns),
        join_type=join_type,
        kind=kind,  # type: ignore[arg-type]
    )


def _columns(ds: DatasetIr, cols: list[str]) -> list[exp.Expression]:
    """Ossie "Relationships": from/to columns are columns of the dataset's source. A declared
    field of that name stands for the column (its expression, as the reference reads it); any
    other name is the physical column, qualified by the dataset."""
    fields = ds.fields
    return [fields[c].expr if c in fields else physical_column(ds.name, c) for c in cols]
