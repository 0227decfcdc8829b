"""What the metric pass reads and collects: the compiled datasets and relationship graph, the
measure registry, and the fields aggregates measure (for D-DIM role inference)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.compiler.context import CompileContext
from dosi.compiler.measure_names import MeasureRegistry
from dosi.ir.graph import RelationshipGraph
from dosi.ir.model import ConformedIr, DatasetIr, MetricIr


@dataclass(frozen=True)
class MetricScope:
    cx: CompileContext
    datasets: Mapping[str, DatasetIr]
    graph: RelationshipGraph
    registry: MeasureRegistry
    measured_fields: set[tuple[str, str]] = field(default_factory=set)
    # D-LOD metrics, compiled after every other metric: (spec, LodSpec, Site)
    lod_pending: list[tuple[Any, Any, Any]] = field(default_factory=list)
    # D-CONFORM classes: a compose member reaches every spelling of a paired column (CONF-05)
    conformed: ConformedIr = field(default_factory=ConformedIr)
    # metrics compiled so far (document order): a compose's row counts take their members'
    # D-DATASET pins (dosi.compiler.constant_owners)
    compiled: dict[str, MetricIr] = field(default_factory=dict)
    # metric expressions resolved so far, by (text, dialect): a model repeats its base
    # aggregates (each window or filter metric over revenue), each parsed, checked and
    # resolved once per load (docs/performance.md, "Model load")
    resolved_texts: dict[tuple[str, str], exp.Expression] = field(default_factory=dict)
