"""A compose over D-LOD members is itself a D-LOD metric (datus-extensions §3 D-LOD,
LOD-REL-10): the engine looks through the compose to the members' declarations and never
computes a denominator at the view grain (which would make every share 1).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.fields import pick_expression
from dosi.compiler.measures import safe_division
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import SqlSnippetError, SqlTooComplex, parse_scalar, strip_parens
from dosi.errors import closest
from dosi.ir.lod_metric import LodMetric
from dosi.ir.model import MetricIr
from dosi.model.schema import MetricSpec

INVALID = "invalid_datus_extension"


def compile_lod_compose(
    scope: MetricScope,
    m: MetricSpec,
    expr: str,
    fill: float | int | None,
    site: Site,
    metrics: Mapping[str, MetricIr],
) -> MetricIr | None:
    """A compose metric over LOD members is itself a LOD metric (LOD-REL-10): the engine
    looks through the compose to find the declaration, never computes the denominator at
    the view grain (which would make every share 1). None after its errors are reported; a
    compose with no LOD member keeps the nested_aggregate its expression earns."""
    sink = scope.cx.sink
    try:
        tree = strip_parens(parse_scalar(expr, None))
    except (SqlSnippetError, SqlTooComplex) as err:
        sink.error(
            INVALID,
            f"`derive.expr` of `{m.name}` is not a valid scalar expression: {err}",
            path=site.path,
            line=site.line,
        )
        return None
    members: list[str] = []
    for c in tree.find_all(exp.Column):
        if c.table or c.name not in metrics:
            sink.error(
                INVALID,
                f"`{c.sql()}` in `derive.expr` of `{m.name}` is not a metric of this model "
                "(compose members are metric names)",
                path=site.path,
                line=site.line,
                candidates=tuple(closest(c.name, list(metrics))),
            )
            return None
        if c.name not in members:
            members.append(c.name)
    if not any(metrics[n].lod is not None for n in members):
        text = pick_expression(m.expression)[1]
        sink.error(
            "nested_aggregate",
            f"metric `{m.name}` nests aggregates (`{text}`) but composes no level-of-detail metric",
            path=site.path,
            line=site.line,
            hint="write a compose's expression as its flat equivalent; nested aggregation "
            "needs a D-LOD member",
        )
        return None
    if any(isinstance(n, exp.AggFunc) for n in tree.walk()):
        sink.error(
            INVALID,
            f"`derive.expr` of `{m.name}` calls an aggregate: compose expressions are scalar "
            "arithmetic over metric names",
            path=site.path,
            line=site.line,
        )
        return None
    if fill is not None:
        from_fill = exp.Literal.number(str(fill))
        tree = tree.transform(
            lambda n: (
                exp.Coalesce(this=n.copy(), expressions=[from_fill.copy()])
                if isinstance(n, exp.Column)
                else n
            )
        )
    formula = safe_division(tree)
    first = metrics[members[0]]
    datasets = frozenset(d for n in members for d in metrics[n].datasets)
    measures = tuple(dict.fromkeys(x for n in members for x in metrics[n].measures))
    return MetricIr(
        name=m.name,
        kind="expression",
        formula=formula,
        measures=measures,
        datasets=datasets,
        time_axis=first.time_axis,
        fill_nulls_with=None,
        window=None,
        description=m.description,
        datatype=m.datatype,
        source_sql=pick_expression(m.expression)[1],
        lod=LodMetric("compose", "", (), None, expr, formula, tuple(members)),
    )
