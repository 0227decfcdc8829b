"""Model compile: Ossie document -> ModelIr.

Runs every check in one pass and raises a single ModelError listing all problems (with object
paths and YAML lines). DATUS payloads are read only through `dosi.ext`. Each concern lives in
its own module (datasets, relationships, metrics, measure names, windows, D-DIM roles, basic
mode); this one orders the passes and builds the ModelIr once, from the finished pieces.
"""

from __future__ import annotations

from types import MappingProxyType

from dosi.compiler.basic_mode import defer_basic_failure
from dosi.compiler.calendar import compile_calendar
from dosi.compiler.collector import paused_collector
from dosi.compiler.conform import compile_conformed
from dosi.compiler.context import CompileContext
from dosi.compiler.conversion import compile_conversions
from dosi.compiler.datasets import compile_dataset
from dosi.compiler.densify import compile_time_spine, read_settings
from dosi.compiler.derive import compile_derives
from dosi.compiler.derive_variants import compile_variants
from dosi.compiler.lod_field import check_lod_model
from dosi.compiler.lod_metric import compile_lod_pending
from dosi.compiler.measure_names import MeasureRegistry
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.metrics import compile_metric
from dosi.compiler.relationships import compile_relationship
from dosi.compiler.roles import dimension_roles
from dosi.compiler.window import check_window_references
from dosi.errors import Diagnostic, DiagnosticSink, ModelError
from dosi.ir.conform import EMPTY
from dosi.ir.graph import RelationshipGraph
from dosi.ir.model import DatasetIr, MetricIr, ModelIr, RelationshipIr
from dosi.model.loader import LineIndex, read_document
from dosi.model.schema import SemanticModelSpec


def compile_model_text(
    text: str, mode: str = "datus", trust_sql: bool = False, target: str | None = None
) -> ModelIr:
    """Load and compile a model; `trust_sql=True` admits model SQL that reads files or settings
    or writes (dosi.compiler.trusted_sql); `target` is the engine the model runs on (a dosi
    dialect key), whose own expression entries win over ANSI_SQL. The cyclic collector pauses
    meanwhile (dosi.compiler.collector: it made a large load superlinear)."""
    with paused_collector():
        return _compile_text(text, mode, trust_sql, target)


def _compile_text(text: str, mode: str, trust_sql: bool, target: str | None) -> ModelIr:
    loaded = read_document(text)
    doc = loaded.spec
    sink = DiagnosticSink()
    sink.extend(loaded.warnings)
    if len(doc.semantic_model) > 1:
        sink.warn(
            "multiple_semantic_models",
            f"the document holds {len(doc.semantic_model)} semantic models; using the first, "
            f"`{doc.semantic_model[0].name}`",
        )
    cx = CompileContext(mode, sink, loaded.lines or LineIndex(text), trust_sql, target)
    try:
        model = _compile(doc.semantic_model[0], cx, loaded.version)
    except RecursionError:  # a backstop: expressions are bounded before they are parsed
        raise ModelError(
            [
                Diagnostic(
                    "expression_too_complex",
                    "the model nests too deeply to compile",
                    hint="simplify the model's expressions (docs/limits.md)",
                )
            ]
        ) from None
    errors = sink.errors
    if errors:
        raise ModelError(errors, sink.warnings)
    return model


def _compile(spec: SemanticModelSpec, cx: CompileContext, version: str) -> ModelIr:
    """Every pass in order, then the ModelIr, built once (its warnings are final: nothing runs
    after the passes; a model with errors is discarded)."""
    mext = cx.read_ext("semantic_model", "semantic_model", spec.custom_extensions, None)
    settings = read_settings(cx, spec.custom_extensions)  # dosi's own (ext/settings.py)
    datasets = _datasets(spec, cx)
    time_spine = compile_time_spine(cx, settings, datasets)
    calendar = compile_calendar(cx, getattr(mext, "calendar", None), datasets)  # D-CALENDAR
    relationships = _relationships(spec, cx, datasets)
    # D-CONFORM: many_to_many edges pair facts and are never joined; joins see the rest
    conformed = compile_conformed(
        cx, tuple(r for r in relationships if r.kind == "many_to_many"), datasets
    )
    relationships = tuple(r for r in relationships if r.kind != "many_to_many")
    graph = RelationshipGraph(relationships)
    scope = MetricScope(cx, datasets, graph, MeasureRegistry(cx), conformed=conformed or EMPTY)
    metrics, unavailable = _metrics(spec, scope)
    compile_conversions(scope, metrics)  # D-CONVERSION: its base and conversion metrics exist
    pending = {spec_.name for spec_, _, _ in scope.lod_pending}  # D-LOD: compiled later
    rejected = [
        m.name
        for m in spec.metrics or []
        if m.name not in metrics and m.name not in unavailable and m.name not in pending
    ]
    compile_derives(scope, metrics, rejected)  # D-DERIVE: after every metric exists
    compile_variants(scope, metrics)  # D-DERIVE over D-SEMI / D-CONVERSION members
    check_window_references(cx, metrics, datasets)
    check_lod_model(cx, datasets, relationships, metrics, scope.registry.measures)
    roles = dimension_roles(datasets, relationships, metrics, scope.measured_fields)
    return ModelIr(
        name=spec.name,
        datasets=MappingProxyType(datasets),
        relationships=relationships,
        metrics=MappingProxyType(metrics),
        measures=MappingProxyType(scope.registry.measures),
        warnings=tuple(cx.sink.warnings),
        description=spec.description,
        mode=cx.mode,
        source_version=version,
        dimension_roles=MappingProxyType(roles),
        unavailable_metrics=MappingProxyType(unavailable),
        conformed=conformed,
        densify=settings.densify,
        time_spine=time_spine,
        calendar=calendar,
    )


def _datasets(spec: SemanticModelSpec, cx: CompileContext) -> dict[str, DatasetIr]:
    cx.check_unique([d.name for d in spec.datasets], "dataset", "datasets")
    datasets: dict[str, DatasetIr] = {}
    for i, ds in enumerate(spec.datasets):
        if ds.name not in datasets:
            datasets[ds.name] = compile_dataset(cx, ds, i)
    return datasets


def _relationships(
    spec: SemanticModelSpec, cx: CompileContext, datasets: dict[str, DatasetIr]
) -> tuple[RelationshipIr, ...]:
    rels = spec.relationships or []
    cx.check_unique([r.name for r in rels], "relationship", "relationships")
    compiled = (compile_relationship(cx, rel, datasets) for rel in rels)
    return tuple(r for r in compiled if r is not None)


def _metrics(
    spec: SemanticModelSpec, scope: MetricScope
) -> tuple[dict[str, MetricIr], dict[str, Diagnostic]]:
    """Metrics in document order; a D-MEASURE rename rewrites the ones built before it."""
    cx = scope.cx
    metrics: dict[str, MetricIr] = {}
    unavailable: dict[str, Diagnostic] = {}
    specs = spec.metrics or []
    cx.check_unique([m.name for m in specs], "metric", "metrics")
    for m in specs:
        if m.name in metrics:
            continue
        mark = len(cx.sink.items)
        ir = compile_metric(scope, m)
        scope.registry.apply_renames(metrics)
        if ir is not None:
            metrics[m.name] = ir
            scope.compiled[m.name] = ir
        elif cx.mode == "basic":
            defer_basic_failure(cx, m.name, mark, unavailable)
    compile_lod_pending(scope, metrics)  # D-LOD metrics, then composes over them
    order = {m.name: i for i, m in enumerate(specs)}
    return dict(sorted(metrics.items(), key=lambda kv: order[kv[0]])), unavailable


__all__ = ["compile_model_text"]
