"""metric_time in a row filter, rendered (issue 21 item 2; dosi.query.metric_time_filter): the
branch's axis value the planner bound is bucketed at the filter's grain by the query's
calendar (`Renderer.bucket`), or compared as range filters compare it, and a date literal it
is compared with becomes the dialect's time literal of the same type, so
`metric_time:month = '2024-03-01'` matches on every engine (SQLite compares text)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from sqlglot import exp

from dosi.query.metric_time_filter import BOUND
from dosi.sql.dialects import Dialect

Bucket = Callable[[exp.Expression, str, str | None], exp.Expression]
_COMPARED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between, exp.In)


def _time_of(node: exp.Expression) -> dt.date | dt.datetime | None:
    if not (isinstance(node, exp.Literal) and node.is_string):
        return None
    text = str(node.this).strip()
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None  # the engine reads it by its own rules


def _bound(node: exp.Expression) -> tuple[str | None, str | None] | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node.meta.get(BOUND)


def render_metric_time(expr: exp.Expression, dialect: Dialect, bucket: Bucket) -> exp.Expression:
    """`expr` (one branch filter, a fresh copy) with every bound metric_time rendered."""
    if not any(BOUND in n.meta for n in expr.walk()):
        return expr
    for node in list(expr.find_all(*_COMPARED)):
        operands = [node.this, *(node.args.get(k) for k in ("expression", "low", "high"))]
        operands += list(node.args.get("expressions") or [])
        mark = _bound(node.this) or next(
            (b for o in operands if o is not None and (b := _bound(o)) is not None), None
        )
        if mark is None:
            continue
        grain, datatype = mark
        kind = dialect.bucket_datatype(datatype, grain)
        for o in operands:
            value = _time_of(o) if o is not None else None
            if value is not None:
                o.replace(dialect.time_literal(value, kind))

    def render(node: exp.Expression) -> exp.Expression:
        mark = node.meta.get(BOUND)
        if mark is None:
            return node
        grain, datatype = mark
        value = node.copy()
        value.meta.pop(BOUND, None)
        if grain is None:
            return dialect.time_operand(value, datatype)
        out = bucket(value, grain, datatype)
        return dialect.time_operand(out, dialect.bucket_datatype(datatype, grain))

    return expr.transform(render, copy=False)
