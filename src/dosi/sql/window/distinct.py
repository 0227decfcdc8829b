"""SQL of a 1.15 `count_distinct` frame: the distinct count over each bucket's frame rows.

The frame's buckets are read from the base measure's fact rows reduced to distinct (bucket,
dims, value) triples, not from the per-bucket counts (an entity in two buckets of the frame
counts once):

    (SELECT COUNT(DISTINCT d.__dx) FROM (<distinct rows>) AS d
     WHERE d.<partition> IS NOT DISTINCT FROM c.<partition>
       AND d.t <= c.t [AND d.t >= c.t - (span - one bucket)] [AND <reset period> equal])

The bounds are the frame's own (the `span` frame's RANGE bound, the reset key, the masks of
rows loaded only for other metrics), so the answer matches the same frame over `sum`.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.ext.window import FrameWindow
from dosi.ext.window.span import SPAN_GRAINS
from dosi.plan.records import BranchDim, WindowMetric
from dosi.sql.util import and_all, clone, col, table_aliased
from dosi.sql.window.stage import WindowStageSql

ROWS, VALUE = "d", "__dx"


def render_distinct(s: WindowStageSql, wm: WindowMetric, w: FrameWindow) -> exp.Expression:
    """The correlated distinct count of `wm`'s frame over the stage row `c`, NULL when the
    frame holds no row (as a frame over NULLs)."""
    rows = wm.distinct
    assert rows is not None
    branch = replace(
        rows.branch,
        dims=(*rows.branch.dims, BranchDim(VALUE, clone(rows.value), None)),
        measures=(),
    )
    source = exp.Subquery(this=s.r.grouped(branch, [], "plain"))
    preds: list[exp.Expression] = [
        exp.NullSafeEQ(this=col(p, ROWS), expression=s.cur(p)) for p in wm.partition
    ]
    key = s.stage.time_key
    if key is not None and w.scope is None:
        t, here = col(key, ROWS), s.cur(key)
        preds.append(exp.LTE(this=t, expression=here))
        if w.span is not None:
            grain = s.stage.grain or "day"
            span = s.dialect.interval(w.span.count, w.span.granularity)
            one = s.dialect.interval(1, grain if grain in SPAN_GRAINS else "day")
            low = exp.Sub(
                this=clone(here), expression=exp.Paren(this=exp.Sub(this=span, expression=one))
            )
            preds.append(exp.GTE(this=clone(t), expression=low))
        if w.reset is not None:
            preds.append(
                exp.EQ(
                    this=s.r.bucket(clone(t), w.reset, None),
                    expression=s.r.bucket(clone(here), w.reset, None),
                )
            )
        if wm.mask_before is not None:
            low = s.dialect.time_literal(wm.mask_before, None)
            preds.append(exp.GTE(this=clone(t), expression=low))
        if wm.mask_after is not None:
            high = s.dialect.time_literal(wm.mask_after, None)
            preds.append(exp.LT(this=clone(t), expression=high))
    count = exp.Count(this=exp.Distinct(expressions=[col(VALUE, ROWS)]))
    sel = exp.Select().select(count, copy=False).from_(table_aliased(source, ROWS), copy=False)
    cond = and_all(preds)
    if cond is not None:
        sel = sel.where(cond, copy=False)
    return exp.Nullif(this=exp.Subquery(this=sel), expression=exp.Literal.number(0))
