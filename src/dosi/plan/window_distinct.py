"""D-WINDOW 1.15 `count_distinct` frames: the rows a distinct count over a window reads.

A running or trailing distinct count is not a re-aggregation of per-bucket counts (an entity
seen in two buckets counts once), so the stage reads the base measure's fact rows reduced to
their distinct (bucket, dims, value) triples (dosi.sql.window.distinct).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ext.window import FrameWindow
from dosi.ir.model import MetricIr, ModelIr
from dosi.plan.derive_series import needs_series
from dosi.plan.records import Branch, DistinctRows, WindowMetric


def with_distinct_rows(
    model: ModelIr, m: MetricIr, wm: WindowMetric, branches: tuple[Branch, ...]
) -> WindowMetric:
    """`wm` with the distinct rows its `count_distinct` frame counts (other frames as they
    are); the base must be one COUNT(DISTINCT x) measure."""
    spec = wm.spec
    if not isinstance(spec, FrameWindow) or spec.function != "count_distinct":
        return wm
    measure = model.measures.get(m.measures[0]) if len(m.measures) == 1 else None
    if needs_series(m) or measure is None or measure.agg != "count_distinct":
        raise QueryError(
            "invalid_query",
            f"window metric `{m.name}` uses the frame function count_distinct, which counts "
            "the distinct values of its base's rows: its base must be one COUNT(DISTINCT x)",
            metrics=[m.name],
            hint='use "function": "sum" for a running total of per-bucket values, or base the '
            "window on a COUNT(DISTINCT ...) metric",
        )
    if spec.preceding is not None and spec.span is None:
        raise QueryError(
            "not_implemented",
            f"window metric `{m.name}`: a count_distinct frame of a number of buckets "
            "(`preceding` / `periods`); running frames and calendar `span` frames are supported",
            metrics=[m.name],
            hint='write the frame as a calendar span, e.g. "span": "3 day"',
        )
    if spec.following or spec.following_unbounded or spec.scope is not None:
        raise QueryError(
            "not_implemented",
            f"window metric `{m.name}`: a count_distinct frame reads back from its bucket only "
            "(no following bound or partition scope)",
            metrics=[m.name],
        )
    branch = next((b for b in branches if measure.name in b.measures), None)
    agg = measure.expr
    if branch is None or not isinstance(agg, exp.Count) or not isinstance(agg.this, exp.Distinct):
        raise QueryError(
            "not_implemented",
            f"window metric `{m.name}`: its COUNT(DISTINCT ...) base is not one plain branch "
            "aggregate",
            metrics=[m.name],
        )
    args = agg.this.expressions
    if len(args) != 1 or branch.semi_additive or branch.conversion or branch.lod:
        raise QueryError(
            "not_implemented",
            f"window metric `{m.name}`: a count_distinct frame over a multi-column distinct or "
            "a semi-additive / conversion / fixed-level base",
            metrics=[m.name],
        )
    return replace(wm, distinct=DistinctRows(branch=branch, value=args[0]))
