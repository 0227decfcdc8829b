"""D-SEMI planning: which snapshot rows one branch keeps for one query.

The period is the query's own bucket of the non-additive dimension (MetricFlow's reading of
`non_additive_dimension`): grouped by `metric_time:month` over the dimension, each month keeps
its last snapshot; grouped by nothing on that axis, the whole (time_range-filtered) range keeps
one. Other group-by dimensions never split the choice: the snapshot of March is one date (per
window grouping), and each region shows its rows at that date, so regions add up to the total.
The where_sql and time_range filters apply before the choice: the last snapshot inside the
range, among the rows the query keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

from dosi.errors import QueryError
from dosi.ir.model import GRAIN_RANK, FieldIr, MeasureIr, ModelIr
from dosi.plan.records import BranchDim, SemiAdditivePlan
from dosi.plan.time_format import branch_dim
from dosi.query.resolve import ResolvedDim

SNAPSHOT = "__snapshot"


def semi_additive_plan(
    model: ModelIr,
    measures: Sequence[MeasureIr],
    pairs: Sequence[tuple[ResolvedDim, BranchDim]],
    axis: FieldIr | None,
) -> SemiAdditivePlan | None:
    """The branch's snapshot selection (its measures share one declaration: the branch key)."""
    semi = measures[0].semi_additive if measures else None
    if semi is None:
        return None
    dim = model.field(semi.dimension)
    period: BranchDim | None = None
    for rd, bd in pairs:
        on_dim = (
            rd.field.qualified == dim.qualified
            if rd.field is not None
            else (axis is not None and axis.qualified == dim.qualified)
        )
        if not on_dim:
            continue
        if rd.window is not None:
            raise QueryError(
                "not_implemented",
                f"a streaming window over `{dim.qualified}`, the non-additive dimension of "
                f"{', '.join(m.name for m in measures)}, is not implemented",
                hint="group it by a calendar grain (metric_time:day, :month, ...)",
            )
        if period is None or _finer(bd.grain, period.grain):
            period = bd
    snapshot = branch_dim(SNAPSHOT, dim, dim.time_granularity)
    groupings = tuple(model.field(g).expr for g in semi.window_groupings)
    value = measures[0].name if semi.by_value else None
    return SemiAdditivePlan(semi, snapshot, period, groupings, value)


def _finer(a: str | None, b: str | None) -> bool:
    """Grain `a` splits time finer than `b` (no grain: the raw value, the finest)."""
    if b is None:
        return False
    if a is None:
        return True
    return GRAIN_RANK.get(a, -1) < GRAIN_RANK.get(b, -1)
