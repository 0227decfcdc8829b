"""The model's time spine for `dosi export dbt` (issue 22): a DOSI `time_spine` setting is
MetricFlow's day time spine again (`project_configuration.time_spines`), and its dataset is
not written as a semantic model (the spine has no entity, measure or dimension of its own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dosi.exporters.dbt.forms import ansi_expression, vendor_payload


def spine_dataset(model: Mapping[str, Any]) -> str | None:
    """The dataset the model's DOSI settings name as its time spine."""
    spine = vendor_payload(model, "DOSI").get("time_spine")
    return str(spine["dataset"]) if isinstance(spine, Mapping) and "dataset" in spine else None


def project_configuration(model: Mapping[str, Any]) -> dict[str, Any] | None:
    """MetricFlow's project configuration declaring the spine table at the day grain."""
    spine = vendor_payload(model, "DOSI").get("time_spine")
    name = spine_dataset(model)
    ds = next((d for d in model.get("datasets") or () if d.get("name") == name), None)
    if ds is None or not isinstance(spine, Mapping):
        return None
    f = next((x for x in ds.get("fields") or () if x.get("name") == spine.get("field")), None)
    if f is None:
        return None
    parts = str(ds.get("source") or "").split(".")
    relation: dict[str, Any] = {"alias": parts[-1]}
    if len(parts) > 1:
        relation["schema_name"] = parts[-2]
    return {
        "time_spine_table_configurations": [],
        "time_spines": [
            {
                "node_relation": relation,
                "primary_column": {"name": ansi_expression(f), "time_granularity": "day"},
            }
        ],
    }
