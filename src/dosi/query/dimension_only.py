"""Dimension-only queries (issue 21 item 6): `{"metrics": [], "group_by": [...]}` answers the
distinct combinations of the grouped fields, the question every BI tool asks to fill a filter
list (docs/dimension-only-queries.md).

Such a query is a distinct detail query (`dosi.query.detail`) read from one dataset that
reaches every grouped and filtered field along many-to-one relationships: the dataset of the
first group_by item that reaches all of them, else of a filtered field, else the one other
dataset that does (a fact table joining two dimension tables; of several, the one all the
others join to, so the coarsest rows: orders rather than order lines). The output columns are named
as a metric query names its group-by columns (`channel`, `order_date__month`), and `order_by`
keys are those names, as in a metric query. `metric_time` is each metric's own time axis; a
query without metrics that groups by metric_time alone lists the buckets of the model's
time-spine table (its DOSI `time_spine`, MetricFlow's answer), within the time_range. Beside
other fields, or without a spine, it is `metric_time_needs_metric`, naming the time fields.
With `min_max_only: true` the answer is one row: each grouped column's smallest and largest
value (`<column>__min`, `<column>__max`), over the same distinct rows (`dosi.sql.min_max`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dosi.errors import QueryError, QueryShapeError
from dosi.ext.grains import is_date_part, is_sub_day
from dosi.ir.model import ModelIr
from dosi.query.detail import DetailQuery, parse_detail
from dosi.query.resolve import find_field, resolve_where
from dosi.query.spellings import grain_spelling

METRIC_TIME = "metric_time"
_PASSED = ("where_sql", "context_filter", "time_range", "limit")
_KEYS = ("metrics", "group_by", "order_by", *_PASSED, "min_max_only")


def is_dimension_only(raw: Any) -> bool:
    """A query object that names no metric but groups by something."""
    return (
        isinstance(raw, dict)
        and raw.get("metrics") in (None, [])
        and bool(raw.get("group_by"))
        and isinstance(raw.get("group_by"), (list, str))
    )


@dataclass(frozen=True)
class DimensionQuery:
    detail: DetailQuery
    renames: dict[str, str]  # the detail query's column -> the metric-query column name
    min_max: bool = False  # `min_max_only`: one row, each column's smallest and largest value


def _spelled(item: Any) -> Any:
    """The object form of a group-by item (`{"field": ..., "grain": ...}`, as metric queries
    take it) as its string spelling; anything else unchanged."""
    if (
        isinstance(item, dict)
        and set(item) <= {"field", "grain"}
        and isinstance(item.get("field"), str)
    ):
        grain = item.get("grain")
        return item["field"] if grain is None else f"{item['field']}:{grain}"
    return item


def _items(value: Any) -> list[str]:
    items = [value] if isinstance(value, (str, dict)) else list(value)
    items = [_spelled(g) for g in items]
    if not all(isinstance(g, str) and g.strip() for g in items):
        raise QueryShapeError(
            "invalid_query",
            "a dimension-only query groups by field names (`dataset.field[:grain]`)",
            hint='e.g. {"metrics": [], "group_by": ["orders.channel"]}',
        )
    return [g.strip() for g in items]


def dimension_query(
    model: ModelIr, raw: dict[str, Any], reaches: Callable[[str, str], bool]
) -> DimensionQuery:
    """The distinct detail query a dimension-only query means; `reaches(src, dst)`: `dst` is
    reachable from `src` along many-to-one relationships (the join graph)."""
    for key in raw:
        if key not in _KEYS:
            raise QueryShapeError(
                "unsupported_in_dimension_query",
                f"query key `{key}` needs a metric; a dimension-only query takes "
                + ", ".join(f"`{k}`" for k in _KEYS[1:]),
                hint="add a metric, or drop the key",
            )
    min_max = _min_max(raw)
    group_by = _items(raw["group_by"])
    spine = _spine_axis(model, group_by)
    fields = []
    canonical: dict[str, str] = {}  # a `field__grain` spelling -> `field:grain`
    for spelling in group_by:
        name, _, grain = spelling.partition(":")
        split = grain_spelling(model, name) if not grain else None
        if split is not None:  # `orders.order_date__month` (dosi.query.spellings)
            name, grain = split
            canonical[spelling] = f"{name}:{grain}"
        if name == METRIC_TIME and spine is not None:  # the spine's buckets
            grain = _spine_grain(model, grain or None)
            canonical[spelling] = f"{spine}:{grain}"
            fields.append((spelling, find_field(model, None, spine, role="dimension"), grain))
            continue
        if name == METRIC_TIME:
            times = [
                f.qualified
                for ds in model.datasets.values()
                for f in ds.fields.values()
                if f.is_time
            ]
            raise QueryError(
                "metric_time_needs_metric",
                "`metric_time` is each metric's own time axis, so a query without metrics has "
                "none (grouped alone, it lists the model's time spine when one is declared): "
                "group by a time field instead",
                candidates=times,
                hint="e.g. " + (f"`{times[0]}:{grain or 'day'}`" if times else "a time field"),
            )
        fields.append((spelling, find_field(model, None, name, role="dimension"), grain or None))
    named = [f.dataset for _, f, _ in fields]
    filtered = []
    for key in ("where_sql", "context_filter"):
        text = raw.get(key)
        if isinstance(text, str) and text.strip():
            filtered += [f.dataset for f in resolve_where(model, text).fields]
    needed = list(dict.fromkeys(named + filtered))
    source = _source(model, needed, reaches)
    renames: dict[str, str] = {}
    seen: dict[str, str] = {}
    for spelling, f, grain in fields:
        base = f.name if f.dataset == source else f"{f.dataset}__{f.name}"
        out = f.name if grain is None else f"{f.name}__{grain}"
        if spine is not None:
            out = f"{METRIC_TIME}__{grain}"
        if out in seen:
            raise QueryError(
                "duplicate_output_name",
                f"group_by items `{seen[out]}` and `{spelling}` both produce the output column "
                f"`{out}`",
                hint="group by one of them, or rename a field in the model",
            )
        seen[out] = spelling
        renames[base if grain is None else f"{base}__{grain}"] = out
    order_by = []
    for item in raw.get("order_by") or []:
        o = dict(item) if isinstance(item, dict) else {"key": item}
        key = o.get("key")
        if isinstance(key, str) and key in seen:
            o["key"] = seen[key]  # the column name -> its group_by spelling
        if isinstance(o.get("key"), str):
            o["key"] = canonical.get(o["key"], o["key"])
        order_by.append(o)
    fields_spelled = [canonical.get(g, g) for g in group_by]
    detail: dict[str, Any] = {"from": source, "fields": fields_spelled, "distinct": True}
    detail.update({k: raw[k] for k in _PASSED if raw.get(k) is not None})
    tr = detail.get("time_range")
    if spine is not None and isinstance(tr, dict) and tr.get("dimension") in (None, METRIC_TIME):
        detail["time_range"] = {**tr, "dimension": spine}  # metric_time is the spine's date
    if order_by:
        detail["order_by"] = order_by
    return DimensionQuery(parse_detail(detail), renames, min_max)


def _min_max(raw: dict[str, Any]) -> bool:
    """`min_max_only`: a boolean; the answer is one row, so `order_by` and `limit` (which
    would pick among the distinct values before the range is taken) are refused with it."""
    flag = raw.get("min_max_only")
    if flag is None:
        return False
    if not isinstance(flag, bool):
        raise QueryShapeError(
            "invalid_query",
            f"`min_max_only` must be true or false (got {flag!r})",
            hint='e.g. {"metrics": [], "group_by": ["orders.order_date"], "min_max_only": true}',
        )
    for key in ("order_by", "limit"):
        if flag and raw.get(key) is not None:
            raise QueryShapeError(
                "unsupported_in_dimension_query",
                f"`{key}` with `min_max_only`: the answer is one row (each grouped field's "
                "smallest and largest value), so there is nothing to order or limit",
                hint=f"drop `{key}`",
            )
    return flag


def _spine_axis(model: ModelIr, group_by: list[str]) -> str | None:
    """The spine's date field (`dataset.field`) when every item is metric_time (at a grain or
    a date part) and the model declares a time spine; None otherwise."""
    spine = model.time_spine
    if spine is None:
        return None
    names = []
    for spelling in group_by:
        name, _, grain = spelling.partition(":")
        split = grain_spelling(model, name) if not grain else None
        names.append(split[0] if split is not None else name)
    return spine.qualified if all(n == METRIC_TIME for n in names) else None


def _spine_grain(model: ModelIr, grain: str | None) -> str:
    """metric_time's grain over the spine: the spine's own by default; finer is an error
    (a day spine holds no hours)."""
    spine = model.time_spine
    assert spine is not None
    if grain is None:
        return spine.grain
    if not is_date_part(grain) and is_sub_day(grain) and not is_sub_day(spine.grain):
        raise QueryError(
            "grain_too_fine",
            f"metric_time:{grain} without metrics lists the time spine `{spine.qualified}`, "
            f"whose rows are {spine.grain}s",
            hint=f"group by metric_time:{spine.grain} or coarser, or add a metric",
        )
    return grain


def _source(model: ModelIr, needed: list[str], reaches: Callable[[str, str], bool]) -> str:
    """The dataset the distinct rows are read from (see the module docstring)."""

    def covers(src: str) -> bool:
        return all(dst == src or reaches(src, dst) for dst in needed)

    for ds in needed:
        if covers(ds):
            return ds
    others = [ds for ds in model.datasets if ds not in needed and covers(ds)]
    coarsest = [c for c in others if all(reaches(o, c) for o in others)]
    if len(coarsest) == 1:  # one of them (or the only one) every other one joins to
        return coarsest[0]
    if not others:
        raise QueryError(
            "no_join_path",
            "no dataset reaches every grouped and filtered field ("
            + ", ".join(f"`{d}`" for d in needed)
            + ") along many-to-one relationships",
            hint="group by fields of datasets joined many-to-one, or add a metric whose "
            "dataset reaches them",
        )
    raise QueryError(
        "ambiguous_dimension_source",
        "several datasets reach every grouped field ("
        + ", ".join(f"`{d}`" for d in others)
        + "), and each would list the combinations its own rows hold",
        candidates=others,
        hint="add a metric of the dataset whose rows you mean, or group by one of its fields",
    )


__all__ = ["DimensionQuery", "dimension_query", "is_dimension_only"]
