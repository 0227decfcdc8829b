"""Catalog views of a compiled model: metrics, datasets and dimensions as JSON-able dicts."""

from __future__ import annotations

from typing import Any

from dosi.catalog.conform import (
    conformed_edge_row,
    conformity_columns,
    shared_by_owners,
    shared_time_axis,
)
from dosi.catalog.params import metric_params, param_schema
from dosi.errors import QueryError, closest
from dosi.ext import WindowSpec
from dosi.ir.conform import conformity
from dosi.ir.derive import EMPTY_CATALOG
from dosi.ir.lod_field_catalog import lod_field_columns
from dosi.ir.lod_metric_catalog import lod_summary
from dosi.ir.model import GRAINS, FieldIr, MetricIr, ModelIr
from dosi.plan.attribution import attribution_strategy, listed_attributable
from dosi.plan.joins import JoinGraph
from dosi.plan.window import aligned_grains
from dosi.query.resolve import METRIC_TIME

_SOURCES = {
    "declared": "declared",
    "primary_key": "inferred:primary_key",
    "unique_key": "inferred:unique_key",
    "relationship_column": "inferred:foreign_key",
    "measured": "inferred:measure",
    "time": "inferred:time",
    "default": "inferred",
}


class Catalog:
    def __init__(self, model: ModelIr, graph: JoinGraph) -> None:
        self.model = model
        self.graph = graph

    def _metric_ir(self, name: str) -> MetricIr:
        m = self.model.metrics.get(name)
        if m is None:
            raise QueryError(
                "unknown_metric",
                f"unknown metric `{name}`",
                candidates=closest(name, self.model.metrics) or sorted(self.model.metrics),
                hint="list metrics with `dosi list metrics`",
            )
        return m

    def _summary(self, m: MetricIr) -> dict[str, Any]:
        w = m.window
        strategy = attribution_strategy(self.model, m)
        return {
            "name": m.name,
            "kind": m.kind,
            "datasets": sorted(m.datasets),
            "measures": list(m.measures),
            "time_dimension": m.time_axis,
            "description": m.description,
            "window_family": w.family if w is not None else None,
            "window_function": _window_function(w),
            "params": metric_params(self.model, m),
            "attributable": listed_attributable(m, strategy),
            "attribution_strategy": strategy.name,
            # D-DERIVE metadata (DRV-META-01)
            **(m.derive.catalog() if m.derive is not None else EMPTY_CATALOG),
            "required_dimensions": required_dimensions(self.model, m),
            **lod_summary(m),
            # D-SEMI / D-CONVERSION declarations as compiled (None on other metrics)
            "semi_additive": m.semi_additive.catalog() if m.semi_additive is not None else None,
            "conversion": m.conversion.catalog() if m.conversion is not None else None,
        }

    def metrics(self) -> list[dict[str, Any]]:
        return [self._summary(m) for m in self.model.metrics.values()]

    def metric(self, name: str) -> dict[str, Any]:
        m = self._metric_ir(name)
        out = self._summary(m)
        w = m.window
        explicit = [x for x in m.measures if self.model.measures[x].explicit_name]
        needs_axis = bool(w is not None and w.needs_time_axis)
        grains = self._grains(m)
        out.update(
            {
                "param_schema": param_schema(self.model, m),
                "expr": m.source_sql,
                "datatype": m.datatype,
                "fill_nulls_with": m.fill_nulls_with,
                "explicit_measure": explicit[0] if explicit else None,
                "window": _window_dict(w),
                "requires_time_axis": needs_axis,
                "time_granularities": grains,
                "dimension_datasets": [{"name": d} for d in self._reachable(m)],
            }
        )
        return out

    def _grains(self, m: MetricIr) -> list[str]:
        """The grains `metric_time` takes for `m`: every grain at or above its axis's stored
        grain (D-GRAIN), and for an offset window only those its shift lands on."""
        w = m.window
        needs_axis = bool(w is not None and w.needs_time_axis)
        axis = m.time_axis or shared_time_axis(self.model, m)  # D-CONFORM CONF-06
        if axis is None and not needs_axis:
            return []
        shift = w.shift if w is not None else None
        if shift is not None:
            grains = aligned_grains(shift.count, shift.granularity)
        else:
            grains = list(GRAINS)
        if axis is not None:
            native = self.model.field(axis).time_granularity
            if native is not None:
                grains = [g for g in grains if GRAINS.index(g) >= GRAINS.index(native)]
        return grains

    def _metric_time(self, metrics: list[MetricIr]) -> list[dict[str, Any]]:
        """`metric_time` rows: one per distinct (time axis, grains) among `metrics`, naming the
        axis it resolves to and the grains it allows (D-TIME, D-GRAIN, D-WINDOW offsets)."""
        groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for m in metrics:
            grains = self._grains(m)
            axis = m.time_axis or shared_time_axis(self.model, m)  # D-CONFORM CONF-06
            if axis is None or not grains:
                continue
            groups.setdefault((axis, tuple(grains)), []).append(m.name)
        out = []
        for (axis, grains), names in groups.items():
            f = self.model.field(axis)
            out.append(
                {
                    "name": METRIC_TIME,
                    "dataset": f.dataset,
                    "is_time": True,
                    "is_dimension": True,
                    "source": "inferred:time",
                    "time_granularity": f.time_granularity
                    or ("day" if f.datatype == "Date" else None),
                    "datatype": f.datatype,
                    **time_format_columns(f),
                    "description": f"the metric's time axis, {axis}",
                    "time_axis": axis,
                    "grains": list(grains),
                    "metrics": names,
                }
            )
        return out

    def _reachable(self, m: MetricIr) -> list[str]:
        owners = sorted(m.datasets)
        out = list(owners)
        for d in self.model.datasets:
            if d not in out and all(self.graph.reachable(o, d) for o in owners):
                out.append(d)
        return out

    def datasets(self) -> list[dict[str, Any]]:
        return [
            {
                "name": d.name,
                "source": d.source.sql(),
                "primary_key": list(d.primary_key),
                "fields": len(d.fields),
                "time_dimensions": [f.name for f in d.fields.values() if f.is_time],
                "primary_time_dimension": d.primary_time,
                "description": d.description,
            }
            for d in self.model.datasets.values()
        ]

    def dataset(self, name: str) -> dict[str, Any]:
        d = self.model.datasets.get(name)
        if d is None:
            raise QueryError(
                "unknown_dataset",
                f"unknown dataset `{name}`",
                candidates=closest(name, self.model.datasets) or sorted(self.model.datasets),
            )
        rels = []
        # D-CONFORM: conformed edges are listed too, as many_to_many pairings
        for r in (*self.model.relationships, *conformity(self.model).edges):
            if r.kind == "many_to_many" and name in (r.from_dataset, r.to_dataset):
                rels.append(conformed_edge_row(r, name))
            elif r.from_dataset == name:
                rels.append(
                    {
                        "name": r.name,
                        "to": r.to_dataset,
                        "cardinality": "many_to_one",
                        "join_type": r.join_type,
                        "columns": [
                            list(p) for p in zip(r.from_columns, r.to_columns, strict=True)
                        ],
                    }
                )
            elif r.to_dataset == name:
                rels.append(
                    {
                        "name": r.name,
                        "to": r.from_dataset,
                        "cardinality": "one_to_many",
                        "join_type": r.join_type,
                        "columns": [
                            list(p) for p in zip(r.to_columns, r.from_columns, strict=True)
                        ],
                    }
                )
        return {
            "name": d.name,
            "source": d.source.sql(),
            "primary_time_dimension": d.primary_time,
            "primary_key": list(d.primary_key),
            "description": d.description,
            "fields": [
                {
                    "name": f.name,
                    "is_time": f.is_time,
                    "datatype": f.datatype,
                    "expression": f.source_sql,
                    **({"time_format": f.time_format.format} if f.time_format else {}),
                    **({"lod": f.lod.text} if f.lod is not None else {}),
                    "description": f.description,
                }
                for f in d.fields.values()
            ],
            "relationships": rels,
        }

    def dimensions(self, metric: str | None = None) -> list[dict[str, Any]]:
        """`metric_time` (per distinct time axis, with the grains it allows), then every field
        with its D-DIM role; with `metric`, only what it accepts: its metric_time and the
        fields it reaches many-to-one, its own datasets first."""
        if metric is not None:
            m = self._metric_ir(metric)
            reach = self._reachable(m)
            rank = {d: i for i, d in enumerate(reach)}
            datasets = [self.model.datasets[d] for d in reach]
        else:
            rank = {}
            datasets = list(self.model.datasets.values())
        shared = shared_by_owners(self.model, self.graph, m) if metric is not None else None
        out = []
        for d in datasets:
            for f in d.fields.values():
                if shared is not None and f.qualified not in shared:
                    continue  # D-CONFORM: a cross-fact metric reads only what all facts share
                is_dim, rule = self.model.dimension_roles.get((d.name, f.name), (True, "default"))
                out.append(
                    {
                        "name": f.qualified,
                        "dataset": d.name,
                        "is_time": f.is_time,
                        "is_dimension": is_dim,
                        "source": _SOURCES.get(rule, rule),
                        "time_granularity": (
                            f.time_granularity or ("day" if f.datatype == "Date" else None)
                        )
                        if f.is_time
                        else None,
                        "datatype": f.datatype,
                        **time_format_columns(f),
                        **lod_field_columns(f),  # D-LOD fixed fields
                        "description": f.description,
                        **conformity_columns(self.model, f),  # D-CONFORM class, if paired
                    }
                )
        out.sort(key=lambda x: (not x["is_dimension"], rank.get(x["dataset"], 0), x["name"]))
        metrics = [m] if metric is not None else list(self.model.metrics.values())
        return [*self._metric_time(metrics), *out]


def required_dimensions(model: ModelIr, m: MetricIr) -> list[str]:
    """DRV-META-02: the dimensions a query must group by (a window partition's `exclude`),
    collected along the whole dependency chain (window bases and derive members)."""
    out: list[str] = []
    seen: set[str] = set()
    stack = [m]
    while stack:
        cur = stack.pop()
        if cur.name in seen:
            continue
        seen.add(cur.name)
        part = cur.window.partition_spec if cur.window is not None else None
        if part is not None and part.mode == "query_dimensions_except":
            out.extend(x for x in part.exclude if x not in out)
        refs = [*(cur.derive.written if cur.derive is not None else ())]
        if cur.window_base is not None:
            refs.append(cur.window_base)
        stack.extend(model.metrics[r] for r in reversed(refs) if r in model.metrics)
    return out


def _window_function(w: WindowSpec | None) -> str | None:
    return w.listed_function if w is not None else None


def _window_dict(w: WindowSpec | None) -> dict[str, Any] | None:
    return _jsonable(w.to_dict()) if w is not None else None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def window_summary(w: WindowSpec | None) -> dict[str, Any] | None:
    """A window payload as JSON (lineage and catalog views)."""
    return _window_dict(w)


def time_format_columns(f: FieldIr) -> dict[str, str | None]:
    """D-FORMAT FMT-FLT-05: the declared `time.format` and the storage it reads (inferred from
    the datatype when not declared); None for a field without a `time.format`."""
    fmt = f.time_format
    return {
        "time_format": fmt.format if fmt is not None else None,
        "time_storage": fmt.storage if fmt is not None else None,
    }
