"""Catalog answers cut to what a user sees (issue 30 item 3): hidden metrics, fields and
datasets are absent from listings, the semantic-SQL virtual table and error candidates."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dosi.access.scope import AccessScope
from dosi.errors import OsiError
from dosi.query.semantic_sql import VirtualTable


def visible_metrics(scope: AccessScope, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [visible_metric(scope, r) for r in rows if r.get("name") in scope.metrics]


def visible_metric(scope: AccessScope, row: dict[str, Any]) -> dict[str, Any]:
    """One visible metric's definition without the names of hidden datasets or fields."""
    out = dict(row)
    if isinstance(out.get("dimension_datasets"), list):
        out["dimension_datasets"] = [
            d for d in out["dimension_datasets"] if d.get("name") in scope.datasets
        ]
    if isinstance(out.get("required_dimensions"), list):
        out["required_dimensions"] = [
            d for d in out["required_dimensions"] if not isinstance(d, str) or d in scope.fields
        ]
    return out


def visible_datasets(scope: AccessScope, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_dataset_row(scope, r) for r in rows if r.get("name") in scope.datasets]


def _dataset_row(scope: AccessScope, row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    base = scope.base.datasets[row["name"]]
    out["source"] = base.source.sql()  # the model's source, not the filtered relation
    if isinstance(row.get("fields"), list):
        out["fields"] = [
            f for f in row["fields"] if f"{row['name']}.{f.get('name')}" in scope.fields
        ]
    elif isinstance(row.get("fields"), int):
        out["fields"] = sum(1 for f in base.fields.values() if f.qualified in scope.fields)
    if isinstance(row.get("relationships"), list):
        out["relationships"] = [r for r in row["relationships"] if r.get("to") in scope.datasets]
    return out


def visible_dataset(scope: AccessScope, row: dict[str, Any]) -> dict[str, Any]:
    return _dataset_row(scope, row)


def visible_dimensions(scope: AccessScope, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fields the user sees; the `metric_time` rows stay (each metric's own time axis)."""
    return [r for r in rows if "dataset" not in r or r.get("name") in scope.fields]


def visible_table(scope: AccessScope, table: VirtualTable) -> VirtualTable:
    """The virtual table without hidden metric and dimension columns."""

    def keep(c: Any) -> bool:
        if c.is_metric:
            return c.name in scope.metrics
        return c.field == "metric_time" or c.field in scope.fields

    return replace(
        table,
        columns=tuple(c for c in table.columns if keep(c)),
        hidden=tuple(c for c in table.hidden if keep(c)),
        _by_name={},
    )


def without_hidden_candidates(scope: AccessScope, err: OsiError) -> OsiError:
    """An error's candidates and retry never name what the user may not see."""
    err.candidates = [
        c
        for c in err.candidates
        if scope.visible_name(c) or c == "metric_time" or c.startswith("metric_time")
    ]
    if err.suggested_retry is not None and _names_hidden(scope, err.suggested_retry):
        err.suggested_retry = None
    return err


def _names_hidden(scope: AccessScope, value: Any) -> bool:
    names = set(scope.base.metrics) | {
        f.qualified for d in scope.base.datasets.values() for f in d.fields.values()
    }
    text = repr(value)
    return any(n in text for n in names if not scope.visible_name(n))
