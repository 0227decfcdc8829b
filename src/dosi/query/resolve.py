"""Query resolution: names in a parsed Query -> model objects.

Everything a caller can misspell is checked here, with candidates and a retry hint; the planner
receives only resolved objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from dosi.compiler.fields import field_reference
from dosi.compiler.sqlparse import (
    PREDICATE_LIMITS,
    SqlSnippetError,
    SqlTooComplex,
    has_window,
    parse_scalar,
)
from dosi.errors import QueryError, closest
from dosi.ir.model import FieldIr, MetricIr, ModelIr
from dosi.query.calendar import check_grain, check_known
from dosi.query.conform import check_not_conformed_path
from dosi.query.context_filter import names_only_outputs, resolve_context
from dosi.query.field_grain_filter import bucketed_reference, field_grain, unknown_grained
from dosi.query.filters import (
    ResultFilter,
    column_name,
    conjuncts,
    metric_named,
    names_metric,
    result_filter,
)
from dosi.query.lod_metric import lod_metric_as_dimension
from dosi.query.metric_time_filter import (
    metric_time_grain,
    not_a_predicate,
    placeholder,
    spell_grains,
)
from dosi.query.params_shape import check_no_bind_marker
from dosi.query.predicate_allowlist import check_predicate
from dosi.query.predicate_types import ANY, BOOL, DATATYPE_FAMILY, NUM, TEMPORAL, check_types
from dosi.query.spec import GroupByItem, Query, TimeRange, query_to_dict
from dosi.query.spellings import canonical_spellings, misspelt_grain, near_miss_grain
from dosi.query.stream_window import StreamWindow, check_stream_query
from dosi.query.time_format import check_bounds, reject_in_where

METRIC_TIME = "metric_time"


@dataclass(frozen=True)
class ResolvedDim:
    output: str
    spelling: str
    field: FieldIr | None  # None for metric_time (resolved per branch)
    grain: str | None
    window: StreamWindow | None = None
    via: tuple[str, ...] | None = None  # the join path's hops (dosi.plan.join_via)

    @property
    def is_metric_time(self) -> bool:
        return self.field is None

    @property
    def is_time(self) -> bool:
        return self.field is None or self.field.is_time


@dataclass(frozen=True)
class ResolvedWhere:
    expr: exp.Expression  # columns carry meta["dosi_field"] = "dataset.field"
    fields: tuple[FieldIr, ...]
    # metric_time placeholders in expr (dosi.query.metric_time_filter): bound per branch
    metric_time: bool = False


@dataclass(frozen=True)
class ResolvedTimeRange:
    range: TimeRange
    field: FieldIr | None  # None: each metric's own axis (or metric_time)


@dataclass(frozen=True)
class ResolvedQuery:
    """A query checked against the model: complete at construction and never edited; later
    steps derive a new one with `dataclasses.replace` (time_ranges scans, D-LOD sides)."""

    query: Query
    metrics: list[MetricIr]
    dims: list[ResolvedDim]
    where: ResolvedWhere | None
    time_range: ResolvedTimeRange | None
    # (output column, desc, nulls "first" | "last" | None)
    order: list[tuple[str, bool, str | None]] = field(default_factory=list)
    result_filter: ResultFilter | None = None  # where_sql conjuncts that name a metric
    # time_ranges (dosi.query.time_ranges): gated measure -> (the OR of its tags' gates, the field)
    range_scans: dict[str, tuple[exp.Expression, FieldIr]] = field(default_factory=dict)
    context: ResolvedWhere | None = None  # context_filter (D-LOD context layer)

    @property
    def uses_metric_time(self) -> bool:
        return any(d.is_metric_time for d in self.dims)

    @property
    def planned_metrics(self) -> list[MetricIr]:
        """The requested metrics, then metrics only a metric filter names (computed for the
        filter, never output)."""
        if self.result_filter is None:
            return self.metrics
        names = {m.name for m in self.metrics}
        return [*self.metrics, *(m for m in self.result_filter.metrics if m.name not in names)]


def resolve_query(model: ModelIr, query: Query) -> ResolvedQuery:
    query = canonical_spellings(model, query)  # `metric_time__month` = `metric_time:month`
    metrics = [_metric(model, query, name) for name in query.metrics]
    dims = [_dim(model, query, g) for g in query.group_by]
    if any(d.window is not None for d in dims):  # streaming windows (window_start/_end)
        check_stream_query(query, metrics, dims)
    seen: dict[str, str] = {}
    for d in dims:
        if d.output in seen:
            raise QueryError(
                "duplicate_output_name",
                f"group_by items `{seen[d.output]}` and `{d.spelling}` both produce the output "
                f"column `{d.output}`",
                hint="group by one of them, or rename a field in the model",
            )
        seen[d.output] = d.spelling
        if d.output in query.metrics:
            raise QueryError(
                "duplicate_output_name",
                f"group_by item `{d.spelling}` and metric `{d.output}` share an output name",
                hint="rename the field or the metric in the model",
            )
    windowed = any(m.window is not None for m in metrics)
    where, having = (
        _filters(model, query.where_sql, dims, windowed) if query.where_sql else (None, None)
    )
    tr = _time_range(model, query) if query.time_range else None
    context = (
        resolve_context(model, query.context_filter, _context_where)
        if query.context_filter is not None
        else None
    )
    rq = ResolvedQuery(query, metrics, dims, where, tr, result_filter=having, context=context)
    return replace(rq, order=_order(query, rq))


def _metric(model: ModelIr, query: Query, name: str) -> MetricIr:
    m = model.metrics.get(name)
    if m is not None:
        return m
    why = model.unavailable_metrics.get(name)
    if why is not None:
        raise QueryError(
            why.code,
            f"metric `{name}` is unavailable in basic mode: {why.message}",
            metrics=[name],
            candidates=why.candidates,
            hint="query it in datus mode, where its DATUS extension applies",
        )
    cands = closest(name, model.metrics)
    retry = None
    if cands:
        fixed = query_to_dict(query)
        fixed["metrics"] = [cands[0] if x == name else x for x in query.metrics]
        retry = fixed
    raise QueryError(
        "unknown_metric",
        f"unknown metric `{name}`",
        candidates=cands,
        hint="list metrics with `dosi list metrics`",
        suggested_retry=retry,
    )


def all_dimension_names(model: ModelIr) -> list[str]:
    return [f.qualified for d in model.datasets.values() for f in d.fields.values()]


def find_field(
    model: ModelIr, query: Query | None, name: str, *, role: str = "dimension"
) -> FieldIr:
    """`dataset.field`, or a bare field name defined by exactly one dataset."""
    if "." in name:
        ds, _, fname = name.partition(".")
        d = model.datasets.get(ds)
        if d is not None and fname in d.fields:
            return d.fields[fname]
        if d is None:
            check_not_conformed_path(model, name)  # D-CONFORM CONF-11
        _unknown(model, query, name, role)
    hits = [d.fields[name] for d in model.datasets.values() if name in d.fields]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        code = "ambiguous_dimension" if role == "dimension" else "ambiguous_field"
        raise QueryError(
            code,
            f"`{name}` is a field of several datasets: " + ", ".join(h.qualified for h in hits),
            candidates=[h.qualified for h in hits],
            hint="qualify it as dataset.field",
        )
    _unknown(model, query, name, role)
    raise AssertionError("unreachable")


def _unknown(model: ModelIr, query: Query | None, name: str, role: str) -> None:
    options = all_dimension_names(model)
    wrong = misspelt_grain(model, name) if role == "dimension" else None
    if wrong is not None:
        check_known(model, wrong[1], name)  # raises unknown_grain with the grains offered
    near = near_miss_grain(model, name) if role == "dimension" else None
    if near is not None:  # `orders.order_dat__month`: the retry keeps the grain (issue 21)
        times = [
            f.qualified for d in model.datasets.values() for f in d.fields.values() if f.is_time
        ]
        cands = [f"{c}__{near[1]}" for c in closest(near[0], [*times, METRIC_TIME])]
    else:
        cands = closest(name, options)
    if role == "dimension":
        cands = cands or closest(name, [*options, METRIC_TIME])
    code = "unknown_dimension" if role == "dimension" else "unknown_field"
    retry = None
    if cands and query is not None and role == "dimension":
        fixed = query_to_dict(query)
        fixed["group_by"] = [
            (cands[0] + (":" + g.grain if g.grain else "")) if g.field == name else g.spelling
            for g in query.group_by
        ]
        retry = fixed
    raise QueryError(
        code,
        f"unknown {role} `{name}`",
        candidates=cands,
        hint="list dimensions with `dosi list dimensions`; write dataset.field",
        suggested_retry=retry,
    )


def _dim(model: ModelIr, query: Query, g: GroupByItem) -> ResolvedDim:
    if g.field == METRIC_TIME:
        if g.via is not None:
            raise QueryError(
                "invalid_query",
                "`via` names a join path to a dataset; metric_time is each metric's own time "
                "axis and needs none",
                hint="drop `via` from the metric_time item",
            )
        if g.grain is not None:
            check_known(model, g.grain, g.spelling)
            for m in query.metrics:
                mir = model.metrics.get(m)
                if mir is not None and mir.time_axis is not None:
                    check_grain(model, model.field(mir.time_axis), g.grain, g.spelling)
        out = METRIC_TIME if g.grain is None else f"{METRIC_TIME}__{g.grain}"
        if g.window is not None:
            out = "window_start"  # and window_end (dosi.query.stream_window)
        return ResolvedDim(out, g.spelling, None, g.grain, g.window)
    lod_metric_as_dimension(model, g.field)  # D-LOD: LOD-NI-07
    f = find_field(model, query, g.field)
    if g.grain is not None:
        if not f.is_time:
            raise QueryError(
                "grain_on_non_time_dimension",
                f"`{f.qualified}` is not a time dimension, so `:{g.grain}` does not apply",
                hint=f"group by `{f.qualified}` without a grain",
                suggested_retry=_retry_without_grain(query, g, f.qualified),
            )
        check_grain(model, f, g.grain, g.spelling)
    if g.window is not None and not f.is_time:
        raise QueryError(
            "grain_on_non_time_dimension",
            f"`{f.qualified}` is not a time dimension; streaming windows bucket time",
        )
    out = f.name if g.grain is None else f"{f.name}__{g.grain}"
    if g.window is not None:
        out = "window_start"  # and window_end (dosi.query.stream_window)
    return ResolvedDim(out, g.spelling, f, g.grain, g.window, g.via)


def _retry_without_grain(query: Query, g: GroupByItem, name: str) -> dict:
    fixed = query_to_dict(query)
    fixed["group_by"] = [name if x is g else x.spelling for x in query.group_by]
    return fixed


def _filters(
    model: ModelIr, text: str, dims: list[ResolvedDim], windowed: bool = False
) -> tuple[ResolvedWhere | None, ResultFilter | None]:
    """where_sql split into its two levels (dosi.query.filters): conjuncts naming only fields
    filter rows before aggregation, conjuncts naming a metric filter the result rows."""
    tree = _parse_where(text)
    _check_where(tree, text)
    _check_not_literal(tree, text)  # a bare Boolean field is a predicate (_where checks it)
    check_predicate(tree, lambda _col: None)  # the allow-list, on both levels
    rows: list[exp.Expression] = []
    metric_level: list[exp.Expression] = []
    outputs = {
        d.field.qualified: d.output
        for d in dims
        if d.field is not None and d.grain is None and d.window is None
    }
    for part in conjuncts(tree):
        if windowed and names_only_outputs(part, outputs, lambda n: _where_field(model, n)):
            # beside a window metric, a condition on the view's own dims filters the result
            # after the window stage; context_filter is what narrows the population
            metric_level.append(part)
        elif names_metric(model, part):
            _check_predicate(part, text)  # a bare metric is a number, not a condition
            check_types(part, lambda col: _result_column_type(model, col))
            metric_level.append(part)
        else:
            rows.append(part)
    where = None
    if rows:
        row_tree = rows[0] if len(rows) == 1 and rows[0] is tree else _and(rows)
        where = _where(model, row_tree)
    having = None
    if metric_level:
        having = result_filter(model, metric_level, outputs, lambda name: _where_field(model, name))
    return where, having


def _result_column_type(model: ModelIr, col: exp.Column) -> str:
    """A metric-level conjunct's column: a metric is a number, a field keeps its datatype."""
    if metric_named(model, col) is not None:
        return NUM
    f = _where_field(model, column_name(col))
    return DATATYPE_FAMILY.get(f.datatype or "", ANY)


def _and(parts: list[exp.Expression]) -> exp.Expression:
    """The conjuncts ANDed again (an OR operand keeps its parentheses)."""

    def operand(p: exp.Expression) -> exp.Expression:
        return exp.Paren(this=p.copy()) if isinstance(p, exp.Or) else p.copy()

    out = operand(parts[0])
    for p in parts[1:]:
        out = exp.And(this=out, expression=operand(p))
    return out


def _parse_where(text: str) -> exp.Expression:
    check_no_bind_marker(text)
    try:
        return parse_scalar(spell_grains(text), limits=PREDICATE_LIMITS)
    except SqlTooComplex as err:
        raise QueryError(
            "filter_too_complex",
            f"where_sql: {err}",
            hint="simplify the filter (see docs/limits.md); use IN for many values",
            detail={"limit": err.limit, "maximum": err.maximum},
        ) from None
    except SqlSnippetError as err:
        raise QueryError(
            "unsupported_filter",
            f"where_sql: {err}",
            hint="write one SQL predicate over dataset.field names",
        ) from None


def _check_where(tree: exp.Expression, text: str) -> None:
    """What SQL a where_sql may hold (both levels): no aggregate calls (a metric filter names
    the metric), no window functions."""
    text = _shown(text)
    if tree.find(exp.AggFunc) is not None:
        raise QueryError(
            "aggregate_in_where",
            f"where_sql `{text}` aggregates; where_sql filters rows before aggregation",
            hint="declare the aggregate as a metric and name it in where_sql: a condition on "
            "a metric filters the result rows",
        )
    if has_window(tree):
        raise QueryError("unsupported_filter", f"where_sql `{text}` uses a window function")


def _shown(text: str) -> str:
    return text if len(text) <= 120 else text[:120] + "..."


def _check_predicate(part: exp.Expression, text: str) -> None:
    if isinstance(part, (exp.Column, exp.Literal)) and not isinstance(part, exp.Boolean):
        raise QueryError(
            "unsupported_filter",
            f"where_sql `{_shown(text)}` is not a predicate",
            hint="e.g. orders.status = 'completed'",
        )


def _check_not_literal(part: exp.Expression, text: str) -> None:
    if isinstance(part, exp.Literal):
        _check_predicate(part, text)


def _bare_columns(node: exp.Expression) -> list[exp.Column]:
    """Columns standing where a condition stands: the whole filter, or an operand of AND /
    OR / NOT (`orders.is_gift`, `NOT orders.is_gift AND ...`)."""
    if isinstance(node, exp.Column):
        return [node]
    if isinstance(node, (exp.And, exp.Or)):
        return [*_bare_columns(node.this), *_bare_columns(node.expression)]
    if isinstance(node, (exp.Not, exp.Paren)):
        return _bare_columns(node.this)
    return []


def _check_bare_booleans(model: ModelIr, tree: exp.Expression) -> None:
    """A field alone is a condition when it is declared Boolean (issue 21 item 2); any other
    field (or one without a datatype) would be a number or a string the database refuses or
    reads by its own casting rules."""
    for col in _bare_columns(tree):
        if metric_time_grain(model, col)[0] or field_grain(model, column_name(col)):
            raise not_a_predicate(column_name(col))
        f = _where_field(model, column_name(col))
        if DATATYPE_FAMILY.get(f.datatype or "") != BOOL:
            kind = f"a {f.datatype} field" if f.datatype else "a field without a datatype"
            raise QueryError(
                "unsupported_filter",
                f"where_sql: `{f.qualified}` alone is not a predicate: it is {kind}, and only "
                "a Boolean field is a condition by itself",
                hint=f"compare it (e.g. {f.qualified} = 'x'), or declare `datatype: Boolean` "
                "on the field",
            )


def _where_field(model: ModelIr, name: str) -> FieldIr:
    if name == METRIC_TIME:
        raise QueryError(
            "unsupported_filter",
            "a where_sql condition on a metric cannot read metric_time (the result rows "
            "hold a metric_time column only when the query groups by it)",
            hint="filter metric_time in a conjunct of its own (... AND metric_time >= "
            "'2025-01-01'), or use time_range",
        )
    f = find_field(model, None, name, role="field")
    reject_in_where(f)  # D-FORMAT FMT-FLT-02
    return f


def _where(
    model: ModelIr, tree: exp.Expression, *, metric_time: str | None = None
) -> ResolvedWhere:
    """The row-level conjuncts with every column replaced by its field's expression, and
    metric_time by a placeholder the planner binds to each metric's axis (`metric_time`:
    None where it may stand, else why not: no metric gives the query a time axis)."""
    fields: list[FieldIr] = []
    families: dict[int, str] = {}
    named_time: list[bool] = []
    _check_bare_booleans(model, tree)

    def resolve_column(col: exp.Column) -> exp.Expression:
        is_time, grain = metric_time_grain(model, col)
        if is_time:
            if metric_time is not None:
                raise _metric_time_needs_metric(model, metric_time)
            named_time.append(True)
            families[id(col)] = TEMPORAL
            return placeholder(grain)
        name = column_name(col)
        split = field_grain(model, name)  # `orders.order_date__month` (issue 21 item 3)
        if split is not None:
            f = _where_field(model, split[0])
            fields.append(f)
            families[id(col)] = TEMPORAL
            return bucketed_reference(model, f, split[1], name)
        f = _grained_or_field(model, name)
        fields.append(f)
        families[id(col)] = DATATYPE_FAMILY.get(f.datatype or "", ANY)
        return field_reference(f.qualified, f.expr)

    tree = check_predicate(
        tree,
        resolve_column,
        label="where_sql",
        column_type=lambda col: families.get(id(col), ANY),
    )
    return ResolvedWhere(tree, tuple(dict.fromkeys(fields)), bool(named_time))


def _grained_or_field(model: ModelIr, name: str) -> FieldIr:
    """The field `name` names; an unknown name spelt `<field>__<grain>` is reported with
    candidates that keep the grain."""
    try:
        return _where_field(model, name)
    except QueryError as err:
        better = unknown_grained(model, name) if err.code == "unknown_field" else None
        if better is not None:
            raise better from None
        raise


def _metric_time_needs_metric(model: ModelIr, where: str) -> QueryError:
    times = [f.qualified for d in model.datasets.values() for f in d.fields.values() if f.is_time]
    return QueryError(
        "metric_time_needs_metric",
        f"{where} cannot read metric_time: it is each metric's own time axis, and this query "
        "has no metric",
        candidates=times,
        hint="filter on a time field (dataset.field) instead",
    )


def _time_range(model: ModelIr, query: Query) -> ResolvedTimeRange:
    tr = query.time_range
    assert tr is not None
    if tr.dimension == METRIC_TIME:
        return ResolvedTimeRange(tr, None)
    if tr.dimension is None:
        grouped = grouped_time_field(model, query)
        if grouped is None:
            return ResolvedTimeRange(tr, None)
        check_bounds(grouped, tr)
        return ResolvedTimeRange(tr, grouped)
    f = find_field(model, query, tr.dimension, role="dimension")
    if not f.is_time:
        raise QueryError(
            # the reference engine's code for a time_range over a non-time field (§2.4)
            "grain_on_non_time_dimension",
            f"time_range.dimension `{f.qualified}` is not a time field",
            candidates=[
                x.qualified for d in model.datasets.values() for x in d.fields.values() if x.is_time
            ],
        )
    check_bounds(f, tr)  # D-FORMAT FMT-GRP-02/03
    return ResolvedTimeRange(tr, f)


def grouped_time_field(model: ModelIr, query: Query) -> FieldIr | None:
    """CORE-Q-07: a range without `dimension` filters the one explicit time field the query
    groups by (any grain); None when no time item is grouped (each metric's primary time, or
    metric_time alone); time_range_needs_dimension when two are, or one beside metric_time."""
    fields: dict[str, FieldIr] = {}
    metric_time = False
    for g in query.group_by:
        if g.field == METRIC_TIME:
            metric_time = True
            continue
        f = find_field(model, query, g.field)
        if f.is_time:
            fields.setdefault(f.qualified, f)
    if not fields:
        return None
    if len(fields) > 1 or metric_time:
        named = [*fields, *([METRIC_TIME] if metric_time else [])]
        raise QueryError(
            "time_range_needs_dimension",
            "the query groups by several time items ("
            + ", ".join(f"`{n}`" for n in named)
            + "), so a time range without `dimension` has no single column to filter",
            candidates=named,
            hint='name the one to filter: "time_range": {..., "dimension": "dataset.field"}',
        )
    return next(iter(fields.values()))


def _order(query: Query, rq: ResolvedQuery) -> list[tuple[str, bool, str | None]]:
    if not query.order_by:
        return []
    names: dict[str, str] = {}
    for m in rq.metrics:
        names[m.name] = m.name
    for d in rq.dims:
        names[d.output] = d.output
        names[d.spelling] = d.output
        base = d.field.qualified if d.field is not None else METRIC_TIME
        if d.grain is not None:  # either spelling of a grain (issue 21 item 3)
            names[f"{base}:{d.grain}"] = d.output
            names[f"{base}__{d.grain}"] = d.output
        elif d.field is not None:
            names[d.field.qualified] = d.output
        if d.window is not None:
            names["window_end"] = "window_end"
    out: list[tuple[str, bool, str | None]] = []
    for o in query.order_by:
        col = names.get(o.key)
        if col is None:
            raise QueryError(
                "unknown_order_key",
                f"order_by key `{o.key}` is neither a requested metric nor a group_by item",
                candidates=closest(o.key, names) or list(dict.fromkeys(names.values())),
                hint="order by a metric name or a group_by output name (e.g. metric_time__month)",
            )
        out.append((col, o.desc, o.nulls))
    return out


def _context_where(model: ModelIr, text: str) -> ResolvedWhere:
    """context_filter beside metrics: metric_time is each metric's axis there too."""
    return resolve_where(model, text, metric_time=True)


def resolve_where(model: ModelIr, text: str, *, metric_time: bool = False) -> ResolvedWhere:
    """A row filter only (detail-row queries, dosi.query.detail; context_filter): with no
    aggregation stage, a condition on a metric has nothing to filter, and metric_time (a
    metric's axis) only with `metric_time`."""
    tree = _parse_where(text)
    _check_where(tree, text)
    _check_not_literal(tree, text)
    if any(names_metric(model, part) for part in conjuncts(tree)):
        raise QueryError(
            "unsupported_filter",  # the reference code: a metric is not a dimension
            f"where_sql `{text}` names a metric; detail rows are never aggregated",
            hint="filter on dataset fields, or ask `query` for the metric",
        )
    return _where(model, tree, metric_time=None if metric_time else "this filter")
