"""D-LOD fixed fields in a branch: which rollups, which shape, where each filter lands
(datus-extensions §3 D-LOD "filter placement", "broadcast"; CHECKLIST LOD-PLAN-*, LOD-FLT-*).

Tableau's order of operations: the context layer (`time_range`, `context_filter`, and the joins
they name) feeds every rollup; the rollup computes the fixed values; dimension filters
(`where_sql`) pick the rows the view aggregates and never enter a rollup. Each branch that reads
a fixed field gets one of three shapes:

* `rollup` (two-stage): the view reads only the rollup: every dim, filter and measure is a
  function of one key family's keys and values, and a measure reading a key is duplicate-
  insensitive (COUNT DISTINCT / MIN / MAX); dimension filters apply to the rollup output;
* `detail` (broadcast): the fact's detail rows, each joined NULL-safely to its key's row of
  one derived table per key family; filters on detail rows, predicates on fixed values after
  the join;
* `grid` (broadcast, weighted once per key): a measure aggregates pinned values only (fixed
  values and constants): the detail rows are first reduced to one row per (view dims x the
  aggregated family's keys), then aggregated.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.errors import QueryError
from dosi.ir.lod_field import ModelLodInfo, lod_refs, lod_tag, model_lod_info
from dosi.ir.model import ModelIr
from dosi.plan.joins import JoinGraph, join_order
from dosi.plan.records import Branch, JoinStep, LodRollupSpec, LodShape, TimeFilter
from dosi.query.context_filter import check_context_filter
from dosi.query.metric_time_filter import bind_metric_time, uses_metric_time
from dosi.query.resolve import ResolvedQuery

# aggregates a key repeated over its fact rows cannot change: they read the rollup as well
KEY_SAFE_AGGS = frozenset({"count_distinct", "min", "max", "approx_count_distinct"})


def lod_query_branch(model: ModelIr, graph: JoinGraph, branch: Branch, rq: ResolvedQuery) -> Branch:
    """`lod_branch` for a resolved query; a query that reads a fixed field beside a window
    metric is refused (the not-yet table: different stage stacks)."""
    info = model_lod_info(model)
    if info is None or not _reads_lod(info, branch, rq):
        return branch
    where = rq.where.expr if rq.where is not None else None
    context = rq.context.expr if rq.context is not None else None
    if rq.context is not None and not all(
        f.dataset == branch.dataset or graph.reachable(branch.dataset, f.dataset)
        for f in rq.context.fields
    ):
        context = None  # LOD-FLT-01: a branch that cannot read the context is unfiltered
    if branch.axis is not None:  # metric_time in a filter: this branch's own axis
        axis = model.field(branch.axis)
        if where is not None and uses_metric_time(where):
            where = bind_metric_time(where, axis)
        if context is not None and uses_metric_time(context):
            context = bind_metric_time(context, axis)
    out = lod_branch(model, graph, branch, where, context)
    if out.lod is not None:
        if any(d.window is not None for d in rq.dims):
            raise QueryError(
                "not_implemented",
                "a streaming window in a query that reads a D-LOD field: the rollup and the "
                "window bucketing are different stage stacks",
                hint="group by a time grain instead, or query the field separately",
            )
        windowed = [m.name for m in rq.planned_metrics if m.window is not None]
        if windowed:
            raise QueryError(
                "not_implemented",
                f"window metric `{windowed[0]}` in a query that reads a D-LOD field: the "
                "rollup and the window stage are different stage stacks",
                metrics=windowed,
                hint="query the window metric and the level-of-detail field separately",
            )
    return out


def check_lod_field_shape(model: ModelIr, rq: ResolvedQuery) -> None:
    """LOD-NI-08 before any join path is resolved (issue 20 point 8): a query that groups or
    filters by a D-LOD field beside a window metric is `not_implemented` (different stage
    stacks), whichever dataset the window's metric lives on, so the hint is the restriction,
    never a relationship that would not help."""
    info = model_lod_info(model)
    if info is None:
        return
    named = [d.field.qualified for d in rq.dims if d.field is not None]
    if rq.where is not None:
        named += [f.qualified for f in rq.where.fields]
    lod = [n for n in named if n in info.fields]
    if not lod:
        return
    windowed = [m.name for m in rq.planned_metrics if m.window is not None]
    timed = [
        m
        for m in rq.planned_metrics
        if m.window is not None and m.window.needs_time_axis and m.time_axis is not None
    ]
    if timed and not any(d.grain is not None for d in rq.dims):
        # the window's own precondition comes first, as the reference engine orders them
        axis = timed[0].time_axis
        raise QueryError(
            "time_axis_not_grouped",
            f"window metric `{timed[0].name}` orders or shifts along `{axis}`, which the query "
            "does not group by with a grain",
            metrics=[m.name for m in timed],
            candidates=[axis, "metric_time"],
            hint=f'add "{axis}:<grain>" (e.g. :month) or "metric_time:<grain>" to group_by',
            missing_dimensions=[axis],
        )
    if windowed:
        raise QueryError(
            "not_implemented",
            f"window metric `{windowed[0]}` in a query that reads the D-LOD field `{lod[0]}`: "
            "the rollup and the window stage are different stage stacks (D-LOD not-yet table)",
            metrics=windowed,
            hint="query the window metric and the level-of-detail field separately",
        )


def _reads_lod(info: ModelLodInfo, branch: Branch, rq: ResolvedQuery) -> bool:
    """Cheap pre-check by name: a dim, a where_sql field or a measure reads a fixed field."""
    if any(m in info.measures for m in branch.measures):
        return True
    if any(d.field is not None and d.field.qualified in info.fields for d in rq.dims):
        return True
    return rq.where is not None and any(f.qualified in info.fields for f in rq.where.fields)


def lod_branch(
    model: ModelIr,
    graph: JoinGraph,
    branch: Branch,
    where: exp.Expression | None,
    context: exp.Expression | None,
) -> Branch:
    """The branch with its LOD shape, or unchanged when it reads no fixed field. `where`
    and `context` are the query's resolved row filters (both already in branch.filters)."""
    measures = [model.measures[m] for m in branch.measures]
    exprs = [d.expr for d in branch.dims] + [m.expr for m in measures]
    if where is not None:
        exprs.append(where)
    refs = list(dict.fromkeys(q for e in exprs for q in lod_refs(e)))
    if not refs:
        return branch
    rollups = _rollups(model, graph, refs, branch, context)
    by_field = {q: r for r in rollups for q in r.fields}
    where_parts = _conjuncts(where)
    pinned = [m for m in measures if _pinned(m.expr)]
    stored = [m for m in measures if not _pinned(m.expr)]
    if pinned and stored:  # checked before the shape, as the reference engine does
        raise QueryError(
            "not_implemented",
            f"measure `{pinned[0].name}` aggregates a level-of-detail value, which counts each "
            f"of its keys once, and `{stored[0].name}` aggregates a stored column, which counts "
            "each row; one query cannot report both grains",
            hint="query them separately",
        )
    fams = list(dict.fromkeys(by_field[q].alias for m in pinned for q in lod_refs(m.expr)))
    if len(fams) > 1:
        names = ", ".join(f"`{m.name}`" for m in pinned)
        raise QueryError(
            "not_implemented",
            f"measures {names} aggregate level-of-detail values fixed at different grains; "
            "one query cannot weigh each by its own keys",
            hint="query them separately",
        )
    # two-stage: everything reads one family's keys and values only
    if len(rollups) == 1:
        r = rollups[0]
        reads_only = all(
            _rollup_only(e, r) for e in [*(d.expr for d in branch.dims), *where_parts]
        ) and all(
            _rollup_only(m.expr, r)
            and (m.agg in KEY_SAFE_AGGS or not _reads_key(m.expr, r))
            and m.agg != "count_star"
            for m in measures
        )
        if reads_only:
            shape = LodShape(
                "rollup",
                rollups,
                placements=tuple(("on the rollup output", p.sql()) for p in where_parts),
            )
            return replace(
                branch,
                filters=tuple(where_parts),
                time_filters=(),
                lod=shape,
            )
    grid = fams[0] if fams else None
    if grid is not None:
        spec = next(r for r in rollups if r.alias == grid)
        for d in branch.dims:
            for k, k_expr in spec.keys:
                if d.output == k and d.expr != k_expr:
                    raise QueryError(
                        "duplicate_output_name",
                        f"the level-of-detail key `{spec.dataset}.{k}` and the group-by item "
                        f"`{d.output}` (another field) would both be the grid's column `{k}`",
                        hint=f"group by `{spec.dataset}.{k}` itself, or rename the field",
                    )
    placements = []
    for p in where_parts:
        on_values = bool(lod_refs(p))
        stored_cols = any(not _is_lod(c) for c in p.find_all(exp.Column))
        if grid is not None and on_values and stored_cols:
            raise QueryError(
                "not_implemented",
                f"where_sql condition `{p.sql()}` compares a detail column with a "
                "level-of-detail value, which needs the detail rows, but every measure here "
                "aggregates a level-of-detail value, which is weighed once per key",
                hint="split the condition into a condition on stored columns and one on the "
                "level-of-detail value, or aggregate a stored column",
            )
        where_text = (
            "after the broadcast join (mixes layers)"
            if on_values and stored_cols
            else "on the rollup values, after the broadcast join"
            if on_values
            else "on the detail rows"
        )
        placements.append((where_text, p.sql()))
    shape = LodShape("grid" if grid else "detail", rollups, grid, tuple(placements))
    return replace(branch, lod=shape)


def _rollups(
    model: ModelIr,
    graph: JoinGraph,
    refs: list[str],
    branch: Branch,
    context: exp.Expression | None,
) -> tuple[LodRollupSpec, ...]:
    """One rollup per key family (dataset, keys), in the order the query reads them."""
    families: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for q in refs:
        f = model.field(q)
        assert f.lod is not None
        families.setdefault((f.dataset, f.lod.keys), []).append(q)
    out = []
    single = len(families) == 1
    for i, ((dataset, keys), fields) in enumerate(families.items()):
        ds = model.datasets[dataset]
        ctx_targets: dict[str, str] = {}
        filters: list[exp.Expression] = []
        if context is not None:
            for c in context.find_all(exp.Column):
                if c.table and c.table != dataset and c.table in model.datasets:
                    ctx_targets.setdefault(c.table, "context_filter")
            filters.append(context)
        tfs: list[TimeFilter] = []
        for tf in branch.time_filters:
            tds = [c.table for c in tf.expr.find_all(exp.Column) if c.table]
            if all(t == dataset or graph.reachable(dataset, t) for t in tds):
                tfs.append(tf)
                for t in tds:
                    if t != dataset:
                        ctx_targets.setdefault(t, "time_range")
        paths = [graph.path(dataset, t, why) for t, why in ctx_targets.items()]
        out.append(
            LodRollupSpec(
                alias="f" if single else f"f{i}",
                dataset=dataset,
                keys=tuple((k, ds.fields[k].expr) for k in keys),
                values=tuple(
                    (model.field(q).name, model.field(q).lod.value)  # type: ignore[union-attr]
                    for q in fields
                ),
                fields=tuple(fields),
                joins=tuple(JoinStep(r) for r in join_order(paths)),
                filters=tuple(filters),
                time_filters=tuple(tfs),
            )
        )
    return tuple(out)


def _conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    out: list[exp.Expression] = []
    stack = [e]
    while stack:
        n = stack.pop()
        while isinstance(n, exp.Paren):
            n = n.this
        if isinstance(n, exp.And):
            stack.extend((n.expression, n.this))
        else:
            out.append(n)
    return out


def _is_lod(c: exp.Column) -> bool:
    return lod_tag(c) is not None


def key_rewrite(e: exp.Expression, r: LodRollupSpec, alias: str | None = None) -> exp.Expression:
    """`e` over the rollup's output: its keys and fixed values read from `alias` (the
    rollup's own alias by default)."""
    alias = alias or r.alias
    keys = [(expr, name) for name, expr in r.keys]
    values = {f"{r.dataset}.{name}" for name, _ in r.values}

    def repl(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and lod_tag(n) in values:
            return _col(n.name, alias)
        for k_expr, name in keys:
            if n == k_expr:
                return _col(name, alias)
        return n

    return e.transform(repl)


def _rollup_only(e: exp.Expression, r: LodRollupSpec) -> bool:
    """True when `e` reads nothing but the rollup's keys and values."""
    out = key_rewrite(e, r, alias="\x00lod")
    return all(c.table == "\x00lod" for c in out.find_all(exp.Column))


def _reads_key(e: exp.Expression, r: LodRollupSpec) -> bool:
    out = key_rewrite(e, r, alias="\x00lod")
    values = {name for name, _ in r.values}
    return any(c.table == "\x00lod" and c.name not in values for c in out.find_all(exp.Column))


def _pinned(e: exp.Expression) -> bool:
    """A measure over fixed values and constants only: each key counts once per group."""
    cols = list(e.find_all(exp.Column))
    return bool(cols) and all(_is_lod(c) for c in cols)


def _col(name: str, table: str) -> exp.Column:
    return exp.Column(
        this=exp.to_identifier(name, quoted=not name.isidentifier() or name.lower() != name),
        table=exp.to_identifier(table),
    )


def detail_lod_shape(
    model: ModelIr,
    graph: JoinGraph,
    dataset: str,
    exprs: list[exp.Expression],
    time_filters: tuple[TimeFilter, ...],
    context: exp.Expression | None,
) -> LodShape | None:
    """Detail rows (`select`) reading fixed fields: each row joined to its key's rollup row
    (the reference engine broadcasts them; the context layer, time_range and context_filter,
    feeds the rollups; where_sql filters the rows)."""
    refs = list(dict.fromkeys(q for e in exprs for q in lod_refs(e)))
    if not refs:
        return None
    if context is not None:
        check_context_filter(context)
    stub = Branch(
        id="detail",
        dataset=dataset,
        axis=None,
        joins=(),
        dims=(),
        measures=(),
        filters=(),
        time_filters=time_filters,
    )
    return LodShape("detail", _rollups(model, graph, refs, stub, context))
