"""dbt's Jinja filters and group-by items (`{{ Dimension('listing__is_lux') }}`) as SQL.

dbt writes filters as SQL with Jinja calls standing for columns: `Dimension(name,
entity_path=[...])` (with `.grain(g)` / `.date_part(p)`), `TimeDimension(name, grain,
entity_path, date_part_name)`, `Entity(name, entity_path)` and `Metric(name, group_by)`. Each
call is rendered as the qualified Ossie field it resolves to (`listings_latest.is_lux_latest`,
`DATE_TRUNC('month', bookings_source.ds)`), in a sandboxed Jinja environment, so a filter
becomes a predicate dosi checks like any other. `metric_time` is rendered by the caller's
rule (the metric's own agg time dimension); a `Metric(name, group_by=[entity])` call (a metric's
value per entity) becomes a dosi metric dimension (`Rendered.metric_dimensions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sqlglot
from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment
from sqlglot import exp

from dosi.importers.dbt.names import (
    DUNDER,
    DbtNameError,
    DbtNames,
    Element,
    ModelInfo,
    Resolved,
)
from dosi.importers.dbt.time_grains import SHARED_GRAINS, SUB_SECOND_GRAINS

MetricTimeSql = Callable[[str | None], str | None]
"""Renders `metric_time` at a grain (None: its native grain); None when it has no column."""

_EXTRACT = {"dow": "dayofweek", "doy": "dayofyear"}


@dataclass(frozen=True)
class Ref:
    """One Jinja call: a resolved element (or metric_time, or a metric), with modifiers."""

    resolved: Resolved | None
    metric: str | None = None
    metric_group_by: tuple[str, ...] = ()
    desc: bool = False
    sink: list[Ref] = field(default_factory=list, compare=False, repr=False)
    render: Callable[[Ref], str] | None = field(default=None, compare=False, repr=False)

    def grain(self, g: str) -> Ref:
        assert self.resolved is not None
        return self._again(resolved=replace(self.resolved, grain=str(g).lower()))

    def date_part(self, p: str) -> Ref:
        assert self.resolved is not None
        return self._again(resolved=replace(self.resolved, date_part=str(p).lower()))

    def descending(self, flag: bool = True) -> Ref:
        return self._again(desc=bool(flag))

    def _again(self, **kw: Any) -> Ref:
        out = replace(self, **kw)
        self.sink.append(out)
        return out

    def __str__(self) -> str:
        assert self.render is not None
        return self.render(self)


@dataclass
class Rendered:
    """A rendered filter: its SQL, the datasets it reads, and what could not be rendered."""

    sql: str
    datasets: set[str] = field(default_factory=set)
    metric_time: bool = False
    problems: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)  # one need code per problem (queries.NEEDS)
    # `Metric(name, group_by)` calls: dosi's query key `metric_dimensions`, name -> declaration
    metric_dimensions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def problem(self, code: str, message: str) -> None:
        self.codes.append(code)
        self.problems.append(message)


class FilterRenderer:
    """Renders dbt filter templates and group-by / order-by items for one context."""

    def __init__(
        self,
        names: DbtNames,
        near: Sequence[str] = (),
        metric_time: MetricTimeSql | None = None,
    ) -> None:
        self.names = names
        self.near = list(near)
        self.metric_time = metric_time
        self._env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)

    # -- calls -------------------------------------------------------------------------------
    def _globals(self, sink: list[Ref], out: Rendered | None) -> dict[str, Any]:
        def render(ref: Ref) -> str:
            return self._sql(ref, out)

        def make(resolved: Resolved | None, **kw: Any) -> Ref:
            ref = Ref(resolved, sink=sink, render=render, **kw)
            sink.append(ref)
            return ref

        def dimension(name: str, entity_path: Sequence[str] = ()) -> Ref:
            return make(self.names.resolve(str(name), _path(entity_path), near=self.near))

        def time_dimension(
            name: str,
            time_granularity_name: str | None = None,
            entity_path: Sequence[str] = (),
            descending: bool | None = None,
            date_part_name: str | None = None,
        ) -> Ref:
            grain = str(time_granularity_name).lower() if time_granularity_name else None
            part = str(date_part_name).lower() if date_part_name else None
            r = self.names.resolve(
                str(name), _path(entity_path), grain=grain, date_part=part, near=self.near
            )
            return make(r, desc=bool(descending))

        def entity(name: str, entity_path: Sequence[str] = ()) -> Ref:
            r = self.names.resolve(str(name), _path(entity_path), kind="entity", near=self.near)
            return make(r)

        def metric(name: str, group_by: Sequence[str] = ()) -> Ref:
            return make(None, metric=str(name), metric_group_by=_path(group_by))

        return {
            "Dimension": dimension,
            "TimeDimension": time_dimension,
            "Entity": entity,
            "Metric": metric,
        }

    def render(self, template: str, bare_names: bool = False) -> Rendered:
        """A where-filter template as SQL over `dataset.field` names. With `bare_names`, an
        unqualified dbt name written as plain SQL (`metric_time__day`, `booking__is_instant`)
        is resolved too, as MetricFlow resolves it in a query's where."""
        out = Rendered("")
        sink: list[Ref] = []
        try:
            tpl = self._env.from_string(template)
            out.sql = tpl.render(**self._globals(sink, out)).strip()
        except DbtNameError as err:
            out.problem("unknown_name", err.message)
        except TemplateError as err:
            out.problem("unknown_name", f"the filter is not a dbt Jinja template: {err}")
        if bare_names and out.sql and not out.problems:
            out.sql = self._bare(out.sql, out)
        if out.sql and not out.problems:
            out.sql = explicit_booleans(out.sql)
        return out

    def _bare(self, sql: str, out: Rendered) -> str:
        try:
            tree = sqlglot.parse_one(sql, read="duckdb")
        except sqlglot.errors.ParseError:
            return sql
        changed = False

        def sub(n: exp.Expression) -> exp.Expression:
            nonlocal changed
            if not isinstance(n, exp.Column) or n.table:
                return n
            if n.name != "metric_time" and DUNDER not in n.name:
                return n
            if n.name in out.metric_dimensions:  # a Metric(...) call, already rendered
                return n
            try:
                r = self.names.resolve(n.name, near=self.near)
            except DbtNameError as err:
                out.problem("unknown_name", err.message)
                return n
            changed = True
            return sqlglot.parse_one(self._sql(Ref(r), out), read="duckdb")

        new = tree.transform(sub)
        return new.sql(dialect="duckdb") if changed else sql

    def item(self, text: str) -> Ref:
        """A saved query's group-by / order-by item (`TimeDimension('metric_time', 'day')`,
        `Metric('bookings').descending(True)`) as a Ref."""
        sink: list[Ref] = []
        value = self._env.compile_expression(text, undefined_to_none=False)(
            **self._globals(sink, None)
        )
        if not isinstance(value, Ref):
            raise DbtNameError("unknown_dbt_name", f"`{text}` is not a dbt group-by item")
        return value

    # -- SQL ---------------------------------------------------------------------------------
    def _metric(self, ref: Ref, out: Rendered | None) -> str:
        """`Metric('bookings', group_by=['listing'])`: the metric's value per entity, dosi's
        metric dimension (docs/metric-dimensions.md) keyed by the entity's field on the model
        it identifies (the query's own model when it is one of them), named as MetricFlow
        names the column (`listing__bookings`)."""
        assert ref.metric is not None
        why = None
        keys: list[str] = []
        if len(ref.metric_group_by) != 1:
            why = "a metric filter grouped by one entity"
        else:
            path = ref.metric_group_by[0].split(DUNDER)
            entity = path[-1]
            hosts = self.names.entity_models(entity)
            hosts.sort(key=lambda info: _host_rank(info, entity, self.near))
            el = hosts[0].elements.get(entity) if hosts else None
            if el is None or el.kind != "entity":
                why = f"a metric filter grouped by `{ref.metric_group_by[0]}`, no entity's key"
            else:
                keys.append(el.qualified)
        if why is not None or out is None:
            if out is not None:
                out.problem("metric_filter", f"`Metric('{ref.metric}')`: {why}")
            return "NULL"
        name = f"{ref.metric_group_by[0]}{DUNDER}{ref.metric}"
        out.metric_dimensions[name] = {"metric": ref.metric, "by": keys}
        return name

    def _sql(self, ref: Ref, out: Rendered | None) -> str:
        if ref.metric is not None:
            return self._metric(ref, out)
        r = ref.resolved
        assert r is not None
        if r.is_metric_time:
            sql = self.metric_time(r.grain) if self.metric_time is not None else None
            if out is not None:
                out.metric_time = True
            if sql is None:
                if out is not None:
                    out.problem(
                        "metric_time_in_where", "`metric_time` has no single column in this context"
                    )
                return "NULL"
            custom = r.grain is not None and r.grain in self._calendar()
            if r.grain is not None and r.grain not in SHARED_GRAINS and not custom and out:
                _bad_grain(out, r.grain, "metric_time")
            return _part(sql, r.date_part)
        assert r.element is not None
        if out is not None:
            out.datasets.add(r.element.model)
        return field_sql(r.element, r.grain, r.date_part, out, self._calendar())

    def _calendar(self) -> Mapping[str, str]:
        """The custom granularities of the imported calendar table (MetricFlow -> dosi)."""
        cal = self.names.calendar
        return cal.grains if cal is not None else {}


def _host_rank(info: ModelInfo, entity: str, near: Sequence[str]) -> tuple[bool, bool, int]:
    """Which model a metric filter's entity value lives on: the query's own model, else one
    the entity is the primary key of, else the one with the fewest time dimensions (a
    snapshot table holds a row per key and time, a dimension table one per key)."""
    el = info.elements.get(entity)
    times = sum(e.kind == "time_dimension" for e in info.elements.values())
    return (info.name not in near, el is None or el.entity_type != "primary", times)


def field_sql(
    el: Element,
    grain: str | None,
    date_part: str | None,
    out: Rendered | None = None,
    calendar: Mapping[str, str] | None = None,
) -> str:
    """The SQL of `dataset.field` at a grain / date part; a custom granularity of the imported
    calendar table (`calendar`: MetricFlow grain -> dosi grain) is dosi's grained filter
    spelling `dataset.field:grain`, which compares the day's calendar-table bucket."""
    sql = el.qualified
    if grain and grain != el.grain:
        if grain in SHARED_GRAINS:
            sql = f"DATE_TRUNC('{grain}', {sql})"
        elif calendar is not None and grain in calendar:
            sql = f"{sql}:{calendar[grain]}"
        elif out is not None:
            _bad_grain(out, grain, el.name)
    return _part(sql, date_part)


def _bad_grain(out: Rendered, grain: str, name: str) -> None:
    if grain in SUB_SECOND_GRAINS:
        out.problem("sub_second_grain", f"grain `{grain}` of `{name}`: dosi's finest is second")
        return
    out.problem(
        "custom_grain_filter",
        f"grain `{grain}` of `{name}` in a filter: a custom granularity is a grouping "
        "(a calendar-table grain), not a column a where filter can read",
    )


def _part(sql: str, date_part: str | None) -> str:
    if not date_part:
        return sql
    return f"EXTRACT({_EXTRACT.get(date_part, date_part)} FROM {sql})"


def _path(value: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value)


def explicit_booleans(sql: str) -> str:
    """A column standing as a condition (the whole filter, an AND / OR operand, under NOT or
    parentheses: dbt's `{{ Dimension('listing__is_lux') }}`) written as `col = TRUE`. dbt
    hands the SQL to the warehouse, which knows the column is boolean; the imported model
    declares no datatype, so dosi would refuse the bare field. Same truth table, NULL too."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return sql
    changed = False

    def cond(n: exp.Expression) -> exp.Expression:
        nonlocal changed
        if isinstance(n, exp.Column):
            changed = True
            return exp.EQ(this=n, expression=exp.true())
        if isinstance(n, (exp.And, exp.Or)):
            n.set("this", cond(n.this))
            n.set("expression", cond(n.expression))
        elif isinstance(n, (exp.Not, exp.Paren)):
            n.set("this", cond(n.this))
        return n

    new = cond(tree)
    return new.sql(dialect="duckdb") if changed else sql
