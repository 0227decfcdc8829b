"""Compile metrics hosting the derive `lod` family (datus-extensions §3 D-LOD; CHECKLIST
LOD-REL-*, LOD-FXM-*, LOD-FLD-09).

They compile after every other metric, so a base declared later resolves. The metric's
expression is the nested aggregate the declaration describes ("the expression is not a
placeholder"): its outer aggregate must match the declaration and its inner half must be what
the base computes (`derive_expression_mismatch`); a flat expression is invalid. Composes over
LOD members compile after the declarations (`dosi.compiler.lod_metric_compose`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.fields import pick_expression
from dosi.compiler.lod_metric_compose import compile_lod_compose
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import (
    OSI_READERS,
    SqlSnippetError,
    SqlTooComplex,
    parse_scalar,
    strip_parens,
)
from dosi.errors import closest
from dosi.ext.lod_metric import LodSpec
from dosi.ir.lod_metric import LodMetric
from dosi.ir.model import MetricIr
from dosi.model.schema import MetricSpec

INVALID = "invalid_datus_extension"
_OUTER: dict[type[exp.Expression], str] = {
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.Count: "count",
}


def compile_lod_metric(
    scope: MetricScope,
    m: MetricSpec,
    spec: LodSpec,
    site: Site,
    metrics: Mapping[str, MetricIr],
    lod_names: frozenset[str],
) -> MetricIr | None:
    """The LOD metric's IR (its base's measures, plus the `lod` declaration), or None after
    its errors are reported."""
    sink = scope.cx.sink

    def err(code: str, message: str, hint: str | None = None, cands: list[str] | None = None):
        sink.error(
            code,
            message,
            path=site.path,
            line=site.line,
            hint=hint,
            candidates=tuple(cands or ()),
        )

    if spec.base in lod_names:
        err(
            INVALID,
            f"lod base `{spec.base}` of metric `{m.name}` is itself a level-of-detail metric; "
            "nested LOD is not supported (LOD-FLD-09)",
            "point the base at a plain aggregate metric",
        )
        return None
    base = metrics.get(spec.base)
    if base is None:
        err(
            INVALID,
            f"lod base `{spec.base}` of metric `{m.name}` is not a metric of this model",
            "name a plain aggregate metric as the base",
            closest(spec.base, [*metrics, *lod_names]),
        )
        return None
    if base.window is not None:
        err(
            "not_implemented",
            f"lod base `{spec.base}` of metric `{m.name}` is a window metric; a level of detail "
            "over a window series is not implemented",
            "point the base at the window's plain aggregate base",
        )
        return None
    if len(base.datasets) != 1:
        err(
            "not_implemented",
            f"lod base `{spec.base}` of metric `{m.name}` aggregates several datasets "
            f"({', '.join(sorted(base.datasets))}); a level of detail needs one fact dataset",
            "point the base at a metric of one dataset",
        )
        return None
    owner = next(iter(base.datasets))
    for d in spec.dims:
        ds_name, _, fname = d.partition(".")
        ds = scope.datasets.get(ds_name)
        if ds is None:
            err(
                INVALID,
                f"lod dimension `{d}` of metric `{m.name}` names no dataset",
                cands=closest(ds_name, list(scope.datasets)),
            )
            return None
        if fname not in ds.fields:
            err(
                INVALID,
                f"lod dimension `{d}` of metric `{m.name}` is not a field of `{ds_name}`",
                cands=closest(fname, list(ds.fields)),
            )
            return None
        if ds_name != owner:
            err(
                "not_implemented",
                f"lod dimension `{d}` of metric `{m.name}` is not on `{owner}`, the dataset its "
                f"base `{spec.base}` aggregates; a key on another dataset is not implemented",
                f"use a field of `{owner}` as the key",
            )
            return None
    if not _expression_matches(scope, m, spec, base, site):
        return None
    return replace(
        base,
        name=m.name,
        description=m.description,
        datatype=m.datatype,
        source_sql=pick_expression(m.expression)[1],
        fill_nulls_with=None,
        # D-DERIVE reads the declaration only: a LOD metric is opaque there (derive.py)
        derive_decl=None,
        derive=None,
        window_base=None,
        expr_tree=None,
        lod=LodMetric(spec.kind, spec.base, spec.dims, spec.outer, spec.text),
    )


def _expression_matches(
    scope: MetricScope, m: MetricSpec, spec: LodSpec, base: MetricIr, site: Site
) -> bool:
    """LOD-REL-04 / LOD-FLD-07: the expression is the nested aggregate the declaration says."""
    sink = scope.cx.sink
    dialect, text = pick_expression(m.expression)
    try:
        tree = strip_parens(parse_scalar(text, OSI_READERS.get(dialect)))
        base_tree = strip_parens(parse_scalar(base.source_sql, None))
    except SqlSnippetError as e:
        sink.error("unparseable_expression", str(e), path=site.path, line=site.line)
        return False
    outer = _OUTER.get(type(tree))
    inner = strip_parens(tree.this) if outer is not None else None
    if outer is None or inner is None or not any(True for _ in inner.find_all(exp.AggFunc)):
        sink.error(
            INVALID,
            f"metric `{m.name}` declares `{spec.text}`, so its expression must be the nested "
            f"aggregate it describes (the base's aggregate inside an outer one), not `{text}`",
            path=site.path,
            line=site.line,
            hint="write the expression as e.g. AVG(SUM(orders.amount)) for "
            "avg(include(revenue, ...)), SUM(SUM(orders.amount)) for exclude / fixed",
        )
        return False
    want = spec.outer if spec.kind == "include" else "sum"
    if outer != want:
        sink.error(
            "derive_expression_mismatch",
            f"metric `{m.name}` declares `{spec.text}`, whose outer aggregate is "
            f"{want.upper()}, but its expression's outer aggregate is {outer.upper()}",
            path=site.path,
            line=site.line,
            hint="regenerate the expression from the declaration",
        )
        return False
    if _norm(inner) != _norm(base_tree):
        sink.error(
            "derive_expression_mismatch",
            f"the inner half of metric `{m.name}`'s expression (`{inner.sql()}`) is not what "
            f"its lod base `{base.name}` computes (`{base.source_sql}`)",
            path=site.path,
            line=site.line,
            hint="regenerate the expression from the declaration",
        )
        return False
    return True


def _norm(tree: exp.Expression) -> str:
    return strip_parens(tree).sql(normalize=True, pretty=False).lower()


def nests_aggregates(scope: MetricScope, m: MetricSpec) -> bool:
    """Does the metric's expression nest aggregates (a compose over LOD members writes its
    flat equivalent that way: SUM(x) / SUM(SUM(x)))?"""
    dialect, text = pick_expression(m.expression)
    try:
        tree = parse_scalar(text, OSI_READERS.get(dialect))
    except (SqlSnippetError, SqlTooComplex):
        return False
    return any(
        isinstance(p, exp.AggFunc) for a in tree.find_all(exp.AggFunc) for p in _ancestors(a)
    )


def _ancestors(node: exp.Expression) -> list[exp.Expression]:
    out = []
    p = node.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


def compile_lod_pending(scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
    """The deferred metrics, once every plain one exists: LOD declarations first, then the
    composes over them (a compose may name another, in any declaration order)."""
    pending = scope.lod_pending
    lod_names = frozenset(s.name for s, p, _ in pending if isinstance(p, LodSpec))
    composes = []
    for mspec, payload, site in pending:
        if isinstance(payload, LodSpec):
            ir = compile_lod_metric(scope, mspec, payload, site, metrics, lod_names)
            if ir is not None:
                metrics[mspec.name] = ir
        else:
            composes.append((mspec, payload, site))
    names = {c[0].name for c in composes}
    while composes:
        ready = [
            c
            for c in composes
            if not any(r in names and r not in metrics for r in _refs(c[1].expr))
        ]
        if not ready:
            ready = composes  # a cycle or a failed member: report on each
        for mspec, payload, site in ready:
            ir = compile_lod_compose(scope, mspec, payload.expr, payload.fill, site, metrics)
            if ir is not None:
                metrics[mspec.name] = ir
        composes = [c for c in composes if c not in ready]
        names = {c[0].name for c in composes}


def _refs(text: str) -> list[str]:
    try:
        return [c.name for c in parse_scalar(text, None).find_all(exp.Column)]
    except (SqlSnippetError, SqlTooComplex):
        return []
