"""D-DERIVE filter folding (datus-extensions D-DERIVE "filter", DRV-FIL-*): a filter metric is
its base's single aggregate with the predicate folded inside (`CASE WHEN pred THEN arg END`);
the predicate reads fields of the base's own dataset, its D-PARAM `:name` markers bound to the
defaults (a query binding re-folds with its own values, `dosi.query.params_filter`).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.compiler.derive_expansion import EXACT_AGGS, DeriveFailed, DerivePass, agg_kind
from dosi.compiler.derive_gate import canonical, check_gate
from dosi.compiler.fields import field_reference
from dosi.compiler.sqlparse import SqlSnippetError, SqlTooComplex, parse_scalar, strip_parens
from dosi.errors import closest
from dosi.ext.derive import FilterDerive
from dosi.ext.params_naming import plain_number
from dosi.ir.derive import DeriveIr
from dosi.ir.model import MetricIr


def compile_filter(p: DerivePass, m: MetricIr, decl: FilterDerive) -> MetricIr:
    """The filter metric with its metadata, once its expression passed the gate."""
    e = p.expand(m.name, None)
    check_gate(p, m, e)
    base = p.metrics[decl.base]
    agg = agg_kind(base, p.scope)
    return replace(
        m,
        derive=DeriveIr(
            "filter",
            "flatten",
            base=decl.base,
            predicate=decl.where,
            subset_of=decl.base,
            attribution="exact" if agg in EXACT_AGGS else "approximate",
            written=(decl.base,),
        ),
    )


def fold(p: DerivePass, m: MetricIr, decl: FilterDerive) -> exp.Expression:
    name = m.name
    base = p.metrics.get(decl.base)
    if base is None and decl.base in p.failed:
        raise DeriveFailed()  # its own error is reported: no follow-on duplicate
    if base is None:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.base` of `{name}` names `{decl.base}`, which is not a metric",
            candidates=tuple(closest(decl.base, [n for n in p.metrics if n != name])),
        )
    if decl.base == name:
        raise p.error(name, "metric_reference_cycle", f"metric reference cycle: {name} -> {name}")
    p.expand(decl.base, None)  # cycles
    if base.derive_decl is not None or base.window is not None:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"the base of filter metric `{name}` must be a plain non-derived metric, but "
            f"`{decl.base}` carries a derive / window declaration (derive references are "
            "single-hop)",
            hint="filter the plain aggregate, then compose or window the filter metric",
        )
    if base.kind != "aggregate" or len(base.measures) != 1:
        what = {"ratio": "ratio", "expression": "expression"}.get(base.kind, base.kind)
        raise p.error(
            name,
            "not_implemented",
            f"filter over a {what} base (`{decl.base}`) is not implemented: the base must "
            "be a single plain aggregate",
            hint="filter the single-aggregate metrics first, then compose them",
        )
    dataset = p.scope.registry.measures[base.measures[0]].dataset
    pred = predicate(p, name, decl.where, dataset)
    pred = bind(p, m, pred, _param_defaults(m))
    assert base.expr_tree is not None
    agg = strip_parens(canonical(base.expr_tree))
    assert isinstance(agg, exp.AggFunc)
    return _fold(agg, pred)


def bind(
    p: DerivePass, m: MetricIr, pred: exp.Expression, values: dict[str, object]
) -> exp.Expression:
    """D-PARAM filter.literal slots: each `:name` becomes its value as a literal (the
    compiled model is the default instantiation; a query binding re-folds with its own)."""
    for ph in list(pred.find_all(exp.Placeholder)):
        key = ph.name
        if key not in values:
            raise p.error(
                m.name,
                "invalid_datus_extension",
                f"`derive.where` of `{m.name}` holds the bind marker :{key}, which no "
                "declared parameter of the metric fills",
                hint=f'declare it: "params": [{{"name": "{key}", ...}}]',
            )
        ph.replace(_literal(values[key]))
    return pred


def predicate(p: DerivePass, name: str, text: str, dataset: str) -> exp.Expression:
    try:
        tree = parse_scalar(text, None, bind_markers=True)
    except (SqlSnippetError, SqlTooComplex) as err:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.where` of `{name}` is not a valid predicate: {err}",
        ) from None
    if any(isinstance(n, exp.AggFunc) for n in tree.walk()):
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.where` of `{name}` must not contain aggregates; a filter tests row values",
        )
    cols = list(tree.find_all(exp.Column))
    if not cols and tree.find(exp.Placeholder) is not None:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.where` of `{name}` tests only parameters, no column",
            hint="a filter predicate tests a field of the base metric's dataset",
        )
    datasets = p.scope.datasets
    for c in cols:
        if c.table:
            ds = datasets.get(c.table)
            f = ds.fields.get(c.name) if ds is not None else None
            if f is None:
                everything = [f"{d}.{n}" for d, x in datasets.items() for n in x.fields]
                raise p.error(
                    name,
                    "unknown_column",
                    f"`derive.where` of `{name}` reads `{c.sql()}`, which is not a field",
                    candidates=tuple(closest(c.sql(), everything)),
                )
        else:
            found = [d.fields[c.name] for d in datasets.values() if c.name in d.fields]
            if len(found) > 1:
                raise p.error(
                    name,
                    "ambiguous_column",
                    f'column "{c.name}" in `derive.where` of `{name}` exists in more than '
                    "one dataset; qualify it as dataset.field",
                    candidates=tuple(x.qualified for x in found),
                )
            if not found:
                everything = [n for x in datasets.values() for n in x.fields]
                raise p.error(
                    name,
                    "unknown_column",
                    f'column "{c.name}" in `derive.where` of `{name}` is not a field of any '
                    "dataset",
                    candidates=tuple(closest(c.name, everything)),
                )
            f = found[0]
        if f.dataset != dataset:
            raise p.error(
                name,
                "not_implemented",
                f"the predicate of `{name}` references {f.qualified}, but the base "
                f"aggregates over `{dataset}`; cross-dataset filter predicates land in "
                "D-DERIVE M4",
                hint="filter on a field of the base metric's own dataset",
            )
        ref = field_reference(f.qualified, f.expr)
        if c is tree:  # a bare Boolean field is the whole predicate: replace() has no parent
            return ref
        c.replace(ref)
    return tree


def _param_defaults(m: MetricIr) -> dict[str, object]:
    """The metric's D-PARAM defaults, when the params reader (ext/params.py) declared any."""
    params = getattr(m, "params", None)
    return dict(params.defaults()) if params is not None else {}


def _literal(value: object) -> exp.Expression:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(plain_number(value))  # 100.0 -> 100 (PARAM-INST-02)
    return exp.Literal.string(str(value))


def fold_filter(agg: exp.Expression, pred: exp.Expression) -> exp.Expression:
    """DRV-FIL-02: CASE WHEN pred THEN arg END inside the aggregate; COUNT folds to THEN 1.
    Shared with query-time re-folding of bound filter literals (query/params_filter.py)."""
    out = agg.copy()
    arg = out.this

    def case(then: exp.Expression) -> exp.Case:
        return exp.Case(ifs=[exp.If(this=pred.copy(), true=then)])

    if isinstance(arg, exp.Distinct):
        inner = (
            arg.expressions[0]
            if len(arg.expressions) == 1
            else exp.Tuple(expressions=arg.expressions)
        )
        out.set("this", exp.Distinct(expressions=[case(inner.copy())]))
    elif isinstance(out, exp.Count):
        out.set("this", case(exp.Literal.number(1)))
    else:
        out.set("this", case(arg.copy()))
    return out


def _fold(agg: exp.AggFunc, pred: exp.Expression) -> exp.Expression:
    return canonical(fold_filter(agg, pred))
