"""D-DERIVE compose (datus-extensions D-DERIVE "compose", DRV-CMP-*, DRV-NEST-*): arithmetic
over member metrics. Flatten tier (members are leaves, filters or flatten-tier composes): the
members expand into one expression, gated against the authored one, with its linear
decomposition (attribution). Stage tier (a window member, DRV-CMP-10): the members stay
members and the arithmetic runs over their columns after the window stage.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.compiler.derive_expansion import (
    EXACT_AGGS,
    METRIC_TIME,
    DerivePass,
    Expansion,
    agg_kind,
    number,
)
from dosi.compiler.derive_gate import canonical, check_gate
from dosi.compiler.measures import safe_division
from dosi.compiler.sqlparse import SqlSnippetError, SqlTooComplex, parse_scalar, strip_parens
from dosi.errors import closest
from dosi.ext.derive import ComposeDerive
from dosi.ir.derive import DeriveIr, DeriveMember, LeafMeasure
from dosi.ir.model import MetricIr

MAX_MEMBER_REFS = 256  # DRV-NEST-09: member references in one expansion


def compile_compose(p: DerivePass, m: MetricIr, decl: ComposeDerive) -> MetricIr:
    """The compose metric with its metadata: stage tier as declared, flatten tier once its
    expression passed the gate."""
    name = m.name
    e = p.expand(name, None)
    lod = [x for x in e.leaves if x in p.metrics and p.metrics[x].lod is not None]
    if lod:  # D-LOD (LOD-REL-10): compiled by compiler/lod_metric.py when nested
        raise p.error(
            name,
            "derive_expression_mismatch",
            f"compose metric `{name}` has the level-of-detail member `{lod[0]}`, so "
            "its expression must be the nested aggregate the expansion describes (e.g. "
            "SUM(orders.amount) / SUM(SUM(orders.amount)) for revenue / revenue_grand), "
            f"not `{m.source_sql}`",
            hint="write the LOD member's own nested aggregate in its place",
        )
    if e.stage:
        meta = replace(stage_meta(p, name, decl, e), written=_written(decl))
        return replace(m, derive=meta)
    check_gate(p, m, e, members=True)
    meta = replace(compose_meta(p, name, decl, e), written=_written(decl))
    return replace(m, derive=meta)


def expand_compose(
    p: DerivePass, m: MetricIr, decl: ComposeDerive, inherited: float | int | None
) -> Expansion:
    name = m.name
    try:
        tree = parse_scalar(decl.expr, None)
    except (SqlSnippetError, SqlTooComplex) as err:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.expr` of `{name}` is not a valid scalar expression: {err}",
        ) from None
    if any(isinstance(n, exp.AggFunc) for n in tree.walk()):
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.expr` of `{name}` calls an aggregate: compose expressions are scalar "
            "arithmetic over metric names; aggregation belongs to the member metrics",
            hint="name a metric that aggregates, e.g. revenue - total_refunds",
        )
    if any(isinstance(n, exp.Window) for n in tree.walk()):
        raise p.error(
            name,
            "window_in_metric",
            f"`derive.expr` of `{name}` uses a window function",
            hint="declare the window with the DATUS `window` extension",
        )
    fill = decl.fill if decl.fill is not None else inherited
    names = [c for c in tree.find_all(exp.Column)]
    if not names:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"`derive.expr` of `{name}` names no metric",
            hint="compose metric names, e.g. revenue - total_refunds",
        )
    members: dict[int, Expansion] = {}
    refs = 0
    for c in names:
        ref = c.sql() if c.table else c.name
        if c.table or (c.name not in p.metrics and c.name not in p.failed):
            raise p.error(
                name,
                "invalid_datus_extension",
                f"`{ref}` in `derive.expr` of `{name}` is not a metric of this model "
                "(compose members are metric names, never columns)",
                candidates=tuple(closest(c.name, [n for n in p.metrics if n != name])),
                hint="name a metric of this model",
            )
        if c.name == name:
            raise p.error(
                name,
                "metric_reference_cycle",
                f"metric reference cycle: {name} -> {name}",
                candidates=(name,),
            )
        sub = p.expand(c.name, fill)
        refs += sub.refs
        members[id(c)] = sub
    if refs > MAX_MEMBER_REFS:
        raise p.error(
            name,
            "invalid_datus_extension",
            f"compose metric `{name}` expands to {refs} member references, more than "
            f"{MAX_MEMBER_REFS}",
            hint="reference a nested compose fewer times",
        )
    leaves: list[str] = []
    for sub in members.values():
        leaves.extend(x for x in sub.leaves if x not in leaves)
    if any(sub.stage for sub in members.values()):
        return Expansion(None, leaves, None, stage=True, refs=refs)
    linear = _linear(tree, members)

    def sub_in(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and id(n) in members:
            t = members[id(n)].tree
            assert t is not None
            return exp.Paren(this=t.copy())
        return n

    expanded = canonical(tree.transform(sub_in, copy=False))
    return Expansion(expanded, leaves, linear, refs=refs)


def _linear(tree: exp.Expression, members: dict[int, Expansion]) -> dict[str, float] | None:
    """Σ cᵢ·metricᵢ (DRV-CMP-05): coefficients per leaf, folded through nested composes."""

    def walk(n: exp.Expression) -> tuple[dict[str, float], float] | None:
        if isinstance(n, exp.Paren):
            return walk(n.this)
        if isinstance(n, exp.Column) and id(n) in members:
            sub = members[id(n)].linear
            return (dict(sub), 0.0) if sub is not None else None
        if isinstance(n, exp.Literal) and n.is_number:
            return {}, float(n.this)
        if isinstance(n, exp.Neg):
            r = walk(n.this)
            return None if r is None else ({k: -v for k, v in r[0].items()}, -r[1])
        if isinstance(n, exp.Add | exp.Sub):
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None:
                return None
            sign = 1.0 if isinstance(n, exp.Add) else -1.0
            out = dict(a[0])
            for k, v in b[0].items():
                out[k] = out.get(k, 0.0) + sign * v
            return out, a[1] + sign * b[1]
        if isinstance(n, exp.Mul):
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None:
                return None
            if not a[0]:
                return {k: v * a[1] for k, v in b[0].items()}, a[1] * b[1]
            if not b[0]:
                return {k: v * b[1] for k, v in a[0].items()}, a[1] * b[1]
            return None
        if isinstance(n, exp.Div):
            a, b = walk(n.this), walk(n.expression)
            if a is None or b is None or b[0] or b[1] == 0:
                return None
            return {k: v / b[1] for k, v in a[0].items()}, a[1] / b[1]
        return None

    r = walk(tree)
    if r is None or r[1] != 0.0 or not r[0]:
        return None
    return r[0]


def reachable_dims(p: DerivePass, leaf: str) -> frozenset[str]:
    """Every dimension a leaf's measures reach (many-to-one), every conformed spelling of a
    paired column among them (CONF-05/09: both spellings group a metric on either side,
    transitively), and metric_time."""
    m = p.metrics[leaf]
    graph = p.scope.graph
    conf = p.scope.conformed
    sets: list[set[str]] = []
    for meas_name in m.measures:
        own = p.scope.registry.measures[meas_name].dataset
        dims = {
            f.qualified
            for d in p.scope.datasets.values()
            if d.name == own or graph.reachable(own, d.name)
            for f in d.fields.values()
        }
        for cls in conf.classes:
            if any(x.qualified in dims for x in cls.members):
                dims.update(cls.spellings)
        sets.append(dims)
    out = set.intersection(*sets) if sets else set()
    if m.time_axis is not None or any(
        p.scope.datasets[p.scope.registry.measures[x].dataset].primary_time for x in m.measures
    ):
        out.add(METRIC_TIME)
    return frozenset(out)


def compose_meta(p: DerivePass, name: str, decl: ComposeDerive, e: Expansion) -> DeriveIr:
    leaf_dims = tuple((leaf, reachable_dims(p, leaf)) for leaf in e.leaves)
    conformed = frozenset.intersection(*(d for _, d in leaf_dims)) if leaf_dims else frozenset()
    if not conformed:
        s = p.site(name)
        p.scope.cx.sink.warn(
            "compose_no_conformed_dimensions",
            f"compose metric `{name}`: its members {', '.join(e.leaves)} share no "
            "dimension, so it can only be queried ungrouped",
            path=s.path,
            line=s.line,
        )
    measures = p.scope.registry.measures
    leaf_measures: list[LeafMeasure] = []
    exact = e.linear is not None
    if e.linear is not None:
        members = tuple(DeriveMember(k, v) for k, v in e.linear.items())
        for leaf, coef in e.linear.items():
            lm = p.metrics[leaf]
            agg = agg_kind(lm, p.scope)
            if agg is None:
                continue
            meas = measures[lm.measures[0]]
            leaf_measures.append(LeafMeasure(meas.name, meas.dataset, coef))
            exact = exact and agg in EXACT_AGGS
    else:
        members = tuple(DeriveMember(x) for x in e.leaves)
    return DeriveIr(
        "compose",
        "flatten",
        expr=decl.expr,
        members=members,
        leaf_measures=tuple(leaf_measures),
        linear=e.linear is not None,
        attribution="exact" if exact else "approximate",
        conformed_dimensions=tuple(sorted(conformed)),
        leaf_dimensions=leaf_dims,
    )


def stage_meta(p: DerivePass, name: str, decl: ComposeDerive, e: Expansion) -> DeriveIr:
    """DRV-CMP-10/12, DRV-NEST-08: members stay members (the direct ones), the arithmetic
    runs over their output columns after the window stage; attribution approximate."""
    tree = parse_scalar(decl.expr, None)
    direct = list(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))
    for c in list(tree.find_all(exp.Column)):
        ref: exp.Expression = exp.column(c.name)
        if decl.fill is not None:
            ref = exp.Coalesce(this=ref, expressions=[number(decl.fill)])
        if c is tree:  # a one-member compose: the member is the whole expression
            tree = ref
            break
        c.replace(ref)
    formula = safe_division(strip_parens(tree))
    leaf_dims = tuple((leaf, reachable_dims(p, leaf)) for leaf in e.leaves)
    conformed = frozenset.intersection(*(d for _, d in leaf_dims)) if leaf_dims else frozenset()
    return DeriveIr(
        "compose",
        "stage",
        expr=decl.expr,
        members=tuple(DeriveMember(x) for x in direct),
        attribution="approximate",
        conformed_dimensions=tuple(sorted(conformed)),
        leaf_dimensions=leaf_dims,
        stage_formula=formula,
        level=p.level(name),
    )


def _written(decl: ComposeDerive) -> tuple[str, ...]:
    tree = parse_scalar(decl.expr, None)
    return tuple(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))
