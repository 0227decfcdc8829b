"""D-PARAM binding: a query's `params` -> one metric instance per output column.

datus-extensions §3 D-PARAM "绑定" / "输出" (PARAM-BIND-*, PARAM-OUT-*, PARAM-ORD-*):
a binding applies to every queried metric that declares the name (directly, or through its
derive members); an omitted param takes its default; a list expands the metric into one column
per value (several lists: the cartesian product, the earlier-declared param outer), at most 64
columns per query. A column under the default binding keeps the metric's name; otherwise it is
`{metric}__{param}_{value}` (`dosi.ext.params_naming`).

An instance is the metric's IR with its slots filled at the bound values and the column as its
name, added to a copy of the model (`dataclasses.replace`, never an edit: the IR is frozen), so
the planner plans it like any metric: parameters fill typed holes, never SQL text.
"""

from __future__ import annotations

import itertools
import json
import weakref
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from dosi.errors import QueryError, closest
from dosi.ext.params import FILTER_SLOT, MetricParams, ParamDecl, Scalar, show, typed_value
from dosi.ext.params_naming import column_name
from dosi.ext.window import SLOT_BY_NAME, SlotOutOfRange, WindowSpec
from dosi.ir.model import MeasureIr, MetricIr, ModelIr
from dosi.query.params_filter import instantiate_filter
from dosi.query.spec import OrderItem, Query, query_to_dict

MAX_COLUMNS = 64


@dataclass(frozen=True)
class OutputColumn:
    """One metric column of the result: its name, the model metric, the resolved params."""

    column: str
    metric: str
    params: dict[str, Scalar] | None = None  # None: the metric declares no params

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"column": self.column, "metric": self.metric}
        if self.params is not None:
            out["params"] = dict(self.params)
        return out


@dataclass(frozen=True)
class Expansion:
    """The query with metric columns for names, the model holding their instances."""

    model: ModelIr
    query: Query
    outputs: tuple[OutputColumn, ...]  # empty: each column is the metric of its name


def declared_params(model: ModelIr, metric: MetricIr) -> list[tuple[ParamDecl, str]]:
    """Every param a query can bind for `metric`, with the metric declaring it: its own, then
    its derive members' (PARAM-BIND-01: a compose inherits its members' params)."""
    out: dict[str, tuple[ParamDecl, str]] = {}
    for m in _with_members(model, metric, set()):
        if m.params is not None:
            for d in m.params.decls:
                out.setdefault(d.name, (d, m.name))
    return list(out.values())


def _with_members(model: ModelIr, metric: MetricIr, seen: set[str]) -> list[MetricIr]:
    """The metric, then (depth first) the metrics its derive declaration reads."""
    if metric.name in seen:
        return []
    seen.add(metric.name)
    out = [metric]
    for name in member_names(metric):
        member = model.metrics.get(name)
        if member is not None:
            out.extend(_with_members(model, member, seen))
    return out


def member_names(metric: MetricIr) -> tuple[str, ...]:
    """The metrics a D-DERIVE declaration reads: a compose's members (flattened leaves on the
    flatten tier) and a filter's base is not one (a filter declares its own params)."""
    derive = getattr(metric, "derive", None)
    if derive is not None and derive.family == "window" and derive.base:
        return (derive.base,)  # window.base: the window reads its base's series
    if derive is None or derive.family != "compose":
        return ()
    return tuple(m.metric for m in derive.members)


def expand_params(model: ModelIr, query: Query) -> Expansion:
    """Bind `query.params`; a query that binds nothing and names no param metric is returned
    as is (the common case costs one pass over the metric names)."""
    with_params = _param_metrics(model)
    if not query.params and not any(n in with_params for n in query.metrics):
        return Expansion(model, query, ())  # no outputs: every column is its metric
    metrics = [model.metrics.get(n) for n in query.metrics]
    declared = {
        m.name: declared_params(model, m)
        for m in metrics
        if m is not None and m.name in with_params
    }
    bound = dict(query.params)
    _check_names(query, bound, declared)
    for name, value in bound.items():
        for decls in declared.values():
            for d, owner in decls:
                if d.name == name:
                    _check_value(query, d, owner, value)
    columns: list[OutputColumn] = []
    instances: dict[str, MetricIr] = {}
    new_measures: dict[str, MeasureIr] = {}
    per_metric: dict[str, list[str]] = {}
    for name in query.metrics:
        decls = declared.get(name)
        if not decls:
            columns.append(OutputColumn(name, name))
            per_metric[name] = [name]
            continue
        cols = _metric_columns(model, model.metrics[name], decls, bound, new_measures)
        if len(cols) > MAX_COLUMNS:
            raise _too_large(name, len(cols))
        for col, binding, inst in cols:
            columns.append(OutputColumn(col, name, binding))
            if inst is not None:
                instances[col] = inst
        per_metric[name] = [c for c, _, _ in cols]
    if len(columns) > MAX_COLUMNS:
        raise _too_large(None, len(columns))
    for col in instances:
        if col in model.metrics:
            raise QueryError(
                "duplicate_output_name",
                f"the bound column `{col}` has the name of the model metric `{col}`",
                metrics=[col],
                hint="rename the model metric, or bind another value",
            )
    new_model = model
    if instances:
        new_model = replace(model, metrics={**model.metrics, **instances})
    if new_measures:
        new_model = replace(new_model, measures={**model.measures, **new_measures})
    new_query = replace(
        query,
        metrics=tuple(c.column for c in columns),
        order_by=_order_keys(query, per_metric, columns),
        params=(),
    )
    return Expansion(new_model, new_query, tuple(columns))


_PARAM_METRICS: dict[int, frozenset[str]] = {}


def _param_metrics(model: ModelIr) -> frozenset[str]:
    """The metrics a query can bind params of, once per compiled model (a query without
    params costs a set lookup per metric: compile time: docs/performance.md)."""
    key = id(model)
    found = _PARAM_METRICS.get(key)
    if found is None:
        found = frozenset(
            m.name
            for m in model.metrics.values()
            if any(x.params is not None and x.params.decls for x in _with_members(model, m, set()))
        )
        _PARAM_METRICS[key] = found
        weakref.finalize(model, _PARAM_METRICS.pop, key, None)
    return found


def _check_names(
    query: Query, bound: dict[str, Any], declared: dict[str, list[tuple[ParamDecl, str]]]
) -> None:
    """PARAM-BIND-03: a binding no queried metric declares is `unknown_metric_param`."""
    names = list(dict.fromkeys(d.name for decls in declared.values() for d, _ in decls))
    for name in bound:
        if name not in names:
            raise QueryError(
                "unknown_metric_param",
                f'no queried metric declares parameter "{name}"',
                candidates=closest(name, names) or names,
                hint=f'drop "{name}" from params',
                suggested_retry=_retry(query, name, None),
            )


def _check_value(query: Query, d: ParamDecl, owner: str, value: Any) -> None:
    """PARAM-BIND-04/05: type and domain of a scalar or of every listed value."""
    values = value if isinstance(value, tuple) else (value,)
    where = f'(declared on metric "{owner}")'
    if isinstance(value, tuple) and not value:
        raise _out_of_domain(query, d, owner, f"an empty list binds nothing {where}")
    seen: list[Scalar] = []
    for v in values:
        typed = typed_value(d.type, v)
        if typed is None:
            raise _out_of_domain(
                query,
                d,
                owner,
                f'parameter "{d.name}" expects {d.type}, got {_json_type(v)} {where}',
            )
        if not d.admits(typed):
            raise _out_of_domain(
                query, d, owner, f'parameter "{d.name}" must be {d.domain_text()} {where}'
            )
        if typed in seen:
            raise _out_of_domain(query, d, owner, f"value {show(typed)} is listed twice {where}")
        seen.append(typed)


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    return "string"


def _out_of_domain(query: Query, d: ParamDecl, owner: str, message: str) -> QueryError:
    return QueryError(
        "param_out_of_domain",
        message,
        metrics=[owner],
        hint=f'"params": {{"{d.name}": {_json(d.default)}}}',
        suggested_retry=_retry(query, d.name, d.default),
    )


def _json(v: Scalar) -> str:
    return f'"{v}"' if isinstance(v, str) else str(v)


def _retry(query: Query, name: str, value: Scalar | None) -> dict[str, Any]:
    """The query with `name` bound to `value` (None: dropped), ready to resend."""
    params = tuple((k, v) for k, v in query.params if k != name)
    if value is not None:
        params = tuple((k, value if k == name else v) for k, v in query.params)
    return query_to_dict(replace(query, params=params))


def _too_large(metric: str | None, count: int) -> QueryError:
    alone = f' (metric "{metric}" alone contributes {count})' if metric else ""
    return QueryError(
        "param_expansion_too_large",
        f"the bindings expand to more than {MAX_COLUMNS} output columns{alone}",
        metrics=[metric] if metric else [],
        hint="bind fewer values per list, or query the metrics separately",
    )


def _metric_columns(
    model: ModelIr,
    metric: MetricIr,
    decls: list[tuple[ParamDecl, str]],
    bound: dict[str, Any],
    new_measures: dict[str, MeasureIr],
) -> list[tuple[str, dict[str, Scalar], MetricIr | None]]:
    """(column, resolved binding, instance or None for the metric itself) per combination,
    the earlier-declared param outermost (PARAM-BIND-07)."""
    axes: list[list[tuple[Scalar, bool]]] = []  # per param: (value, suffixed)
    for d, _ in decls:
        raw = bound.get(d.name)
        if raw is None:
            axes.append([(d.default, False)])
        elif isinstance(raw, tuple):
            axes.append([(typed_value(d.type, v), True) for v in raw])  # type: ignore[misc]
        else:
            v = typed_value(d.type, raw)
            assert v is not None
            axes.append([(v, v != d.default)])
    out: list[tuple[str, dict[str, Scalar], MetricIr | None]] = []
    for combo in itertools.product(*axes):
        binding = {d.name: v for (d, _), (v, _) in zip(decls, combo, strict=True)}
        suffixed = [(d, v) for (d, _), (v, s) in zip(decls, combo, strict=True) if s]
        if not suffixed:
            out.append((metric.name, binding, None))
            continue
        col = column_name(metric.name, suffixed)
        inst, measures = instantiate(model, metric, col, binding)
        for measure in measures:
            new_measures[measure.name] = measure
        out.append((col, binding, inst))
    return out


def instantiate(
    model: ModelIr, metric: MetricIr, column: str, binding: dict[str, Scalar]
) -> tuple[MetricIr, list[MeasureIr]]:
    """The metric's IR with every slot filled at `binding`, named `column`, and the new
    measure a re-folded filter literal reads (None: none, or an existing one is shared)."""
    params: MetricParams | None = metric.params
    window = metric.window
    inst: MetricIr = replace(metric, name=column)
    measure: MeasureIr | None = None
    if params is not None:
        literal = any(
            s.slot == FILTER_SLOT and binding[s.param] != params.decl(s.param).default  # type: ignore[union-attr]
            for s in params.slots
        )
        if literal:  # PARAM-SLOT-06: re-fold the filter predicate at the bound literals
            inst, measure = instantiate_filter(model, metric, column, binding)
        for slot in params.slots:
            if slot.slot != FILTER_SLOT:
                value = binding[slot.param]
                # the declaration's type was checked against the slot's at load (an int
                # count, or an int / float threshold)
                assert window is not None and isinstance(value, (int, float))
                window = fill_window_slot(metric.name, window, slot.slot, value)
    inst = replace(inst, window=window)
    measures = [measure] if measure is not None else []
    for member_name in member_names(metric):
        member = model.metrics.get(member_name)
        if member is None or member_name not in _param_metrics(model):
            continue
        decls = declared_params(model, member)  # its own and, recursively, its members'
        own = {d.name: binding.get(d.name, d.default) for d, _ in decls}
        if all(own[d.name] == d.default for d, _ in decls):
            continue
        if not _reads_member_measures(metric, member):
            raise QueryError(
                "not_implemented",
                f"metric `{metric.name}` binds a parameter of its member `{member_name}`, whose "
                "series is a stage output (a window, or a compose over a window); query the "
                "member itself with the binding",
                metrics=[metric.name],
            )
        bound, extra = instantiate(model, member, column, own)
        measures.extend(extra)
        renames = dict(zip(member.measures, bound.measures, strict=True))
        inst = _swap_measures(inst, {k: v for k, v in renames.items() if k != v})
    return inst, measures


def _reads_member_measures(metric: MetricIr, member: MetricIr) -> bool:
    """The metric aggregates its member's measures itself (a flatten-tier compose, or a
    window over a leaf or filter series), so a bound member is a measure swap."""
    derive = getattr(metric, "derive", None)
    if derive is None:
        return False
    if derive.family == "window":
        return set(member.measures) <= set(metric.measures)
    return bool(derive.tier == "flatten")


def _swap_measures(metric: MetricIr, renames: dict[str, str]) -> MetricIr:
    """A flatten-tier compose reads its members' measures: point it at the bound ones."""

    def repl(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name in renames:
            return exp.column(renames[n.name])
        return n

    formula = metric.formula.copy().transform(repl, copy=False)
    return replace(
        metric, formula=formula, measures=tuple(renames.get(m, m) for m in metric.measures)
    )


def fill_window_slot(metric: str, window: WindowSpec, slot: str, value: int | float) -> WindowSpec:
    """A window spec with one slot at `value` (PARAM-SLOT-01..05; each family's slots are in
    its module, `dosi.ext.window.families.WINDOW_SLOTS`)."""
    try:
        return SLOT_BY_NAME[slot].bind(window, value)
    except SlotOutOfRange as err:
        raise QueryError(
            "param_out_of_domain", f"metric `{metric}`: {err}", metrics=[metric]
        ) from None


def _order_keys(
    query: Query, per_metric: dict[str, list[str]], columns: list[OutputColumn]
) -> tuple[OrderItem, ...]:
    """PARAM-ORD-01..03: a metric name sorts by its one column; spread over several columns it
    is `unknown_order_key`, with a retry binding just the first value; an engine-generated
    column name is never a sort key."""
    out: list[OrderItem] = []
    generated = {c.column for c in columns if c.column != c.metric}
    for o in query.order_by:
        if o.key in generated:
            raise QueryError(
                "unknown_order_key",
                f"order key `{o.key}` is an engine-generated column, not a metric or a group-by "
                "item",
                candidates=list(dict.fromkeys(c.metric for c in columns if c.column == o.key)),
                hint="order by the metric's name (it resolves when it has one column)",
            )
        cols = per_metric.get(o.key)
        if cols is None or cols == [o.key]:
            out.append(o)
            continue
        if len(cols) == 1:
            out.append(replace(o, key=cols[0]))
            continue
        raise QueryError(
            "unknown_order_key",
            f"order_by key `{o.key}` names a metric that a list binding spreads over "
            f"{len(cols)} columns ({', '.join(cols[:4])}{', ...' if len(cols) > 4 else ''}); "
            "no spelling picks one",
            candidates=[json.dumps(c.params) for c in columns if c.metric == o.key and c.params],
            hint="to sort by one binding, bind just that one value",
            suggested_retry=_single_value_retry(query),
        )
    return tuple(out)


def _single_value_retry(query: Query) -> dict[str, Any]:
    params = tuple((k, v[0] if isinstance(v, tuple) and v else v) for k, v in query.params)
    return query_to_dict(replace(query, params=params))
