"""The dbt side of the export: dbt's YAML spellings and the Ossie facts the writers read.

Pure functions: a custom_extensions payload, an ANSI expression, dbt-valid names, dbt's YAML
spelling of a parsed metric (windows as `2 month`, filters as template lists), the outermost
aggregates of an expression.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.compiler.fields import PREFERRED_OSI
from dosi.errors import OsiError

DBT = "DBT"
DATUS = "DATUS"
READ = "duckdb"
AGGS = {exp.Sum: "sum", exp.Avg: "average", exp.Min: "min", exp.Max: "max", exp.Median: "median"}


class ExportError(OsiError):
    """The document cannot be exported at all (code `invalid_model`)."""

    kind = "export_error"


def vendor_payload(obj: Mapping[str, Any], vendor: str) -> dict[str, Any]:
    """The decoded custom_extensions payload of `vendor` on `obj` ({} when none)."""
    for e in obj.get("custom_extensions") or ():
        if str(e.get("vendor_name", "")).upper() == vendor:
            try:
                data = json.loads(e.get("data") or "{}")
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def ansi_expression(obj: Mapping[str, Any]) -> str:
    """An Ossie expression object's ANSI_SQL text (else its first dialect's): the entry the
    compiler reads when no target dialect is given (`PREFERRED_OSI`)."""
    dialects = (obj.get("expression") or {}).get("dialects") or []
    texts: dict[Any, Any] = {}
    for d in dialects:
        texts.setdefault(d.get("dialect"), d.get("expression"))
    for name in PREFERRED_OSI:
        if name in texts:
            return str(texts[name])
    return str(dialects[0].get("expression")) if dialects else ""


def windows_as_text(value: Any) -> Any:
    """dbt's parsed windows (`{count, granularity}`) back in the YAML spelling (`2 month`)."""
    if isinstance(value, Mapping):
        if set(value) == {"count", "granularity"}:
            return f"{value['count']} {value['granularity']}"
        return {k: windows_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [windows_as_text(v) for v in value]
    return value


def dbt_name(name: str) -> str:
    """dbt names forbid `__` (its entity-path separator)."""
    while "__" in name:
        name = name.replace("__", "_")
    return name


def dbt_yaml(metric: Mapping[str, Any]) -> dict[str, Any]:
    """A metric parsed by dbt-semantic-interfaces in dbt's YAML spelling: windows as text,
    filters as template lists, no parser-only keys."""
    out = windows_as_text(filters_as_text(dict(metric)))
    tp = out.get("type_params") or {}
    ctp = tp.get("cumulative_type_params")
    if isinstance(ctp, dict):
        ctp.pop("metric", None)
    for k in ("input_measures", "metric_aggregation_params"):
        tp.pop(k, None)
    if tp.get("join_to_timespine") is False:
        tp.pop("join_to_timespine")
    if tp.get("is_private") is False:
        tp.pop("is_private")
    return out


def filters_as_text(value: Any) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {"where_filters"}:
            return [w["where_sql_template"] for w in value["where_filters"]]
        return {k: filters_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [filters_as_text(v) for v in value]
    return value


def aggregates(sql: str) -> tuple[exp.Expression, list[exp.AggFunc]] | None:
    """The expression and its outermost aggregate calls (None: not SQL)."""
    try:
        tree = sqlglot.parse_one(sql, read=READ)
    except sqlglot.errors.ParseError:
        return None
    while isinstance(tree, exp.Paren):
        tree = tree.this
    aggs = [
        n
        for n in tree.walk()
        if isinstance(n, exp.AggFunc) and not any(isinstance(p, exp.AggFunc) for p in parents(n))
    ]
    return (tree, aggs) if aggs else None


def parents(node: exp.Expression) -> list[exp.Expression]:
    out = []
    p = node.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out
