"""`empty_buckets: "drop"` (dosi 1.15, docs/filters.md "Empty buckets of a filtered
metric"): the rows a branch keeps when every metric it serves drops its empty buckets.

A filtered aggregate is `AGG(CASE WHEN p THEN x END)` (the D-DERIVE filter fold, or an
aggregate of a CASE written by hand): rows failing `p` give NULL, which every aggregate skips.
So `WHERE p1 OR p2 ...` over the branch's measures changes no value; it only removes the buckets
where no measure has a row, the buckets the D-DERIVE filter would keep as NULL. A measure
without such a CASE reads every row, and then no row is removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dosi.ir.model import MeasureIr, MetricIr


def row_predicate(measure: MeasureIr) -> exp.Expression | None:
    """`p` of `AGG(CASE WHEN p THEN x END)` (one branch, no ELSE); None: every row counts."""
    agg = measure.expr
    while isinstance(agg, exp.Paren):
        agg = agg.this
    if not isinstance(agg, exp.AggFunc):
        return None
    arg = agg.this
    if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
        arg = arg.expressions[0]
    while isinstance(arg, exp.Paren):
        arg = arg.this
    if not isinstance(arg, exp.Case) or arg.this is not None or arg.args.get("default"):
        return None
    ifs = arg.args.get("ifs") or []
    if len(ifs) != 1:
        return None
    return ifs[0].this.copy()


def empty_bucket_filter(
    metrics: Sequence[MetricIr], measures: Sequence[MeasureIr], semi_additive: bool = False
) -> exp.Expression | None:
    """The branch filter of a branch serving `metrics` over `measures`: the OR of the measures'
    row predicates when every metric drops its empty buckets and every measure is filtered;
    None otherwise (a window or a conversion measure keeps its own rows). Semi-additive
    measures only when `semi_additive`: their predicate then filters the snapshot rows after
    the pick (dosi.sql.semi_additive), never the rows the snapshot is picked from."""
    if not metrics or not all(m.drop_empty_buckets and m.window is None for m in metrics):
        return None
    preds = []
    for meas in measures:
        if (meas.semi_additive is not None) != semi_additive or meas.conversion is not None:
            return None
        p = row_predicate(meas)
        if p is None:
            return None
        preds.append(p)
    return exp.or_(*preds) if preds else None
