"""D-PARAM `filter.literal` slots: a D-DERIVE filter metric instantiated at a bound value.

datus-extensions §3 D-PARAM (PARAM-SLOT-06, PARAM-INST-02/03): the filter's `where` holds
`:name` bind markers; the compiled model is the default instantiation (D-DERIVE folds the
defaults, and the equivalence gate ties that to the authored expression). A binding re-folds
the predicate with the bound values as typed literals into the base metric's aggregate
(`CASE WHEN pred THEN arg END`; a COUNT folds to THEN 1), so the instance's measure is exactly
the one a hand-written literal would give: when the model already holds a measure of that
signature (a hand-written `SUM(CASE WHEN ... < 30 ...)`), the instance shares it
(CORE-MEAS-02), otherwise it is a new measure of the same dataset.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlglot import exp

from dosi.compiler.derive_filter import fold_filter
from dosi.compiler.fields import field_reference
from dosi.compiler.measures import agg_name
from dosi.compiler.sqlparse import parse_scalar
from dosi.errors import QueryError
from dosi.ext.params import Scalar
from dosi.ext.params_naming import plain_number
from dosi.ir.model import MeasureIr, MetricIr, ModelIr


def instantiate_filter(
    model: ModelIr, metric: MetricIr, column: str, binding: dict[str, Scalar]
) -> tuple[MetricIr, MeasureIr | None]:
    """The filter metric re-folded at `binding`, named `column`, and the new measure it reads
    (None when a model measure of the same signature already exists and is shared)."""
    decl: Any = getattr(metric, "derive_decl", None)
    base = model.metrics.get(getattr(decl, "base", "") or "")
    where = getattr(decl, "where", None)
    if base is None or not isinstance(where, str) or len(base.measures) != 1:
        raise QueryError(
            "not_implemented",
            f"metric `{metric.name}` fills a filter literal with a parameter, but it is not a "
            "D-DERIVE filter over a single aggregate, so the binding cannot be re-folded",
            metrics=[metric.name],
        )
    base_measure = model.measures[base.measures[0]]
    pred = _bind(
        _resolve(model, parse_scalar(where, None, bind_markers=True), base_measure), binding
    )
    folded = fold_filter(base_measure.expr, pred)
    signature = f"{base_measure.dataset}:{folded.sql()}"
    shared = next((m for m in model.measures.values() if m.signature == signature), None)
    if shared is not None:
        measure, new = shared, None
    else:
        name = f"{metric.measures[0]}__{column}"
        refs = frozenset({c.table for c in folded.find_all(exp.Column) if c.table})
        measure = new = MeasureIr(
            name=name,
            dataset=base_measure.dataset,
            agg=agg_name(folded),  # type: ignore[arg-type]
            expr=folded,
            signature=signature,
            datasets=refs | {base_measure.dataset},
        )
    old = metric.measures[0]

    def repl(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name == old:
            return exp.column(measure.name)
        return n

    formula = metric.formula.copy().transform(repl, copy=False)
    inst = replace(metric, name=column, formula=formula, measures=(measure.name,))
    return inst, new


def _resolve(model: ModelIr, tree: exp.Expression, base: MeasureIr) -> exp.Expression:
    """Columns -> the field expressions they name (unqualified: the base's dataset)."""
    for c in list(tree.find_all(exp.Column)):
        ds = model.datasets.get(c.table or base.dataset)
        f = ds.fields.get(c.name) if ds is not None else None
        if f is None:  # pragma: no cover - the model compile checked the predicate
            raise QueryError("unknown_field", f"filter predicate field `{c.sql()}` is unknown")
        ref = field_reference(f.qualified, f.expr)
        if c is tree:  # a bare Boolean field is the whole predicate: replace() has no parent
            return ref
        c.replace(ref)
    return tree


def _bind(tree: exp.Expression, binding: dict[str, Scalar]) -> exp.Expression:
    for ph in list(tree.find_all(exp.Placeholder)):
        value = binding[ph.name]
        if isinstance(value, str):
            lit: exp.Expression = exp.Literal.string(value)
        else:  # 2.0 renders as 2, as a hand-written literal would (shared measure)
            lit = exp.Literal.number(plain_number(value))
        ph.replace(lit)
    return tree
