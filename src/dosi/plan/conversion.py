"""D-CONVERSION planning: how one branch links conversion events to base events.

MetricFlow's conversion semantics are the reference point: a conversion event counts when the
same entity (and every constant property) had a base event at or before it and, with a
window, less than the window before it; it is attributed to the latest such base event (ties
broken by the group-by values, so the answer is deterministic). The branch's query filters,
time_range and joins apply to the base events, whose dimensions and time the attributed events
are grouped by; conversion events are never filtered by the query (a visit on the last day of
the range still converts on the day after it).

An event is a row its metric's aggregate reads: with an argument, a row where it is not NULL
(a D-DERIVE filter metric's CASE WHEN selects its rows this way); COUNT(*) reads every row.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dosi.compiler.measures import agg_argument
from dosi.ir.model import MeasureIr, ModelIr
from dosi.plan.records import ConversionPlan
from dosi.plan.time_format import branch_dim

BASE_TIME = "__base_time"
CONVERSION_TIME = "__conversion_time"


def conversion_plan(model: ModelIr, measures: Sequence[MeasureIr]) -> ConversionPlan | None:
    """The branch's conversion link (a converted measure is alone in its branch)."""
    meas = measures[0] if measures else None
    c = meas.conversion if meas is not None else None
    if meas is None or c is None:
        return None
    base_f, conv_f = model.field(c.base_time), model.field(c.conversion_time)
    return ConversionPlan(
        ir=c,
        measure=meas.name,
        conversion_dataset=c.conversion_dataset,
        entity=(model.field(c.entity[0]).expr, model.field(c.entity[1]).expr),
        base_time=branch_dim(BASE_TIME, base_f, base_f.time_granularity),
        conversion_time=branch_dim(CONVERSION_TIME, conv_f, conv_f.time_granularity),
        window=c.window,
        properties=tuple(
            (model.field(b).expr, model.field(v).expr) for b, v in c.constant_properties
        ),
        base_event=event_condition(model.measures[c.base_measure]),
        conversion_event=event_condition(model.measures[c.conversion_measure]),
    )


def event_condition(meas: MeasureIr) -> exp.Expression | None:
    """The rows a measure's aggregate reads: its argument is not NULL (None: every row)."""
    agg = meas.expr
    if not isinstance(agg, exp.AggFunc):
        return None
    arg = agg_argument(agg)
    if arg is None:
        return None
    parts = arg.expressions if isinstance(arg, exp.Tuple) else [arg]
    conds: list[exp.Expression] = [
        exp.Not(this=exp.Is(this=p.copy(), expression=exp.Null()))
        for p in parts
        if not isinstance(p, exp.Literal)
    ]
    if not conds:
        return None
    out = conds[0]
    for c in conds[1:]:
        out = exp.And(this=out, expression=c)
    return out
