"""Detail-row queries (`select`): parse and resolve, no rollup stage.

Shape (the reference engine's): `{"from", "fields", "where_sql", "context_filter", "time_range",
"order_by", "limit", "distinct"}`. Fields are `dataset.field` (optionally `:grain` on time
fields); every field must be reachable from `from` along many-to-one relationships, so one
`from` row is one output row (the fan-out rule of the metric plane, CHECKLIST SURF-CLI-07).
Output names: a field of `from` keeps its name, any other is `dataset__field`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.ext.grains import NATIVE_GRAINS, is_date_part
from dosi.ir.model import FieldIr, ModelIr
from dosi.query.request import request_object, shape_error
from dosi.query.resolve import ResolvedWhere, check_grain, find_field, resolve_where
from dosi.query.spec import OrderItem, TimeRange, order_item, parse_limit, parse_time_range

DETAIL_KEYS = (
    "from",
    "fields",
    "where_sql",
    "context_filter",
    "time_range",
    "order_by",
    "limit",
    "distinct",
)
DEFAULT_DETAIL_LIMIT = 100


@dataclass(frozen=True)
class DetailQuery:
    dataset: str
    fields: tuple[str, ...]
    where_sql: tuple[str, ...]  # where_sql and context_filter: both row filters here
    time_range: TimeRange | None
    order_by: tuple[OrderItem, ...]
    limit: int | None
    distinct: bool
    context_filter: str | None = None  # also in where_sql: it feeds D-LOD rollups too


@dataclass(frozen=True)
class DetailField:
    field: FieldIr
    grain: str | None
    output: str
    requested: str


@dataclass(frozen=True)
class ResolvedDetail:
    query: DetailQuery
    fields: tuple[DetailField, ...]
    where: tuple[ResolvedWhere, ...]
    time_field: FieldIr | None
    order: tuple[tuple[str, bool, str | None], ...]

    def requested_columns(self) -> list[dict[str, str]]:
        return [{"requested": f.requested, "column": f.output} for f in self.fields]


def _shape(message: str, **kw: Any) -> QueryShapeError:
    return shape_error("detail query", message, **kw)


def parse_detail(raw: Any) -> DetailQuery:
    raw = request_object(
        raw,
        DETAIL_KEYS,
        what="detail query",
        shape='a detail query is an object {"from", "fields", ...}',
    )
    src = raw.get("from")
    if not isinstance(src, str) or not src:
        raise _shape("missing field `from` (the dataset whose rows are listed)")
    fields = raw.get("fields")
    if isinstance(fields, str):
        fields = [fields]
    if fields is None:
        fields = []
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise _shape("`fields` must be a list of `dataset.field` names")
    wheres = []
    for key in ("where_sql", "context_filter"):
        w = raw.get(key)
        if w is not None and not isinstance(w, str):
            raise _shape(f"`{key}` must be a SQL predicate string")
        if isinstance(w, str) and w.strip():
            wheres.append(w)
    order = raw.get("order_by") or []
    if isinstance(order, (str, dict)):
        order = [order]
    if not isinstance(order, list):
        raise _shape("`order_by` must be a list")
    distinct = raw.get("distinct", False)
    if not isinstance(distinct, bool):
        raise _shape("`distinct` must be true or false")
    return DetailQuery(
        dataset=src,
        fields=tuple(fields),
        where_sql=tuple(wheres),
        time_range=parse_time_range(raw.get("time_range")),
        order_by=tuple(order_item(o) for o in order),
        limit=parse_limit(raw.get("limit")),
        distinct=distinct,
        context_filter=_context_text(raw.get("context_filter")),
    )


def _context_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def resolve_detail(model: ModelIr, q: DetailQuery) -> ResolvedDetail:
    ds = model.datasets.get(q.dataset)
    if ds is None:
        raise QueryError(
            "unknown_dataset",
            f"unknown dataset `{q.dataset}`",
            candidates=closest(q.dataset, model.datasets) or list(model.datasets),
            hint="`from` names the dataset whose rows are listed",
        )
    if not q.fields:
        raise QueryError(
            "empty_query",
            "a detail query must project at least one field",
            candidates=[f.qualified for f in ds.fields.values()],
        )
    out: list[DetailField] = []
    seen: dict[str, str] = {}
    for spelling in q.fields:
        name, _, grain = spelling.partition(":")
        if name == "metric_time":
            raise QueryError(
                "unknown_dimension",
                "`metric_time` belongs to metric queries; a detail query lists stored fields",
                candidates=[f.qualified for f in ds.fields.values() if f.is_time],
            )
        f = find_field(model, None, name, role="dimension")
        g = grain or None
        if g is not None:
            # truncation grains (sub-day included, D-GRAIN), the model calendar's own (fiscal,
            # retail, calendar-table grains: issue 22 items 5 and 6) and date parts (item 3)
            if g not in NATIVE_GRAINS and model.calendar.kind(g) is None and not is_date_part(g):
                raise QueryShapeError(
                    "unknown_grain",
                    f"unknown grain `{g}` in `{spelling}`",
                    candidates=list(model.calendar.grains()),
                )
            if not f.is_time:
                raise QueryError(
                    "grain_on_non_time_dimension",
                    f"`{f.qualified}` is not a time field, so `:{g}` does not apply",
                )
            check_grain(model, f, g, spelling)
        base = f.name if f.dataset == ds.name else f"{f.dataset}__{f.name}"
        output = base if g is None else f"{base}__{g}"
        if output in seen:
            raise QueryError(
                "duplicate_output_name",
                f"two projected fields would both be named `{output}` ({seen[output]} and "
                f"{spelling})",
                hint="project one of them",
            )
        seen[output] = spelling
        out.append(DetailField(f, g, output, spelling))
    where = tuple(resolve_where(model, w) for w in q.where_sql)
    time_field = _time_field(model, q, ds.name) if q.time_range is not None else None
    order: list[tuple[str, bool, str | None]] = []
    names = {f.output: f.output for f in out}
    for f in out:
        names.setdefault(f.requested, f.output)
    for o in q.order_by:
        col = names.get(o.key)
        if col is None:
            raise QueryError(
                "unknown_order_key",
                f"order key `{o.key}` is not a projected column",
                candidates=[f.output for f in out],
                hint="project the field you want to order by, then order by its column name",
            )
        order.append((col, o.desc, o.nulls))
    return ResolvedDetail(q, tuple(out), where, time_field, tuple(order))


def _time_field(model: ModelIr, q: DetailQuery, dataset: str) -> FieldIr:
    tr = q.time_range
    assert tr is not None
    if tr.dimension:
        f = find_field(model, None, tr.dimension, role="dimension")
        if not f.is_time:
            raise QueryError(
                "grain_on_non_time_dimension",
                f"time_range.dimension `{f.qualified}` is not a time field",
            )
        return f
    ds = model.datasets[dataset]
    if ds.primary_time is None:
        raise QueryError(
            "time_range_needs_dimension",
            f"the time range does not say which time field it constrains, and dataset "
            f"`{dataset}` has no primary time dimension",
            candidates=[
                x.qualified for d in model.datasets.values() for x in d.fields.values() if x.is_time
            ],
            hint="set time_range.dimension, or declare the dataset's time_dimension (D-TIME)",
        )
    return ds.fields[ds.primary_time]
