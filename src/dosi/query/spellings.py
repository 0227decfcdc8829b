"""Grain spellings (issue 21 item 3): `metric_time__month` and `dataset.field__grain`, the
output column names dosi (and MetricFlow) write, are accepted wherever `metric_time:month` /
`dataset.field:grain` are: group_by items, order_by keys and the time_range dimension. They are
read back to (field, grain) against the model before resolution, so everything after sees the
one canonical form and the output column keeps its canonical name.

An exact name always wins: a field whose real name contains `__` (`orders.ship__day`) is that
field, never `orders.ship` at a day grain. Only a known grain or date part after the last `__`
splits, and only when what is before it names a field (or metric_time) exactly."""

from __future__ import annotations

from dataclasses import replace

from dosi.ext.grains import is_date_part
from dosi.ir.model import ModelIr
from dosi.query.spec import GroupByItem, Query, TimeRange

METRIC_TIME = "metric_time"
SEP = "__"


def grain_spelling(model: ModelIr, name: str) -> tuple[str, str] | None:
    """(field, grain) for `name` written `<field>__<grain>`; None when it is not one."""
    if SEP not in name or is_exact(model, name):
        return None
    base, _, grain = name.rpartition(SEP)
    if not base or not known_grain(model, grain) or not is_exact(model, base):
        return None
    return base, grain


def is_exact(model: ModelIr, name: str) -> bool:
    """metric_time, `dataset.field`, or a bare field name some dataset defines."""
    if name == METRIC_TIME:
        return True
    if "." in name:
        ds, _, field = name.partition(".")
        d = model.datasets.get(ds)
        return d is not None and field in d.fields
    return any(name in d.fields for d in model.datasets.values())


def known_grain(model: ModelIr, grain: str) -> bool:
    return is_date_part(grain) or model.calendar.kind(grain) is not None


def near_miss_grain(model: ModelIr, name: str) -> tuple[str, str] | None:
    """(misspelt field, grain) for `name` written `<field>__<grain>` with a known grain whose
    field part names nothing: the retry keeps the grain."""
    if SEP not in name:
        return None
    base, _, grain = name.rpartition(SEP)
    if not base or not known_grain(model, grain):
        return None
    return base, grain


def misspelt_grain(model: ModelIr, name: str) -> tuple[str, str] | None:
    """(field, grain) for `<exact field>__<unknown grain>` (`metric_time__mnth`): an
    unknown_grain, not an unknown field."""
    if SEP not in name:
        return None
    base, _, grain = name.rpartition(SEP)
    if base and grain and is_exact(model, base) and not known_grain(model, grain):
        return base, grain
    return None


def canonical_spellings(model: ModelIr, query: Query) -> Query:
    """`query` with every `<field>__<grain>` group_by item read as (field, grain) (its
    spelling kept) and the time_range dimension read without a grain suffix."""
    items = tuple(_item(model, g) for g in query.group_by)
    changed = any(a is not b for a, b in zip(items, query.group_by, strict=True))
    tr = query.time_range
    if tr is not None and tr.dimension is not None:
        dim = _range_dimension(model, tr.dimension)
        if dim != tr.dimension:
            tr, changed = TimeRange(tr.start, tr.end, dim), True
    if not changed:
        return query
    return replace(query, group_by=items, time_range=tr)


def _item(model: ModelIr, g: GroupByItem) -> GroupByItem:
    if g.grain is not None or g.window is not None:
        return g
    split = grain_spelling(model, g.field)
    if split is None:
        return g
    return replace(g, field=split[0], grain=split[1])


def _range_dimension(model: ModelIr, name: str) -> str:
    """A range bounds the raw time value: a grain written on its dimension (`:day` or `__day`)
    names the same column."""
    base, sep, grain = name.partition(":")
    if sep and is_exact(model, base.strip()) and known_grain(model, grain.strip()):
        return base.strip()
    split = grain_spelling(model, name)
    return split[0] if split is not None else name
