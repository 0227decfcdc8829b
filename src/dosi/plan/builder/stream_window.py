"""The plan shape of a streaming-window query (window-udf.md): output columns and order.

Syntax and checks: `dosi.query.stream_window`.
"""

from __future__ import annotations

from dataclasses import replace

from dosi.errors import QueryError
from dosi.plan.records import QueryPlan
from dosi.query.resolve import ResolvedQuery
from dosi.query.stream_window import WINDOW_END, WINDOW_START, stream_window_of


def plan_stream(plan: QueryPlan, rq: ResolvedQuery) -> QueryPlan:
    """Output columns and default order of a streaming-window plan (called by the planner).

    The window item's output `window_start` is followed by `window_end`; without an
    ``order_by`` rows are sorted by window_start, the other group-by columns, window_end.
    """
    dim = stream_window_of(rq.dims)
    if dim is None:
        return plan
    assert dim.window is not None
    if dim.window.type == "session" and len(plan.branches) > 1:
        raise QueryError(
            "not_implemented",
            f"session windows (`{dim.spelling}`) are computed per dataset; this query needs "
            + ", ".join(b.dataset + (f"@{b.axis}" if b.axis else "") for b in plan.branches),
            metrics=[m.name for m in rq.metrics],
            hint="query the metrics of each dataset separately, or use a tumble / hop / "
            "cumulate window",
        )
    dims: list[str] = []
    for name in plan.dims:
        dims.extend((WINDOW_START, WINDOW_END) if name == dim.output else (name,))
    others = [d for d in dims if d not in (WINDOW_START, WINDOW_END)]
    order = tuple(rq.order) or tuple((d, False, None) for d in (WINDOW_START, *others, WINDOW_END))
    metric_outputs = plan.outputs[len(plan.dims) :]
    return replace(plan, dims=tuple(dims), outputs=(*dims, *metric_outputs), order=order)
