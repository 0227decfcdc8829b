"""The query shape shared by Python, CLI and REST: parsing and shape checks only.

Names are not resolved here (see `dosi.query.resolve`); this module turns a JSON-like dict into
a frozen, hashable `Query` so compiled plans can be cached on it.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace
from typing import Any

from dosi.errors import QueryError, QueryShapeError, bounded, closest
from dosi.ext.grains import DATE_PARTS, KNOWN_GRAINS
from dosi.query.bounds import check_query_bounds
from dosi.query.cache_option import cache_option
from dosi.query.calendar import parse_week_start
from dosi.query.densify_shape import parse_densify
from dosi.query.params_shape import params_to_dict, parse_params
from dosi.query.stream_window import (
    STREAM_WINDOW_TYPES,
    StreamWindow,
    format_window,
    parse_window_object,
    parse_window_text,
)
from dosi.query.time_ranges_shape import TaggedRange, parse_time_ranges

QUERY_KEYS = (
    "metrics",
    "group_by",
    "where_sql",
    "time_range",
    "order_by",
    "limit",
    "params",
    "time_ranges",
    "context_filter",
    "densify",
    "week_start",
    "cache",
)
RESERVED_KEYS: tuple[str, ...] = ()
DIMENSION_ONLY_KEY = "min_max_only"  # a key of queries without metrics alone

#: The largest row limit (a signed 64-bit LIMIT on every dialect).
MAX_LIMIT = 2**63 - 1


@dataclass(frozen=True)
class GroupByItem:
    field: str  # "orders.region", "region" or "metric_time"
    grain: str | None
    spelling: str  # as the caller wrote it
    window: StreamWindow | None = None
    # the join path to the field's dataset (docs/query.md, "Choosing a join path"): each hop
    # a relationship name or the dataset it reaches; None lets the planner find the one path
    via: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TimeRange:
    start: dt.date | dt.datetime | None
    end: dt.date | dt.datetime | None
    dimension: str | None


@dataclass(frozen=True)
class OrderItem:
    key: str
    desc: bool
    nulls: str | None = None  # "first" | "last"; default: NULLs last in both directions


@dataclass(frozen=True)
class Query:
    metrics: tuple[str, ...]
    group_by: tuple[GroupByItem, ...] = ()
    where_sql: str | None = None
    time_range: TimeRange | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: int | None = None
    # D-PARAM bindings: (name, scalar or tuple of scalars), in the caller's order
    params: tuple[tuple[str, Any], ...] = ()
    time_ranges: tuple[TaggedRange, ...] = ()  # tagged ranges (CORE-Q-11)
    # D-LOD filter placement: the context layer, feeding every rollup (datus-extensions §3)
    context_filter: str | None = None
    # empty time buckets filled (dosi.query.densify): "time" | "all" | "windows" | "covered" |
    # "none";
    # None = not given (the model's default applies)
    densify: str | None = None
    # the week start of this query (monday / sunday / saturday; None: the model's calendar)
    week_start: str | None = None


def _bad(code: str, message: str, **kw: Any) -> QueryError:
    cls = QueryShapeError if code in ("invalid_query", "unknown_grain") else QueryError
    return cls(code, message, **kw)


def parse_query(raw: Any, *, bounded: bool = False) -> Query:
    """The query JSON (text or object) as a Query; `bounded`: the caller has run
    `check_query_bounds` on this very object (the engine does, before its cache key)."""
    if isinstance(raw, Query):
        return raw
    if isinstance(raw, str):
        check_query_bounds(raw)
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _bad("invalid_query", f"the query is not valid JSON: {exc.msg}") from None
        except (ValueError, RecursionError):  # a 5,000-digit number, or deep nesting
            raise _bad(
                "invalid_query", "the query JSON holds an out-of-range number or nests too deeply"
            ) from None
        bounded = False  # the parsed text is a new object
    if not bounded:
        check_query_bounds(raw)
    if not isinstance(raw, dict):
        raise _bad(
            "invalid_query",
            "a query is a JSON object with at least `metrics`",
            hint='e.g. {"metrics": ["revenue"], "group_by": ["metric_time:month"]}',
        )
    data = dict(raw)
    for key in data:
        if key in RESERVED_KEYS:
            raise _bad(
                "not_implemented",
                f"query key `{key}` is reserved for a later release of this engine",
                hint=f"remove `{key}` from the query",
            )
        if key == DIMENSION_ONLY_KEY:
            raise _bad(
                "invalid_query",
                "`min_max_only` answers the range of the grouped fields of a query without "
                "metrics (docs/dimension-only-queries.md); a metric query has no such range",
                hint='drop the metrics ({"metrics": [], ...}) or drop `min_max_only`',
            )
        if key not in QUERY_KEYS:
            raise _bad(
                "unknown_query_key",
                f"unknown query key `{key}`",
                candidates=closest(key, QUERY_KEYS) or list(QUERY_KEYS),
                hint="valid keys: " + ", ".join(QUERY_KEYS),
            )
    cache_option(data)  # `cache` is true or false; where the answer comes from, not a field
    metrics = data.get("metrics")
    if metrics is None or metrics == []:
        raise _bad(
            "empty_query",
            "the query names no metrics",
            hint='add at least one metric: {"metrics": ["<metric>"]}',
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, list) or not all(isinstance(m, str) and m for m in metrics):
        raise _bad("invalid_query", "`metrics` must be a list of metric names")
    group_by = tuple(_group_by_item(g) for g in _as_list(data.get("group_by"), "group_by"))
    where = data.get("where_sql")
    if where is not None and not isinstance(where, str):
        raise _bad("invalid_query", "`where_sql` must be a SQL predicate string")
    if isinstance(where, str) and not where.strip():
        where = None
    context = data.get("context_filter")
    if context is not None and not isinstance(context, str):
        raise _bad("invalid_query", "`context_filter` must be a SQL predicate string")
    query = Query(
        metrics=tuple(dict.fromkeys(metrics)),
        group_by=group_by,
        where_sql=where,
        time_range=_time_range(data.get("time_range")),
        order_by=tuple(_order_item(o) for o in _as_list(data.get("order_by"), "order_by")),
        limit=_limit(data.get("limit")),
        params=parse_params(data.get("params")),
        time_ranges=parse_time_ranges(data.get("time_ranges"), parse_when),
        context_filter=context,
        densify=parse_densify(data.get("densify")),
        week_start=parse_week_start(data.get("week_start")),
    )
    if query.time_ranges and query.time_range is not None:
        raise _bad(
            "unsupported_filter",
            "time_range and time_ranges are mutually exclusive",
            hint="pass every window as a tagged entry of time_ranges",
        )
    _check_range_order(query)
    return query


def _check_range_order(query: Query) -> None:
    """A reversed or empty time_range is an error (friendlier than an empty result), with the
    bounds swapped in `suggested_retry`."""
    tr = query.time_range
    if tr is None or tr.start is None or tr.end is None or _as_dt(tr.start) < _as_dt(tr.end):
        return
    retry = None
    if _as_dt(tr.start) > _as_dt(tr.end):
        retry = query_to_dict(replace(query, time_range=replace(tr, start=tr.end, end=tr.start)))
    raise _bad(
        "unsupported_filter",
        f"time_range start {tr.start} is not before end {tr.end} (start is inclusive, end "
        "exclusive), so no row could match",
        hint="swap the bounds" if retry is not None else "widen the range: end after start",
        suggested_retry=retry,
    )


def _as_list(value: Any, key: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        return [value]
    if not isinstance(value, list):
        raise _bad("invalid_query", f"`{key}` must be a list")
    return value


def _grain(value: Any, spelling: str) -> str | None:
    """A grain or date part of the vocabulary (dosi.ext.grains), or a name a calendar table
    may define: checked against the model's calendar at resolution (dosi.query.calendar)."""
    if value is None:
        return None
    known = (*KNOWN_GRAINS, *DATE_PARTS)
    if isinstance(value, str) and value.lower() in known:
        return value.lower()
    if isinstance(value, str) and value.isidentifier() and len(value) <= 100:
        return value  # a calendar-table grain keeps its declared spelling
    shown = value[:40] if isinstance(value, str) else bounded(value, 40)
    raise _bad(
        "unknown_grain",
        f"unknown time grain `{shown}` in `{spelling[:80]}`",
        candidates=closest(str(value), known) or list(KNOWN_GRAINS),
        hint="grains: " + ", ".join(KNOWN_GRAINS),
    )


def _group_by_item(item: Any) -> GroupByItem:
    if isinstance(item, str):
        text = item.strip()
        name, sep, grain = text.partition(":")
        if not name:
            raise _bad("invalid_query", f"empty group_by item `{item}`")
        if (sep and grain.strip().lower() in STREAM_WINDOW_TYPES) or "(" in grain:
            return GroupByItem(name.strip(), None, text, parse_window_text(grain.strip(), text))
        return GroupByItem(name.strip(), _grain(grain.strip() or None, text) if sep else None, text)
    if isinstance(item, dict):
        extra = set(item) - {"field", "grain", "window", "via"}
        if extra:
            raise _bad(
                "unknown_query_key",
                f"unknown group_by key `{sorted(extra)[0]}`",
                candidates=["field", "grain", "window", "via"],
            )
        field = item.get("field")
        if not isinstance(field, str) or not field.strip():
            raise _bad(
                "invalid_query",
                "a group_by object needs a `field` string",
                hint='e.g. {"field": "metric_time", "grain": "month"}',
            )
        spelling = field if item.get("grain") is None else f"{field}:{item['grain']}"
        window = None
        if item.get("window") is not None:
            window = parse_window_object(item["window"], field)
            spelling = f"{field.strip()}:{format_window(window)}"  # canonical string form
        grain = _grain(item.get("grain"), spelling)
        return GroupByItem(field.strip(), grain, spelling, window, _via(item.get("via"), field))
    raise _bad("invalid_query", f"group_by items are strings or objects, got {bounded(item)}")


def _via(value: Any, field: str) -> tuple[str, ...] | None:
    """A group-by item's `via`: the hops of its join path, each a relationship name or the
    dataset the hop reaches (names only; the planner checks them against the model)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list)
        or len(value) > 16
        or not all(isinstance(v, str) and v.strip() and len(v) <= 200 for v in value)
    ):
        raise _bad(
            "invalid_query",
            f"`via` of the group_by item `{field[:80]}` must be a list of relationship or "
            f"dataset names, got {bounded(value, 60)}",
            hint='e.g. {"field": "users.home_state", "via": ["listings"]}',
        )
    return tuple(v.strip() for v in value)


def group_by_to_json(g: GroupByItem) -> str | dict[str, Any]:
    """A group-by item as the caller may write it again: its spelling, or the object form
    when it names a join path."""
    if g.via is None:
        return g.spelling
    out: dict[str, Any] = {"field": g.field}
    if g.grain is not None:
        out["grain"] = g.grain
    if g.window is not None:
        out["window"] = format_window(g.window)
    out["via"] = list(g.via)
    return out


def parse_when(value: Any, key: str) -> dt.date | dt.datetime | None:
    """An ISO date or naive timestamp. A bound with a UTC offset (`+02:00`, `Z`) is rejected,
    as the reference engine does: model timestamps carry no zone, so dropping or converting the
    offset would silently move the bound (docs/query.md)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            raise _offset_error(key, value.isoformat())
        return value
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise _bad("unsupported_filter", f"`time_range.{key}` must be an ISO date string")
    text = value.strip()
    shown = bounded(value, 60)
    if len(text) > 40:
        raise _bad("unsupported_filter", f"`time_range.{key}` = {shown} is not an ISO date")
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise _bad(
            "unsupported_filter",
            f"`time_range.{key}` = {shown} is not an ISO date (YYYY-MM-DD)",
            hint='write dates as "2025-01-31"',
        ) from None
    if when.tzinfo is not None:
        raise _offset_error(key, text)
    return when


def _offset_error(key: str, text: str) -> QueryError:
    return _bad(
        "unsupported_filter",
        f"`time_range.{key}` = `{text}` carries a UTC offset; time_range bounds are naive, in "
        "the time of the data",
        hint="drop the offset and write the bound as the data's own time, e.g. "
        '"2024-02-29T17:00:00" for 19:00+02:00 over UTC data',
    )


def _time_range(value: Any) -> TimeRange | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _bad("unsupported_filter", "`time_range` is an object {start, end, dimension}")
    extra = set(value) - {"start", "end", "dimension"}
    if extra:
        raise _bad(
            "unknown_query_key",
            f"unknown time_range key `{sorted(extra)[0]}`",
            candidates=["start", "end", "dimension"],
        )
    start = parse_when(value.get("start"), "start")
    end = parse_when(value.get("end"), "end")
    if start is None and end is None:
        raise _bad(
            "unsupported_filter",
            "a time_range needs a start, an end, or both",
            hint='e.g. "time_range": {"start": "2025-01-01", "end": "2025-07-01"}',
        )
    dim = value.get("dimension")
    if dim is not None and not isinstance(dim, str):
        raise _bad("unsupported_filter", "`time_range.dimension` must be a field name")
    return TimeRange(start, end, dim)


def _as_dt(v: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    return dt.datetime(v.year, v.month, v.day)


def _order_item(item: Any) -> OrderItem:
    if isinstance(item, str):
        text = item.strip()
        desc = False
        if text.startswith("-"):
            text, desc = text[1:], True
        low = text.lower()
        for suffix, flag in ((" desc", True), (" asc", False)):
            if low.endswith(suffix):
                text, desc = text[: -len(suffix)].strip(), flag
        return OrderItem(text, desc)
    if isinstance(item, dict):
        extra = set(item) - {"key", "desc", "nulls"}
        if extra:
            raise _bad(
                "unknown_query_key",
                f"unknown order_by key `{sorted(extra)[0]}`",
                candidates=["key", "desc", "nulls"],
            )
        key = item.get("key")
        if not isinstance(key, str) or not key:
            raise _bad("invalid_query", "an order_by item needs a `key` string")
        desc = item.get("desc", False)
        if not isinstance(desc, bool):
            raise _bad("invalid_query", "`desc` in order_by must be true or false")
        nulls = item.get("nulls")
        if nulls is not None and nulls not in ("first", "last"):
            raise _bad("invalid_query", '`nulls` in order_by must be "first" or "last"')
        return OrderItem(key, desc, nulls)
    raise _bad("invalid_query", f"order_by items are objects {{key, desc}}, got {bounded(item)}")


def _limit(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
        raise _bad(
            "invalid_query",
            f"`limit` must be an integer from 0 to {MAX_LIMIT}, got {bounded(value, 40)}",
        )
    return value


def query_to_dict(q: Query) -> dict[str, Any]:
    """The canonical JSON form (used in suggested_retry and as the plan-cache key)."""
    out: dict[str, Any] = {"metrics": list(q.metrics)}
    if q.group_by:
        out["group_by"] = [group_by_to_json(g) for g in q.group_by]
    if q.where_sql:
        out["where_sql"] = q.where_sql
    if q.context_filter is not None:
        out["context_filter"] = q.context_filter
    if q.time_range:
        tr: dict[str, Any] = {}
        if q.time_range.start is not None:
            tr["start"] = q.time_range.start.isoformat()
        if q.time_range.end is not None:
            tr["end"] = q.time_range.end.isoformat()
        if q.time_range.dimension:
            tr["dimension"] = q.time_range.dimension
        out["time_range"] = tr
    if q.order_by:
        out["order_by"] = [
            {"key": o.key, "desc": o.desc, **({"nulls": o.nulls} if o.nulls else {})}
            for o in q.order_by
        ]
    if q.limit is not None:
        out["limit"] = q.limit
    if q.params:
        out["params"] = params_to_dict(q.params)
    if q.time_ranges:
        out["time_ranges"] = [r.to_dict() for r in q.time_ranges]
    if q.densify is not None:
        out["densify"] = False if q.densify == "none" else q.densify
    if q.week_start is not None:
        out["week_start"] = q.week_start
    return out


# shared with detail-row and attribution requests (dosi.query.detail, dosi.query.attribution)
order_item = _order_item
parse_limit = _limit
parse_time_range = _time_range
