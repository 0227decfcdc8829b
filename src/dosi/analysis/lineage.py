"""Lineage: physical tables -> datasets -> measures -> metrics, and the joins between datasets.

The JSON graph keeps the reference engine's envelope (`version`, `model`, `mode`, `layers`,
`nodes`, `edges`); with a metric it is cut down to what that metric reads and adds a `tree`
(the metric, its measures, their datasets and the joins its dimensions can use), which
`lineage_text` draws (CHECKLIST SURF-CLI-05, `dosi lineage`).
"""

from __future__ import annotations

from typing import Any

from dosi.catalog.views import window_summary
from dosi.errors import QueryError, closest
from dosi.ir.graph import RelationshipGraph
from dosi.ir.lod_metric_catalog import lod_lineage
from dosi.ir.model import MetricIr, ModelIr
from dosi.ir.percentile import written

LAYERS = (
    {"index": 0, "kind": "physical_table", "label": "physical table"},
    {"index": 1, "kind": "dataset", "label": "dataset"},
    {"index": 2, "kind": "metric_atomic", "label": "atomic metric"},
    {"index": 3, "kind": "metric_derived", "label": "derived metric"},
)


def _table(model: ModelIr, dataset: str, redact: bool) -> str:
    src = model.datasets[dataset].source
    text = src.sql()
    if redact and not text.replace(".", "").replace("_", "").isalnum():
        return f"<sql:{dataset}>"
    return text


def _metric_tree(model: ModelIr, graph: RelationshipGraph, m: MetricIr, redact: bool) -> dict:
    measures = []
    for name in m.measures:
        ms = model.measures[name]
        measures.append(
            {
                "name": name,
                "agg": ms.agg,
                "expression": written(ms.expr),  # a percentile in its ANSI spelling
                "dataset": ms.dataset,
                "reads": sorted(ms.datasets),
            }
        )
    datasets = sorted({d for x in measures for d in x["reads"]} | set(m.datasets))
    joins = []
    reach = set(datasets)
    frontier = list(datasets)
    while frontier:
        cur = frontier.pop()
        for r in graph.up.get(cur, ()):
            joins.append(
                {
                    "name": r.name,
                    "from": r.from_dataset,
                    "to": r.to_dataset,
                    "join_type": r.join_type,
                    "columns": [list(p) for p in zip(r.from_columns, r.to_columns, strict=True)],
                }
            )
            if r.to_dataset not in reach:
                reach.add(r.to_dataset)
                frontier.append(r.to_dataset)
    return {
        "metric": m.name,
        "kind": m.kind,
        "expression": m.source_sql,
        "window": window_summary(m.window),
        "time_dimension": m.time_axis,
        "measures": measures,
        "datasets": [
            {"name": d, "source": _table(model, d, redact)}
            for d in sorted(reach, key=lambda d: (d not in datasets, d))
        ],
        "joins": joins,
    }


def lineage_graph(
    model: ModelIr, graph: RelationshipGraph, metric: str | None = None, redact_sql: bool = False
) -> dict[str, Any]:
    if metric is not None and not isinstance(metric, str):
        raise QueryError("invalid_query", "lineage takes a metric name (a string) or nothing")
    if metric is not None and metric not in model.metrics:
        raise QueryError(
            "unknown_metric",
            f"unknown metric `{metric}`",
            candidates=closest(metric, model.metrics) or list(model.metrics),
            hint="list metrics with `dosi list metrics`",
        )
    keep_metrics = [model.metrics[metric]] if metric else list(model.metrics.values())
    tree = _metric_tree(model, graph, keep_metrics[0], redact_sql) if metric else None
    keep_ds = [d["name"] for d in tree["datasets"]] if tree is not None else list(model.datasets)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    tables: dict[str, list[str]] = {}
    for d in keep_ds:
        tables.setdefault(_table(model, d, redact_sql), []).append(d)
    for t, ds in tables.items():
        nodes.append(
            {
                "id": f"table:{t}",
                "kind": "physical_table",
                "layer": 0,
                "name": t,
                "label": t,
                "detail": {"table": t, "datasets": ds},
            }
        )
    for d in keep_ds:
        ir = model.datasets[d]
        t = _table(model, d, redact_sql)
        nodes.append(
            {
                "id": f"dataset:{d}",
                "kind": "dataset",
                "layer": 1,
                "name": d,
                "label": d,
                "detail": {
                    "source": t,
                    "primary_key": list(ir.primary_key),
                    "primary_time_dimension": ir.primary_time,
                    "field_count": len(ir.fields),
                },
            }
        )
        edges.append(
            {
                "id": f"reads_table:table:{t}->dataset:{d}",
                "kind": "reads_table",
                "source": f"table:{t}",
                "target": f"dataset:{d}",
                "via": "source",
            }
        )
    for r in model.relationships:
        if r.from_dataset in keep_ds and r.to_dataset in keep_ds:
            edges.append(
                {
                    "id": f"join:{r.name}",
                    "kind": "join",
                    "source": f"dataset:{r.from_dataset}",
                    "target": f"dataset:{r.to_dataset}",
                    "name": r.name,
                    "join_kind": r.join_type,
                    "column_pairs": [
                        list(p) for p in zip(r.from_columns, r.to_columns, strict=True)
                    ],
                    "cardinality": "many_to_one",
                }
            )
    shown = {m.name for m in keep_metrics}
    for m in keep_metrics:
        lod_family, lod_members = lod_lineage(m)  # D-LOD: the base / compose members
        derived = m.window is not None or m.derive is not None or lod_family is not None
        nodes.append(
            {
                "id": f"metric:{m.name}",
                "kind": "metric_derived" if derived else "metric_atomic",
                "layer": 3 if derived else 2,
                "name": m.name,
                "label": m.name,
                "detail": {
                    "kind": m.kind,
                    "tier": "derived" if derived else "atomic",
                    "description": m.description,
                    "expression": m.source_sql,
                    "datasets": sorted(m.datasets),
                    "measures": list(m.measures),
                    "window": window_summary(m.window),
                    "derive_family": m.derive.family if m.derive is not None else lod_family,
                },
            }
        )
        # D-DERIVE: the member edges as written (DRV-NEST-07)
        written = m.derive.written if m.derive is not None else lod_members
        for member in written:
            if member in shown:
                edges.append(
                    {
                        "id": f"derives:metric:{member}->metric:{m.name}",
                        "kind": "derives",
                        "source": f"metric:{member}",
                        "target": f"metric:{m.name}",
                        "family": m.derive.family if m.derive is not None else lod_family,
                    }
                )
        for d in sorted(m.datasets):
            edges.append(
                {
                    "id": f"aggregates:dataset:{d}->metric:{m.name}",
                    "kind": "aggregates",
                    "source": f"dataset:{d}",
                    "target": f"metric:{m.name}",
                    "measures": [x for x in m.measures if model.measures[x].dataset == d],
                }
            )
    out: dict[str, Any] = {
        "version": 2,
        "model": model.name,
        "mode": model.mode,
        "layers": list(LAYERS),
        "nodes": nodes,
        "edges": edges,
    }
    if tree is not None:
        out["metric"] = metric
        out["tree"] = tree
    return out


def lineage_text(graph: dict[str, Any]) -> str:
    """The metric's tree, drawn for a terminal."""
    t = graph["tree"]
    head = f"{t['metric']}  ({t['kind']}"
    if t["window"]:
        head += f", window {t['window'].get('family')}"
    head += f"): {t['expression']}"
    lines = [head]
    parts: list[tuple[str, list[str]]] = []
    for ms in t["measures"]:
        parts.append((f"measure {ms['name']} = {ms['expression']}", [f"dataset {ms['dataset']}"]))
    parts.append(("datasets", [f"{d['name']}  <- {d['source']}" for d in t["datasets"]]))
    if t["joins"]:
        parts.append(
            (
                "joins (many-to-one)",
                [
                    f"{j['from']} -> {j['to']}  ({j['name']}, {j['join_type']}: "
                    + ", ".join(f"{a} = {b}" for a, b in j["columns"])
                    + ")"
                    for j in t["joins"]
                ],
            )
        )
    for i, (label, children) in enumerate(parts):
        last = i == len(parts) - 1
        lines.append(("└─ " if last else "├─ ") + label)
        pad = "   " if last else "│  "
        for j, c in enumerate(children):
            lines.append(pad + ("└─ " if j == len(children) - 1 else "├─ ") + c)
    return "\n".join(lines) + "\n"
