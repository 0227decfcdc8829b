"""Metric dimensions (docs/metric-dimensions.md): a metric's value per entity, used as a
dimension of the query (`where_sql`, `group_by`), MetricFlow's `{{ Metric('bookings',
group_by=['listing']) }} > 2`.

```json
{"metrics": ["listing_count"],
 "metric_dimensions": {"listing_bookings": {"metric": "bookings", "by": ["listings.listing_id"]}},
 "where_sql": "listing_bookings > 2"}
```

The value on a row of the `by` fields' dataset (the host) is the metric grouped by those
fields: an inner metric query, computed over the context layer only (`time_range`,
`context_filter`, as a D-LOD fixed rollup; `where_sql` never reaches it), the D-LOD order of
operations. This module checks the declaration and builds what the outer query reads: a
dataset per metric dimension whose source is the inner query's SQL tree, joined many-to-one
(LEFT, NULL-safe keys are not needed: the keys are the host's own) to the host on the keys, and
the query with each bare name pointed at that dataset's value column. The inner query itself is
compiled by the caller (`dosi.pipeline`), which owns every layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.ir.model import DatasetIr, FieldIr, ModelIr, RelationshipIr

KEY = "metric_dimensions"
PREFIX = "dosi_md_"  # the dataset a metric dimension becomes (never a model dataset name)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONTEXT = ("time_range", "context_filter")


@dataclass(frozen=True)
class MetricDimension:
    name: str
    metric: str
    by: tuple[FieldIr, ...]  # fields of one dataset (the host)

    @property
    def host(self) -> str:
        return self.by[0].dataset

    @property
    def dataset(self) -> str:
        return PREFIX + self.name

    def inner_query(self, outer: Mapping[str, Any]) -> dict[str, Any]:
        """The metric grouped by the keys, under the outer query's context layer."""
        q: dict[str, Any] = {"metrics": [self.metric], "group_by": [f.qualified for f in self.by]}
        q.update({k: outer[k] for k in _CONTEXT if outer.get(k) is not None})
        return q


@dataclass(frozen=True)
class InnerResult:
    """The compiled inner query: its SQL tree, the column of each key and of the value."""

    tree: exp.Expression
    key_columns: tuple[str, ...]
    value_column: str


def _bad(message: str, hint: str) -> QueryShapeError:
    return QueryShapeError("invalid_query", message, hint=hint)


_HINT = '"metric_dimensions": {"<name>": {"metric": "<metric>", "by": ["<dataset>.<key field>"]}}'


def parse_metric_dimensions(model: ModelIr, raw: Any) -> tuple[MetricDimension, ...]:
    """The declarations, checked against the model (names, metric, keys of one dataset)."""
    if not isinstance(raw, dict) or not raw:
        raise _bad("`metric_dimensions` must be a non-empty object of name -> declaration", _HINT)
    out = []
    for name, decl in raw.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _bad(f"metric dimension name {name!r} is not an identifier", _HINT)
        if name in model.metrics:
            raise QueryError(
                "duplicate_output_name",
                f"metric dimension `{name}` has the name of a metric: a filter on it would "
                "read as a metric filter",
                hint="name the metric dimension after its entity, e.g. `listing_bookings`",
            )
        if not isinstance(decl, dict) or set(decl) - {"metric", "by"} or "metric" not in decl:
            raise _bad(f"metric dimension `{name}` takes `metric` and `by`", _HINT)
        metric = decl["metric"]
        if not isinstance(metric, str) or metric not in model.metrics:
            raise QueryError(
                "unknown_metric",
                f"metric dimension `{name}` reads metric {metric!r}, which the model lacks",
                candidates=closest(str(metric), list(model.metrics)),
                hint="name a metric of the model",
            )
        by_raw = decl.get("by")
        by_items = [by_raw] if isinstance(by_raw, str) else by_raw
        if not isinstance(by_items, list) or not by_items:
            raise _bad(f"metric dimension `{name}`: `by` lists the key fields", _HINT)
        out.append(MetricDimension(name, metric, tuple(_key(model, name, b) for b in by_items)))
        hosts = {f.dataset for f in out[-1].by}
        if len(hosts) > 1:
            raise QueryError(
                "invalid_query",
                f"metric dimension `{name}`: its `by` fields lie on several datasets "
                f"({', '.join(sorted(hosts))}); the value belongs to the rows of one",
                hint="name key fields of the one dataset whose rows carry the value",
            )
    return tuple(out)


def _key(model: ModelIr, name: str, item: Any) -> FieldIr:
    text = item if isinstance(item, str) else ""
    ds, _, fname = text.partition(".")
    field = model.datasets[ds].fields.get(fname) if ds in model.datasets else None
    if field is None:
        everything = [f.qualified for d in model.datasets.values() for f in d.fields.values()]
        raise QueryError(
            "unknown_field",
            f"metric dimension `{name}`: `by` entry {item!r} is not a `dataset.field` of the model",
            candidates=closest(text, everything),
            hint="write the key as dataset.field",
        )
    return field


def with_metric_dimensions(
    model: ModelIr,
    raw: dict[str, Any],
    compile_inner: Callable[[dict[str, Any]], InnerResult],
) -> tuple[ModelIr, dict[str, Any], tuple[MetricDimension, ...]]:
    """The model with one joined dataset per metric dimension, and the query (without the
    key) reading them."""
    dims = parse_metric_dimensions(model, raw[KEY])
    bound = raw.get("params")
    for md in dims:
        declared = model.metrics[md.metric].params
        if isinstance(bound, dict) and declared is not None:
            names = sorted(n for n in bound if declared.decl(str(n)) is not None)
            if names:  # never a silent default where the caller bound a value
                raise QueryError(
                    "not_implemented",
                    f"metric dimension `{md.name}`: its metric `{md.metric}` declares the "
                    f"param(s) {', '.join(names)} the query binds, and a metric dimension is "
                    "computed at the metric's declared defaults",
                    hint="query the metric dimension without binding its metric's params",
                )
    datasets = dict(model.datasets)
    rels = list(model.relationships)
    for md in dims:
        inner = compile_inner(md.inner_query(raw))
        if isinstance(inner.tree, exp.Select):  # a subquery's order means nothing
            inner.tree.set("order", None)
        datasets[md.dataset] = _dataset(md, inner)
        rels.append(_relationship(md, inner))
    out = replace(model, datasets=MappingProxyType(datasets), relationships=tuple(rels))
    query = {k: v for k, v in raw.items() if k != KEY}
    names = {md.name: md for md in dims}
    if isinstance(query.get("where_sql"), str):
        query["where_sql"] = _point(query["where_sql"], names)
    gb = query.get("group_by")
    if isinstance(gb, (list, str)):
        items = [gb] if isinstance(gb, str) else gb
        query["group_by"] = [
            f"{names[g].dataset}.{g}" if isinstance(g, str) and g in names else g for g in items
        ]
    return out, query, dims


def _column(table: str, name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(table))


def _dataset(md: MetricDimension, inner: InnerResult) -> DatasetIr:
    fields: dict[str, FieldIr] = {}
    for f, col in zip(md.by, inner.key_columns, strict=True):
        fields[f"{md.name}__{f.name}"] = replace(
            f, dataset=md.dataset, name=f"{md.name}__{f.name}", expr=_column(md.dataset, col)
        )
    fields[md.name] = FieldIr(
        dataset=md.dataset,
        name=md.name,
        expr=_column(md.dataset, inner.value_column),
        datatype=None,
        is_time=False,
        time_granularity=None,
        is_dimension=True,
        description=f"metric `{md.metric}` per {', '.join(f.qualified for f in md.by)}",
    )
    return DatasetIr(
        name=md.dataset,
        source=exp.Subquery(this=inner.tree),
        primary_key=tuple(fields)[: len(md.by)],
        unique_keys=(),
        fields=MappingProxyType(fields),
        primary_time=None,
    )


def _relationship(md: MetricDimension, inner: InnerResult) -> RelationshipIr:
    return RelationshipIr(
        name=f"{md.host}_to_{md.dataset}",
        from_dataset=md.host,
        to_dataset=md.dataset,
        from_exprs=tuple(f.expr.copy() for f in md.by),
        to_exprs=tuple(_column(md.dataset, c) for c in inner.key_columns),
        from_columns=tuple(f.name for f in md.by),
        to_columns=inner.key_columns,
        join_type="left",
    )


def _point(text: str, names: Mapping[str, MetricDimension]) -> str:
    """`where_sql` with each bare metric dimension name as its dataset's column."""
    try:
        tree = sqlglot.parse_one(text)
    except sqlglot.errors.ParseError:
        return text  # the where_sql parser reports it, as for any query

    def sub(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name in names:
            return _column(names[n.name].dataset, n.name)
        return n

    return tree.transform(sub).sql()


__all__ = ["KEY", "InnerResult", "MetricDimension", "with_metric_dimensions"]
