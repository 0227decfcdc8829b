"""D-DERIVE compile: resolve metric references, fold filters, expand composes, enforce the
expression-equivalence gate and record the metadata (datus-extensions D-DERIVE).

Flatten tier (filter; compose over leaf / filter / flatten-tier compose members): the metric's
own `expression` must equal the expansion of its declaration (`derive_expression_mismatch`),
so the metric is computed from that expression, exactly as basic mode computes it. Stage tier
(`window.base`, compose with window members): the declaration drives the plan; the expression
is only an approximation. Runs after every metric compiled, so a reference may point anywhere
in the document; cycles are `metric_reference_cycle` with the full path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from dosi.compiler.context import Site
from dosi.compiler.fields import field_reference
from dosi.compiler.measures import infer_kind, safe_division
from dosi.compiler.metric_scope import MetricScope
from dosi.compiler.sqlparse import SqlSnippetError, SqlTooComplex, parse_scalar, strip_parens
from dosi.errors import closest
from dosi.ext.derive import ComposeDerive, FilterDerive
from dosi.ir.derive import DeriveIr, DeriveMember, LeafMeasure
from dosi.ir.model import MetricIr

MAX_MEMBER_REFS = 256  # DRV-NEST-09: member references in one expansion
MAX_WINDOW_LEVELS = 3  # WIN-19-06
EXACT_AGGS = frozenset({"sum", "count", "count_star"})  # DRV-CMP-08
METRIC_TIME = "metric_time"


class _Failed(Exception):
    """A derive error was reported; the metric is dropped."""


@dataclass
class _Exp:
    """A metric expanded as a member: its canonical tree (None on the stage tier), its leaf
    metrics in order, and its linear decomposition over them (None when not linear)."""

    tree: exp.Expression | None
    leaves: list[str]
    linear: dict[str, float] | None
    stage: bool = False
    refs: int = 1


def canonical(tree: exp.Expression) -> exp.Expression:
    """Parentheses dropped (the tree holds the precedence), a top-level ratio of two single
    aggregates with its numerator as DOUBLE, as a ratio metric compiles."""
    out = strip_parens(tree.copy())
    for p in list(out.find_all(exp.Paren)):
        inner = p.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        p.replace(inner)
    if infer_kind(out) == "ratio" and not isinstance(out.this, exp.Cast):
        out = exp.Div(
            this=exp.Cast(this=out.this, to=exp.DataType.build("DOUBLE")),
            expression=out.expression,
        )
    return out


def _agg_kind(m: MetricIr, scope: MetricScope) -> str | None:
    if len(m.measures) != 1 or m.kind != "aggregate":
        return None
    meas = scope.registry.measures.get(m.measures[0])
    return meas.agg if meas is not None else None


class DeriveCompiler:
    def __init__(self, scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
        self.scope = scope
        self.metrics = metrics
        self.cache: dict[tuple[str, float | int | None], _Exp] = {}
        self.stack: list[str] = []
        self.failed: set[str] = set()

    # -- diagnostics ---------------------------------------------------------------------------
    def site(self, name: str) -> Site:
        path = f"metrics[{name}]"
        return Site(path, self.scope.cx.line([("metrics", name)]))

    def error(self, name: str, code: str, message: str, **kw: object) -> _Failed:
        s = self.site(name)
        self.scope.cx.sink.error(code, message, path=s.path, line=s.line, **kw)
        self.failed.add(name)
        return _Failed()

    # -- the pass ------------------------------------------------------------------------------
    def run(self) -> None:
        for name in list(self.metrics):
            m = self.metrics.get(name)
            if m is None or (m.derive_decl is None and m.window_base is None):
                continue
            try:
                self.compile_one(name)
            except _Failed:
                self.failed.add(name)
                self.metrics.pop(name, None)
        for name in self.failed:
            self.metrics.pop(name, None)

    def compile_one(self, name: str) -> None:
        m = self.metrics[name]
        if m.window_base is not None:
            self.metrics[name] = self.window_base(m)
            return
        decl = m.derive_decl
        if isinstance(decl, FilterDerive):
            e = self.expand(name, None)
            self.gate(m, e)
            base = self.metrics[decl.base]
            agg = _agg_kind(base, self.scope)
            self.metrics[name] = replace(
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
        elif isinstance(decl, ComposeDerive):
            e = self.expand(name, None)
            lod = [x for x in e.leaves if x in self.metrics and self.metrics[x].lod is not None]
            if lod:  # D-LOD (LOD-REL-10): compiled by compiler/lod_metric.py when nested
                raise self.error(
                    name,
                    "derive_expression_mismatch",
                    f"compose metric `{name}` has the level-of-detail member `{lod[0]}`, so "
                    "its expression must be the nested aggregate the expansion describes (e.g. "
                    "SUM(orders.amount) / SUM(SUM(orders.amount)) for revenue / revenue_grand), "
                    f"not `{m.source_sql}`",
                    hint="write the LOD member's own nested aggregate in its place",
                )
            if e.stage:
                meta = replace(self.stage_meta(name, decl, e), written=_written(decl))
                self.metrics[name] = replace(m, derive=meta)
                return
            self.gate(m, e)
            meta = replace(self.compose_meta(name, decl, e), written=_written(decl))
            self.metrics[name] = replace(m, derive=meta)
        # other families (lod) are compiled by their own modules

    # -- expansion -----------------------------------------------------------------------------
    def expand(self, name: str, fill: float | int | None) -> _Exp:
        key = (name, fill)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if name in self.failed:
            raise _Failed()  # reported already
        if name in self.stack:
            start = self.stack.index(name)
            cycle = [*self.stack[start:], name]
            # reported on the metric whose reference closes the loop, path from it
            closer = self.stack[-1]
            at = cycle.index(closer)
            path = [*cycle[at:-1], *cycle[:at], closer]
            raise self.error(
                closer,
                "metric_reference_cycle",
                "metric reference cycle: " + " -> ".join(path),
                hint="break the cycle: a derived metric cannot reach itself through its members",
            )
        m = self.metrics.get(name)
        if m is None:  # dropped after its own error
            raise _Failed()
        self.stack.append(name)
        try:
            out = self._expand(m, fill)
        finally:
            self.stack.pop()
        self.cache[key] = out
        return out

    def _expand(self, m: MetricIr, fill: float | int | None) -> _Exp:
        decl = m.derive_decl
        if m.lod is not None:  # D-LOD: never its base's expression (LOD-REL-10)
            return _Exp(None, [m.name], None, stage=True)
        if m.window is not None:
            if m.window_base is not None:
                self.expand(m.window_base, None)  # cycles through a base
            return _Exp(None, [m.name], None, stage=True)
        if isinstance(decl, FilterDerive):
            tree: exp.Expression = self.fold(m, decl)
        elif isinstance(decl, ComposeDerive):
            return self.expand_compose(m, decl, fill)
        elif decl is not None:  # another family (lod): opaque here
            return _Exp(None, [m.name], None, stage=True)
        else:
            assert m.expr_tree is not None
            tree = canonical(m.expr_tree)
        if fill is not None:
            tree = exp.Coalesce(this=tree, expressions=[_number(fill)])
        return _Exp(tree, [m.name], {m.name: 1.0})

    def expand_compose(
        self, m: MetricIr, decl: ComposeDerive, inherited: float | int | None
    ) -> _Exp:
        name = m.name
        try:
            tree = parse_scalar(decl.expr, None)
        except (SqlSnippetError, SqlTooComplex) as err:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.expr` of `{name}` is not a valid scalar expression: {err}",
            ) from None
        if any(isinstance(n, exp.AggFunc) for n in tree.walk()):
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.expr` of `{name}` calls an aggregate: compose expressions are scalar "
                "arithmetic over metric names; aggregation belongs to the member metrics",
                hint="name a metric that aggregates, e.g. revenue - total_refunds",
            )
        if any(isinstance(n, exp.Window) for n in tree.walk()):
            raise self.error(
                name,
                "window_in_metric",
                f"`derive.expr` of `{name}` uses a window function",
                hint="declare the window with the DATUS `window` extension",
            )
        fill = decl.fill if decl.fill is not None else inherited
        names = [c for c in tree.find_all(exp.Column)]
        if not names:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.expr` of `{name}` names no metric",
                hint="compose metric names, e.g. revenue - total_refunds",
            )
        members: dict[int, _Exp] = {}
        refs = 0
        for c in names:
            ref = c.sql() if c.table else c.name
            if c.table or (c.name not in self.metrics and c.name not in self.failed):
                raise self.error(
                    name,
                    "invalid_datus_extension",
                    f"`{ref}` in `derive.expr` of `{name}` is not a metric of this model "
                    "(compose members are metric names, never columns)",
                    candidates=tuple(closest(c.name, [n for n in self.metrics if n != name])),
                    hint="name a metric of this model",
                )
            if c.name == name:
                raise self.error(
                    name,
                    "metric_reference_cycle",
                    f"metric reference cycle: {name} -> {name}",
                    candidates=(name,),
                )
            sub = self.expand(c.name, fill)
            refs += sub.refs
            members[id(c)] = sub
        if refs > MAX_MEMBER_REFS:
            raise self.error(
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
            return _Exp(None, leaves, None, stage=True, refs=refs)
        linear = _linear(tree, members)

        def sub_in(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and id(n) in members:
                t = members[id(n)].tree
                assert t is not None
                return exp.Paren(this=t.copy())
            return n

        expanded = canonical(tree.transform(sub_in, copy=False))
        return _Exp(expanded, leaves, linear, refs=refs)

    # -- filter ---------------------------------------------------------------------------------
    def fold(self, m: MetricIr, decl: FilterDerive) -> exp.Expression:
        name = m.name
        base = self.metrics.get(decl.base)
        if base is None:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.base` of `{name}` names `{decl.base}`, which is not a metric",
                candidates=tuple(closest(decl.base, [n for n in self.metrics if n != name])),
            )
        if decl.base == name:
            raise self.error(
                name, "metric_reference_cycle", f"metric reference cycle: {name} -> {name}"
            )
        self.expand(decl.base, None)  # cycles
        if base.derive_decl is not None or base.window is not None:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"the base of filter metric `{name}` must be a plain non-derived metric, but "
                f"`{decl.base}` carries a derive / window declaration (derive references are "
                "single-hop)",
                hint="filter the plain aggregate, then compose or window the filter metric",
            )
        if base.kind != "aggregate" or len(base.measures) != 1:
            what = {"ratio": "ratio", "expression": "expression"}.get(base.kind, base.kind)
            raise self.error(
                name,
                "not_implemented",
                f"filter over a {what} base (`{decl.base}`) is not implemented: the base must "
                "be a single plain aggregate",
                hint="filter the single-aggregate metrics first, then compose them",
            )
        dataset = self.scope.registry.measures[base.measures[0]].dataset
        pred = self.predicate(name, decl.where, dataset)
        pred = self.bind(m, pred, _param_defaults(m))
        assert base.expr_tree is not None
        agg = strip_parens(canonical(base.expr_tree))
        assert isinstance(agg, exp.AggFunc)
        return _fold(agg, pred)

    def bind(self, m: MetricIr, pred: exp.Expression, values: dict[str, object]) -> exp.Expression:
        """D-PARAM filter.literal slots: each `:name` becomes its value as a literal (the
        compiled model is the default instantiation; a query binding re-folds with its own)."""
        for ph in list(pred.find_all(exp.Placeholder)):
            key = ph.name
            if key not in values:
                raise self.error(
                    m.name,
                    "invalid_datus_extension",
                    f"`derive.where` of `{m.name}` holds the bind marker :{key}, which no "
                    "declared parameter of the metric fills",
                    hint=f'declare it: "params": [{{"name": "{key}", ...}}]',
                )
            ph.replace(_literal(values[key]))
        return pred

    def predicate(self, name: str, text: str, dataset: str) -> exp.Expression:
        try:
            tree = parse_scalar(text, None, bind_markers=True)
        except (SqlSnippetError, SqlTooComplex) as err:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.where` of `{name}` is not a valid predicate: {err}",
            ) from None
        if any(isinstance(n, exp.AggFunc) for n in tree.walk()):
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.where` of `{name}` must not contain aggregates; a filter tests row "
                "values",
            )
        cols = list(tree.find_all(exp.Column))
        if not cols and tree.find(exp.Placeholder) is not None:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`derive.where` of `{name}` tests only parameters, no column",
                hint="a filter predicate tests a field of the base metric's dataset",
            )
        datasets = self.scope.datasets
        for c in cols:
            if c.table:
                ds = datasets.get(c.table)
                f = ds.fields.get(c.name) if ds is not None else None
                if f is None:
                    everything = [f"{d}.{n}" for d, x in datasets.items() for n in x.fields]
                    raise self.error(
                        name,
                        "unknown_column",
                        f"`derive.where` of `{name}` reads `{c.sql()}`, which is not a field",
                        candidates=tuple(closest(c.sql(), everything)),
                    )
            else:
                found = [d.fields[c.name] for d in datasets.values() if c.name in d.fields]
                if len(found) > 1:
                    raise self.error(
                        name,
                        "ambiguous_column",
                        f'column "{c.name}" in `derive.where` of `{name}` exists in more than '
                        "one dataset; qualify it as dataset.field",
                        candidates=tuple(x.qualified for x in found),
                    )
                if not found:
                    everything = [n for x in datasets.values() for n in x.fields]
                    raise self.error(
                        name,
                        "unknown_column",
                        f'column "{c.name}" in `derive.where` of `{name}` is not a field of any '
                        "dataset",
                        candidates=tuple(closest(c.name, everything)),
                    )
                f = found[0]
            if f.dataset != dataset:
                raise self.error(
                    name,
                    "not_implemented",
                    f"the predicate of `{name}` references {f.qualified}, but the base "
                    f"aggregates over `{dataset}`; cross-dataset filter predicates land in "
                    "D-DERIVE M4",
                    hint="filter on a field of the base metric's own dataset",
                )
            c.replace(field_reference(f.qualified, f.expr))
        return tree

    # -- the gate and metadata -----------------------------------------------------------------
    def gate(self, m: MetricIr, e: _Exp) -> None:
        """DRV-TIER-01: the flatten-tier expression equals the declaration's expansion."""
        assert e.tree is not None and m.expr_tree is not None
        authored = canonical(m.expr_tree)
        if authored != e.tree:
            raise self.error(
                m.name,
                "derive_expression_mismatch",
                f"the expression of `{m.name}` does not match its derive expansion (authored: "
                f"{_show(authored)}; derived: {_show(e.tree)})",
                hint=f"regenerate the expression from the declaration: {_show(e.tree)}",
            )

    def leaf_dims(self, leaf: str) -> frozenset[str]:
        """Every dimension a leaf's measures reach (many-to-one), and metric_time."""
        m = self.metrics[leaf]
        graph = self.scope.graph
        sets: list[set[str]] = []
        for meas_name in m.measures:
            own = self.scope.registry.measures[meas_name].dataset
            dims = {
                f.qualified
                for d in self.scope.datasets.values()
                if d.name == own or graph.reachable(own, d.name)
                for f in d.fields.values()
            }
            sets.append(dims)
        out = set.intersection(*sets) if sets else set()
        if m.time_axis is not None or any(
            self.scope.datasets[self.scope.registry.measures[x].dataset].primary_time
            for x in m.measures
        ):
            out.add(METRIC_TIME)
        return frozenset(out)

    def compose_meta(self, name: str, decl: ComposeDerive, e: _Exp) -> DeriveIr:
        leaf_dims = tuple((leaf, self.leaf_dims(leaf)) for leaf in e.leaves)
        conformed = frozenset.intersection(*(d for _, d in leaf_dims)) if leaf_dims else frozenset()
        if not conformed:
            s = self.site(name)
            self.scope.cx.sink.warn(
                "compose_no_conformed_dimensions",
                f"compose metric `{name}`: its members {', '.join(e.leaves)} share no "
                "dimension, so it can only be queried ungrouped",
                path=s.path,
                line=s.line,
            )
        measures = self.scope.registry.measures
        leaf_measures: list[LeafMeasure] = []
        exact = e.linear is not None
        if e.linear is not None:
            members = tuple(DeriveMember(k, v) for k, v in e.linear.items())
            for leaf, coef in e.linear.items():
                lm = self.metrics[leaf]
                agg = _agg_kind(lm, self.scope)
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

    def stage_meta(self, name: str, decl: ComposeDerive, e: _Exp) -> DeriveIr:
        """DRV-CMP-10/12, DRV-NEST-08: members stay members (the direct ones), the arithmetic
        runs over their output columns after the window stage; attribution approximate."""
        tree = parse_scalar(decl.expr, None)
        direct = list(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))
        for c in list(tree.find_all(exp.Column)):
            ref: exp.Expression = exp.column(c.name)
            if decl.fill is not None:
                ref = exp.Coalesce(this=ref, expressions=[_number(decl.fill)])
            c.replace(ref)
        formula = safe_division(strip_parens(tree))
        leaf_dims = tuple((leaf, self.leaf_dims(leaf)) for leaf in e.leaves)
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
            level=self.level(name),
        )

    # -- window.base ----------------------------------------------------------------------------
    def window_base(self, m: MetricIr) -> MetricIr:
        name, bname = m.name, m.window_base
        assert bname is not None
        base = self.metrics.get(bname)
        if bname == name:
            raise self.error(
                name, "metric_reference_cycle", f"metric reference cycle: {name} -> {name}"
            )
        if base is None:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`window.base` of `{name}` names `{bname}`, which is not a metric",
                candidates=tuple(closest(bname, [n for n in self.metrics if n != name])),
            )
        if base.window is not None:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`window.base` of `{name}` names the window metric `{bname}`: an inner window "
                "has no stage of its own to land on",
                hint=f"wrap `{bname}` in a compose metric and name that as the base",
            )
        if base.lod is not None:  # WIN-BASE-04 / LOD-NI-15
            raise self.error(
                name,
                "not_implemented",
                f"`window.base` of `{name}` names `{bname}`, a level-of-detail metric: a window "
                "over a level of detail is not implemented",
                hint="window the plain metric it is based on, and query the LOD metric apart",
            )
        decl = base.derive_decl
        if decl is not None and not isinstance(decl, FilterDerive | ComposeDerive):
            raise self.error(
                name,
                "not_implemented",
                f"`window.base` of `{name}` names the {getattr(decl, 'family', 'derived')} "
                f"metric `{bname}`: a window over it is not implemented",
            )
        self.stack.append(name)
        try:
            e = self.expand(bname, None)
        finally:
            self.stack.pop()
        level = 1 + self.level(bname) if e.stage else 1
        if level > MAX_WINDOW_LEVELS:
            raise self.error(
                name,
                "not_implemented",
                f"metric `{name}` stacks {level} window stages, past the limit of "
                f"{MAX_WINDOW_LEVELS}",
                hint="compute a lower level in its own query",
            )
        spec = m.window
        # the parser's default (identity): a partition the payload did not declare (WIN-19-07)
        implicit = spec is not None and spec.partition_is_default
        if level >= 2 and spec is not None and spec.family != "offset" and implicit:
            raise self.error(
                name,
                "invalid_datus_extension",
                f"`window` of `{name}` reads another window's output (level {level} over "
                f"`{bname}`) and must declare `partition` explicitly: the default is only "
                "unambiguous on a single stage",
                hint=f'add "partition": {{"mode": "query_dimensions"}} to `{spec.family}`',
            )
        chain = [bname]
        subset = bname if isinstance(decl, FilterDerive) else None
        return replace(
            m,
            kind=base.kind,
            formula=base.formula,
            measures=base.measures,
            datasets=base.datasets,
            # the base's axis: a cross-fact base has none (each branch reads its own), never
            # the axis the approximate expression happens to imply
            time_axis=(
                base.time_axis
                if base.time_axis is not None or len(base.datasets) > 1
                else m.time_axis
            ),
            derive=DeriveIr(
                "window",
                "stage",
                base=bname,
                subset_of=subset,
                base_chain=tuple(chain),
                attribution="approximate",
                level=level,
                written=(bname,),
            ),
        )

    def level(self, name: str) -> int:
        """The window stage a metric's value exists after (0: an aggregate)."""
        m = self.metrics.get(name)
        if m is None:
            return 0
        if m.window is not None:
            base = m.window_base
            if base is not None and self.metrics.get(base) is not None:
                inner = self.level(base)
                return inner + 1 if inner >= 1 else 1
            return 1
        decl = m.derive_decl
        if isinstance(decl, ComposeDerive):
            tree = parse_scalar(decl.expr, None)
            return max((self.level(c.name) for c in tree.find_all(exp.Column)), default=0)
        return 0


def _param_defaults(m: MetricIr) -> dict[str, object]:
    """The metric's D-PARAM defaults, when the params reader (ext/params.py) declared any."""
    params = getattr(m, "params", None)
    return dict(params.defaults()) if params is not None else {}


def _literal(value: object) -> exp.Expression:
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _written(decl: ComposeDerive) -> tuple[str, ...]:
    tree = parse_scalar(decl.expr, None)
    return tuple(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))


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


def _number(v: float | int) -> exp.Expression:
    return exp.Literal.number(v)


def _show(tree: exp.Expression) -> str:
    return tree.sql()


def _linear(tree: exp.Expression, members: dict[int, _Exp]) -> dict[str, float] | None:
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


def compile_derives(scope: MetricScope, metrics: dict[str, MetricIr]) -> None:
    """The D-DERIVE pass over compiled metrics (edits `metrics`: metadata added, failures
    dropped after their errors)."""
    DeriveCompiler(scope, metrics).run()
