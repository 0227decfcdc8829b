"""`dosi export dbt`: an Ossie model (with DATUS payloads) as dbt semantic-layer YAML.

The inverse of the import, for what maps: each dataset is a semantic model (`model:
ref('<table>')`), its keys and relationship columns entities, `is_time` fields time dimensions
(granularity from D-GRAIN), other dimension fields categorical, and the metrics simple, ratio,
derived or cumulative metrics (metrics.py). What has no dbt form (rank and value windows,
D-LOD, D-PARAM, composite keys, SQL sources, datasets without a time field for their measures)
is a structured warning and is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from dosi.exporters.dbt.forms import ExportError
from dosi.exporters.dbt.metrics import MetricWriter


@dataclass
class Exported:
    """dbt project YAML (semantic_models, metrics, saved_queries) and what did not map."""

    data: dict[str, Any]
    warnings: list[Any] = field(default_factory=list)

    def yaml(self) -> str:
        return yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True, width=100)


def export_dbt(document: Mapping[str, Any]) -> Exported:
    """The first semantic model of an Ossie document as dbt semantic-layer YAML."""
    models = document.get("semantic_model") or []
    if not models or not isinstance(models[0], Mapping):
        raise ExportError("invalid_model", "the document holds no semantic_model")
    return _export(models[0])


def _export(model: Mapping[str, Any]) -> Exported:
    data, warnings = MetricWriter(model).run()
    return Exported(data, warnings)


__all__ = ["ExportError", "Exported", "export_dbt"]
