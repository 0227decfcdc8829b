"""Metric compile: parse, reject what a metric may not be, resolve fields, split measures,
settle the time axis, window and fill -> MetricIr.

Ossie "Metrics" are aggregate expressions over fields; the DATUS payload (D-DATASET, D-MEASURE,
D-TIME, D-WINDOW, D-FILL) comes only from `dosi.ext`.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dosi import ext
from dosi.compiler.context import Site
from dosi.compiler.fields import pick_expression, unusable_message, usable
from dosi.compiler.lod_metric import nests_aggregates
from dosi.compiler.measures import infer_kind
from dosi.compiler.metric_columns import note_measured_fields, resolve_metric_columns
from dosi.compiler.metric_measures import split_measures
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.params import check_no_bind_markers
from dosi.compiler.percentile import PercentileError, normalize_percentiles
from dosi.compiler.semi_additive import (
    check_semi_additive,
    measure_suffix,
    refuse_combinations,
    resolve_semi_additive,
)
from dosi.compiler.sqlparse import (
    OSI_READERS,
    SqlSnippetError,
    SqlTooComplex,
    has_window,
    parse_scalar,
)
from dosi.compiler.time_axis import metric_time_axis
from dosi.compiler.trees import clone
from dosi.compiler.trusted_sql import untrusted_construct
from dosi.errors import closest
from dosi.ir.model import MetricIr
from dosi.model.schema import MetricSpec

NEEDS_DATUS = "metric_needs_datus_mode"


def compile_metric(scope: MetricScope, m: MetricSpec) -> MetricIr | None:
    """The metric's IR, or None after its errors are reported."""
    cx = scope.cx
    mpath = f"metrics[{m.name}]"
    mline = cx.line([("metrics", m.name)])
    mext = cx.read_ext("metric", mpath, m.custom_extensions, mline)
    assert isinstance(mext, ext.MetricExt)
    dialect, text = pick_expression(m.expression, cx.target)
    site = Site(mpath, mline)
    if not usable(dialect, cx.target, text):
        cx.sink.error(
            "no_usable_expression",
            unusable_message(f"metric `{m.name}`", m.expression, cx.target),
            path=mpath,
            line=mline,
            hint="add an ANSI_SQL entry (or one for the engine the model runs on)",
        )
        return None
    if not check_no_bind_markers(cx.sink, m.name, text, mpath, mline):
        return None
    if mext.basic_fail_closed:  # D-SEMI / D-CONVERSION in basic mode: refused, not summed
        keys = ", ".join(mext.basic_fail_closed)
        cx.sink.error(
            NEEDS_DATUS,
            f"metric `{m.name}` carries {keys}, which basic mode does not read: its expression "
            "alone is a different, wrong number",
            path=mpath,
            line=mline,
            hint="query it in datus mode (the default, --osi-datus)",
        )
        return None
    if not refuse_combinations(scope, m.name, mext, site):
        return None
    if mext.lod is not None:  # D-LOD: compiled once every other metric is (compiler/lod_metric.py)
        scope.lod_pending.append((m, mext.lod, site))
        return None
    if mext.lod_invalid:  # its declaration was reported; the expression is never run
        return None
    if not _derive_key_scalar(scope, m.name, mext.derive, site):
        return None
    if getattr(mext.derive, "family", None) == "compose" and nests_aggregates(scope, m):
        scope.lod_pending.append(
            (m, mext.derive, site)
        )  # compose over LOD (compiler/lod_metric.py)
        return None
    resolved = scope.resolved_texts.get((text, dialect))
    if resolved is not None:  # an expression met before: parsed, checked and resolved once
        tree = clone(resolved)
    else:
        tree = _parse(scope, m.name, text, dialect, site)
        if tree is None:
            return None
        note_measured_fields(scope, tree)
        if not resolve_metric_columns(scope, m.name, tree, site):
            return None
        # D-DERIVE's expression gate reads it (split_measures edits tree); IR trees are
        # shared and never edited, so metrics of one expression share it
        resolved = scope.resolved_texts[(text, dialect)] = clone(tree)
    kind = infer_kind(tree)
    pin = mext.dataset
    if pin is not None and pin not in scope.datasets:
        cx.sink.error(
            "invalid_datus_extension",
            f"`dataset` of metric `{m.name}` names `{pin}`, which is not a dataset",
            path=mpath,
            line=mline,
            candidates=closest(pin, list(scope.datasets)),
        )
        pin = None
    semi = None
    if mext.semi_additive is not None:  # D-SEMI (compiler/semi_additive.py)
        semi = resolve_semi_additive(scope, m.name, mext.semi_additive, tree, pin, site)
        if semi is None:
            return None
    variant = (semi, measure_suffix(semi)) if semi is not None else None
    formula, measure_names, owners = split_measures(scope, m.name, tree, pin, mext, site, variant)
    if formula is None:
        return None
    if semi is not None and not check_semi_additive(scope, m.name, semi, kind, owners, site):
        return None
    time_axis = metric_time_axis(cx, scope.datasets, m.name, mext, owners, site)
    window = mext.window
    if window is not None and kind != "aggregate" and mext.window_base is None:
        cx.sink.error(
            "invalid_datus_extension",
            f"metric `{m.name}` carries `window` but its expression is a {kind}; the base "
            "of a window must be a single plain aggregate",
            path=mpath,
            line=mline,
            hint="put the window on a single-aggregate metric",
        )
        window = None
    # D-FILL never applies to a window output: NULL means "no comparable period" (D-WINDOW)
    fill = None if window is not None else mext.fill_nulls_with
    pure_count = kind == "aggregate" and scope.registry.measures[measure_names[0]].is_count
    return MetricIr(
        name=m.name,
        kind=kind,  # type: ignore[arg-type]
        formula=formula,
        measures=tuple(measure_names),
        datasets=frozenset(owners),
        time_axis=time_axis,
        fill_nulls_with=fill,
        window=window,
        description=m.description,
        datatype=m.datatype,
        source_sql=text,
        _pure_count=pure_count,
        params=mext.params,
        derive_decl=mext.derive,
        window_base=mext.window_base,
        expr_tree=resolved,
        semi_additive=semi,
        conversion_decl=mext.conversion,
        drop_empty_buckets=mext.empty_buckets == "drop",
    )


def _parse(
    scope: MetricScope, metric: str, text: str, dialect: str, site: Site
) -> exp.Expression | None:
    """The expression tree, if it is a trusted, window-free aggregate with no nesting."""
    cx = scope.cx
    mpath, mline = site.path, site.line
    try:
        tree = parse_scalar(text, OSI_READERS.get(dialect))
    except SqlTooComplex as err:
        cx.sink.error("expression_too_complex", str(err), path=mpath, line=mline)
        return None
    except SqlSnippetError as err:
        cx.sink.error("unparseable_expression", str(err), path=mpath, line=mline)
        return None
    try:
        tree = normalize_percentiles(tree)  # one aggregate node per percentile (issue 21)
    except PercentileError as err:
        cx.sink.error(
            "invalid_percentile",
            f"metric `{metric}`: {err}",
            path=mpath,
            line=mline,
            hint="PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY dataset.field), MEDIAN(x) or "
            "APPROX_QUANTILE(x, 0.9)",
        )
        return None
    if not cx.trust_sql:
        what = untrusted_construct(tree)
        if what is not None:
            cx.untrusted(f"metric `{metric}`", what, mpath, mline)
            return None
    if has_window(tree):
        cx.sink.error(
            "window_in_metric",
            f"metric `{metric}` uses a window function (`{text}`)",
            path=mpath,
            line=mline,
            hint="declare the window with the DATUS `window` extension on a plain aggregate "
            "metric (D-WINDOW)",
        )
        return None
    aggs = list(tree.find_all(exp.AggFunc))
    if not aggs:
        cx.sink.error(
            "not_an_aggregate",
            f"metric `{metric}` has no aggregate (`{text}`); metrics aggregate fields",
            path=mpath,
            line=mline,
            hint="wrap the field in an aggregate, e.g. SUM(dataset.field)",
        )
        return None
    for a in aggs:
        if any(isinstance(p, exp.AggFunc) for p in _ancestors(a)):
            cx.sink.error(
                "nested_aggregate",
                f"metric `{metric}` nests aggregates (`{text}`)",
                path=mpath,
                line=mline,
                hint="aggregate a field once; nested aggregation needs D-LOD",
            )
            return None
    return tree


def _derive_key_scalar(scope: MetricScope, name: str, decl: object, site: Site) -> bool:
    """DRV-CMP / DRV-FIL (issue 20 point 9): an aggregate inside `derive.expr` or
    `derive.where` is the declaration's error, `invalid_datus_extension` on the DATUS key,
    reported before the authored expression (which then nests aggregates) is read."""
    family = getattr(decl, "family", None)
    key = {"compose": "expr", "filter": "where"}.get(family or "")
    text = getattr(decl, key, None) if key else None
    if not isinstance(text, str):
        return True
    try:
        tree = parse_scalar(text, None, bind_markers=True)
    except (SqlSnippetError, SqlTooComplex):
        return True  # the derive pass reports the malformed text
    if not any(isinstance(n, exp.AggFunc) for n in tree.walk()):
        return True
    what = (
        "compose expressions are scalar arithmetic over metric names; the members aggregate"
        if family == "compose"
        else "a filter tests row values"
    )
    scope.cx.sink.error(
        "invalid_datus_extension",
        f"`derive.{key}` of `{name}` calls an aggregate (`{text}`): {what}",
        path=site.path,
        line=site.line,
        hint="move the aggregate into a member metric and name that metric"
        if family == "compose"
        else "test a field of the base metric's dataset; filter on a metric with a compose",
    )
    return False


def _ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    p = node.parent
    while p is not None:
        yield p
        p = p.parent
