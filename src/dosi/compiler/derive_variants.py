"""D-DERIVE over members whose measures read other rows than their plain aggregate: D-SEMI
snapshot rows and D-CONVERSION attributed events (`MeasureIr.branch_key`). Runs after the
D-DERIVE pass, once every declaration has passed its gate.

A flatten-tier metric is computed from its own expression, whose aggregates name the plain
measures (`SUM(balances.balance)` is every snapshot's sum). Over such members that would be a
wrong number, so:

* a filter over a semi-additive base takes a semi-additive measure of its own (the filter
  picks rows among the base's snapshot rows: `compiler/semi_additive.inherit`);
* a flatten-tier compose is rebuilt from its members' formulas (each member's own measures),
  with the expansion's fills and safe division: the same arithmetic, over the right rows;
* a `window.base` window takes its (rebuilt) base's formula again.

A filter over a conversion metric is refused (`not_implemented`): its CASE WHEN would fold
into the conversion events' aggregate and lose the attribution.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.measures import safe_division
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.semi_additive import inherit
from dosi.compiler.sqlparse import parse_scalar, strip_parens
from dosi.ext.derive import ComposeDerive, FilterDerive
from dosi.ir.model import MetricIr


def _variant(scope: MetricScope, m: MetricIr) -> bool:
    """`m` reads a measure that is not its plain aggregate."""
    measures = scope.registry.measures
    return any(measures[x].branch_key is not None for x in m.measures if x in measures)


def _leaves_vary(scope: MetricScope, metrics: dict[str, MetricIr], name: str, depth: int) -> bool:
    m = metrics.get(name)
    if m is None or depth > 64:
        return False
    decl = m.derive_decl
    if isinstance(decl, ComposeDerive):
        tree = parse_scalar(decl.expr, None)
        return any(
            _leaves_vary(scope, metrics, c.name, depth + 1) for c in tree.find_all(exp.Column)
        )
    return _variant(scope, m)


def member_formula(
    metrics: dict[str, MetricIr], name: str, fill: float | int | None, depth: int = 0
) -> exp.Expression:
    """A member as its formula over measures (a compose: its arithmetic over its members')."""
    m = metrics[name]
    decl = m.derive_decl
    if isinstance(decl, ComposeDerive) and m.derive is not None and m.derive.tier == "flatten":
        inner = decl.fill if decl.fill is not None else fill
        tree = safe_division(strip_parens(parse_scalar(decl.expr, None)))

        def repl(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table and n.name in metrics and depth < 64:
                return exp.Paren(this=member_formula(metrics, n.name, inner, depth + 1))
            return n

        return tree.transform(repl)
    out = m.formula.copy()
    if fill is not None:
        out = exp.Coalesce(this=out, expressions=[exp.Literal.number(fill)])
    return out


def compile_variants(scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
    """Filters, flatten-tier composes and windows over variant members, fixed in place."""
    measures = scope.registry.measures
    for name, m in list(metrics.items()):
        decl = m.derive_decl
        if isinstance(decl, FilterDerive) and decl.base in metrics:
            base = metrics[decl.base]
            if base.conversion is not None:
                path = f"metrics[{name}]"
                site = Site(path, scope.cx.line([("metrics", name)]))
                scope.cx.sink.error(
                    "not_implemented",
                    f"filter metric `{name}` filters the conversion metric `{decl.base}`, "
                    "which is not implemented",
                    path=site.path,
                    line=site.line,
                    hint="filter the base or conversion event metric, and declare a "
                    "conversion over the filter metric",
                )
                metrics.pop(name)
                continue
            metrics[name] = inherit(scope, m, base)
    for name, m in list(metrics.items()):
        decl = m.derive_decl
        flatten = m.derive is not None and m.derive.tier == "flatten"
        if not (isinstance(decl, ComposeDerive) and flatten):
            continue
        if not _leaves_vary(scope, metrics, name, 0):
            continue
        formula = member_formula(metrics, name, None)
        names = list(
            dict.fromkeys(
                c.name for c in formula.find_all(exp.Column) if not c.table and c.name in measures
            )
        )
        owners = frozenset(measures[x].dataset for x in names)
        metrics[name] = replace(m, formula=formula, measures=tuple(names), datasets=owners)
    for name, m in list(metrics.items()):
        base = metrics.get(m.window_base) if m.window_base is not None else None
        if base is not None and base.measures != m.measures and _variant(scope, base):
            metrics[name] = replace(
                m, formula=base.formula, measures=base.measures, datasets=base.datasets
            )
