"""D-VALIDITY (dosi 1.15): which time a fact row picks the versions of a slowly changing
dimension by.

A branch that joins a dataset with `validity` compares the version bounds with the branch's
time axis (the field `metric_time` resolves to there, the metric's own D-TIME axis), else the
root dataset's primary time. A branch with neither has no time to choose a version by, which
is `validity_needs_time`, never a join that matches every version (a fan-out).
"""

from __future__ import annotations

from collections.abc import Iterable

from dosi.errors import QueryError
from dosi.ir.model import FieldIr, ModelIr, RelationshipIr


def scd_targets(model: ModelIr, joins: Iterable[RelationshipIr]) -> list[str]:
    """The datasets with D-VALIDITY the joins land on, in join order."""
    return [r.to_dataset for r in joins if model.datasets[r.to_dataset].validity is not None]


def version_time(
    model: ModelIr, root: str, axis: str | None, joins: Iterable[RelationshipIr]
) -> FieldIr | None:
    """The field a fact row of `root` picks its versions by (None: no join needs one)."""
    scd = scd_targets(model, joins)
    if not scd:
        return None
    if axis is not None:
        ds, _, name = axis.partition(".")
        f = model.datasets[ds].fields.get(name) if ds in model.datasets else None
        if f is not None and ds not in scd:
            return f
    ds_ir = model.datasets[root]
    if ds_ir.primary_time is not None:
        return ds_ir.fields[ds_ir.primary_time]
    raise QueryError(
        "validity_needs_time",
        f"`{scd[0]}` is a slowly changing dimension (D-VALIDITY): a `{root}` row joins the "
        f"version valid at its time, and `{root}` has no time field to pick it by",
        candidates=scd,
        hint=f"declare the D-TIME `time_dimension` of `{root}`, or query `{scd[0]}` itself",
    )
