"""Metric expressions read fields: resolve `dataset.field` (or a unique bare `field`) to the
field's expression, and note which fields SUM/AVG/STDDEV/VAR read (D-DIM: those are measures,
not dimensions)."""

from __future__ import annotations

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.fields import field_reference
from dosi.compiler.measures import MEASURING_AGGS, agg_name, measured_value_columns
from dosi.compiler.metric_scope import MetricScope
from dosi.errors import closest


def note_measured_fields(scope: MetricScope, tree: exp.Expression) -> None:
    """D-DIM inference: fields whose values SUM/AVG/STDDEV/VAR read are measures."""
    for a in tree.find_all(exp.AggFunc):
        if agg_name(a) not in MEASURING_AGGS and not agg_name(a).startswith(("sum", "avg")):
            continue
        arg = a.this.expressions[0] if isinstance(a.this, exp.Distinct) else a.this
        if not isinstance(arg, exp.Expression):
            continue
        for c in measured_value_columns(arg):
            if c.table:
                scope.measured_fields.add((c.table, c.name))
            else:
                for d in scope.datasets.values():
                    if c.name in d.fields:
                        scope.measured_fields.add((d.name, c.name))


def resolve_metric_columns(
    scope: MetricScope, metric: str, tree: exp.Expression, site: Site
) -> bool:
    """Replace `dataset.field` (or a unique bare `field`) by the field's expression."""
    sink, datasets = scope.cx.sink, scope.datasets
    ok = True
    for col in list(tree.find_all(exp.Column)):
        qual, name = col.table, col.name
        if qual:
            ds = datasets.get(qual)
            if ds is None:
                sink.error(
                    "unknown_dataset",
                    f"metric `{metric}` reads `{col.sql()}`: no dataset `{qual}`",
                    path=site.path,
                    line=site.line,
                    candidates=closest(qual, list(datasets)),
                )
                ok = False
                continue
            f = ds.fields.get(name)
            if f is None:
                sink.error(
                    "unknown_field",
                    f"metric `{metric}` reads `{qual}.{name}`, which is not a field of `{qual}`",
                    path=site.path,
                    line=site.line,
                    candidates=[f"{qual}.{c}" for c in closest(name, list(ds.fields))],
                )
                ok = False
                continue
        else:
            matches = [d.fields[name] for d in datasets.values() if name in d.fields]
            if len(matches) != 1:
                code = "unknown_field" if not matches else "ambiguous_column"
                everything = [f"{d}.{n}" for d, x in datasets.items() for n in x.fields]
                sink.error(
                    code,
                    f"metric `{metric}` reads bare `{name}`, which "
                    + ("matches no field" if not matches else "several datasets define"),
                    path=site.path,
                    line=site.line,
                    candidates=[m.qualified for m in matches] or closest(name, everything),
                    hint="qualify it as dataset.field",
                )
                ok = False
                continue
            f = matches[0]
        col.replace(field_reference(f.qualified, f.expr))
    return ok
