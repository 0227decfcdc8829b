"""A time field at a grain in where_sql and context_filter (issue 21 item 3; CHECKLIST
CORE-Q-02 grain spellings): `orders.order_date__month >= '2024-03-01'`, or
`orders.order_date:month`, compares the field's value truncated to the grain, as
`metric_time:month` does for each metric's own axis (dosi.query.metric_time_filter).

The column resolves to the field's expression marked with the bound-axis meta the renderer
already buckets (`BOUND`: grain, datatype), so there is no per-branch binding step: the field
is the same on every branch that reads it. An exact field name always wins (a field whose
real name holds `__` is that field); a near miss keeps the grain in its candidates.
"""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.fields import field_reference
from dosi.errors import QueryError, closest
from dosi.ir.model import FieldIr, ModelIr
from dosi.query.calendar import check_grain, check_known
from dosi.query.metric_time_filter import BOUND, METRIC_TIME
from dosi.query.spellings import grain_spelling, misspelt_grain, near_miss_grain
from dosi.query.time_format import reject_in_where


def field_grain(model: ModelIr, name: str) -> tuple[str, str] | None:
    """(field name, grain) for a filter column `<field>__<grain>` naming a field (not
    metric_time, which dosi.query.metric_time_filter reads); None otherwise."""
    split = grain_spelling(model, name)
    if split is None or split[0] == METRIC_TIME:
        return None
    return split


def bucketed_reference(model: ModelIr, f: FieldIr, grain: str, spelling: str) -> exp.Expression:
    """`f` read at `grain` in a row filter: its expression, marked for the renderer's bucket."""
    if not f.is_time:
        raise QueryError(
            "grain_on_non_time_dimension",
            f"`{f.qualified}` is not a time field, so `{spelling}` has no grain to compare",
            hint=f"compare `{f.qualified}` itself",
        )
    check_known(model, grain, spelling)
    if model.calendar.kind(grain) is None:  # a date part (dow, ...): a number, not a time
        raise QueryError(
            "unsupported_filter",
            f"`{spelling}` is a date part; filters compare a time field at a grain",
            hint=f"e.g. {f.qualified}:month >= '2024-03-01'",
        )
    check_grain(model, f, grain, spelling)
    reject_in_where(f)  # D-FORMAT FMT-FLT-02: an encoded field is filtered by time_range
    out = field_reference(f.qualified, f.expr)
    out.meta[BOUND] = (grain, f.datatype)
    return out


def unknown_grained(model: ModelIr, name: str) -> QueryError | None:
    """The error for a filter column that looks like `<field>__<grain>` but is not one: an
    unknown grain on a real field, or a misspelt field whose candidates keep the grain."""
    wrong = misspelt_grain(model, name)
    if wrong is not None and wrong[0] != METRIC_TIME:
        check_known(model, wrong[1], name)  # raises unknown_grain with the grains offered
    near = near_miss_grain(model, name)
    if near is None:
        return None
    times = [f.qualified for d in model.datasets.values() for f in d.fields.values() if f.is_time]
    if "." not in near[0]:
        times += [f.name for d in model.datasets.values() for f in d.fields.values() if f.is_time]
    cands = [f"{c}__{near[1]}" for c in closest(near[0], [*times, METRIC_TIME])]
    if not cands:
        return None
    return QueryError(
        "unknown_field",
        f"unknown field `{name}`",
        candidates=cands,
        hint=f"a time field at a grain is written dataset.field__grain (e.g. {cands[0]})",
    )
