"""dbt / MetricFlow queries as dosi queries.

A MetricFlow query names metrics, group-bys in dbt spelling (`booking__is_instant`,
`metric_time__month`, `TimeDimension('metric_time', 'day')`), Jinja `where` filters, order-bys
(`-booking_value`), a limit and a time constraint. `QueryTranslator` turns one into the dosi
query that asks the same question (`group_by: ["bookings_source.is_instant",
"metric_time:month"]`, `time_range` ...), and lists what it cannot translate. Saved queries are
translated with it at import; the MetricFlow test bed translates MetricFlow's own test queries
with it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt_semantic_interfaces.implementations.saved_query import PydanticSavedQuery
from dbt_semantic_interfaces.type_enums.entity_type import EntityType

from dosi.importers.dbt.datasets import scd_validity
from dosi.importers.dbt.dimension_only import dimension_only_needs
from dosi.importers.dbt.filters import FilterRenderer, MetricTimeSql, Ref, field_sql
from dosi.importers.dbt.names import DbtNameError, DbtNames, Element, Resolved, item_spelling
from dosi.importers.dbt.spine import day_spine, spine_densify
from dosi.importers.dbt.time_grains import (
    SHARED_GRAINS,
    SUB_SECOND_GRAINS,
    bucket_end,
    bucket_start,
    default_grain,
    dosi_date_part,
)
from dosi.importers.dbt.time_where import where_as_time_range

#: what a translation may need that dosi (or this translation) does not have; the test bed's
#: `needs:` names come from here
NEEDS = {
    "conversion_metric": "conversion metrics",
    "semi_additive": "semi-additive measures (non_additive_dimension)",
    "percentile": "percentile aggregates other than the median",
    "offset_to_grain": "offset_to_grain (a value at the start of a period)",
    "custom_granularity": "custom granularities (fiscal, alien_day)",
    "sub_day_grain": "sub-day grains (hour, minute, second, ...)",
    "sub_second_grain": "grains finer than a second (millisecond, microsecond, nanosecond)",
    "sub_day_reset": "a cumulative metric reset every hour or finer (grain_to_date: hour)",
    "custom_grain_filter": "a custom granularity inside a where filter (TimeDimension(..., "
    "'alien_day'))",
    "custom_grain_offset": "an offset or window measured in a custom granularity "
    "(offset_window: 1 alien_day)",
    "window_by_date_part": "an offset metric grouped by a date part alone (MetricFlow shifts "
    "by day, then groups by the part)",
    "date_part": "date parts in group_by (EXTRACT year, dow, ...)",
    "dimension_only_query": "queries without metrics (distinct dimension values)",
    "metric_filter": "metric-valued filters (Metric(...) in a filter)",
    "metric_filter_in_metric": "a metric whose own filter reads another metric's value per "
    "entity (Metric(...) in a metric's filter)",
    "metric_time_in_where": "metric_time in a where filter over metrics on different time axes",
    "min_max_only": "min_max_only queries",
    "no_group_by": "apply_group_by: false",
    "scd_join": "joins to slowly changing dimensions (validity windows)",
    "boolean_filter": "a boolean column alone as a where predicate",
    "filter_join_path": "a metric filter on a model its measure does not reach",
    "entity_join_paths": "choosing a join path by entity (role-playing paths)",
    "period_agg": "cumulative values at a grain coarser than the reset (period_agg)",
    "offset_finer_than_grain": "an offset finer than the queried grain",
    "mixed_grain_metric_time": "metric_time over metrics of different native grains",
    "window_without_time_axis": "a cumulative metric queried without its time axis",
    "time_spine": "a row for every time-spine bucket (join_to_timespine, cumulative and offset "
    "metrics densified over the spine)",
    "saved_query": "running a saved query by name",
    "cumulative_distinct": "cumulative count-distinct (distinct over the window's rows)",
    "inline_agg_metric": "simple metrics with an inline agg (no measure)",
    "unknown_name": "a name the translation does not resolve",
    "metric_not_imported": "a metric the import could not carry",
}


@dataclass
class Translated:
    """A dosi query, the MetricFlow column name of each of its result columns' sources, and
    what kept it from translating (`problems`, with a `needs` code each)."""

    query: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)  # dosi group-by spelling -> MF name
    problems: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)

    def need(self, code: str, why: str) -> None:
        if code not in self.needs:
            self.needs.append(code)
        self.problems.append(why)


class QueryTranslator:
    """Translates queries against one imported project."""

    def __init__(self, names: DbtNames, imported: Iterable[str] | None = None) -> None:
        self.names = names
        self.imported = set(imported) if imported is not None else None
        self.metric_times: dict[str, list[Element]] = {}
        self.default_grains: dict[str, str] = {}
        for m in names.manifest.metrics:
            els: list[Element] = []
            ctp = m.type_params.conversion_type_params
            # a conversion metric's metric_time is its base events' time (D-CONVERSION)
            inputs = [ctp.base_measure] if ctp is not None else m.type_params.input_measures
            for im in inputs:
                try:
                    el = names.agg_time(names.measure(im.name))
                except DbtNameError:
                    continue
                if el is not None and el not in els:
                    els.append(el)
            self.metric_times[m.name] = els
            if m.time_granularity:
                self.default_grains[m.name] = str(m.time_granularity).lower()

    def saved_query(self, sq: PydanticSavedQuery) -> Translated:
        qp = sq.query_params
        where = [w.where_sql_template for w in qp.where.where_filters] if qp.where else []
        return self.translate(
            metrics=qp.metrics,
            group_by_items=qp.group_by,
            where=where,
            order_by_items=qp.order_by,
            limit=qp.limit,
        )

    def translate(
        self,
        metrics: Sequence[str],
        group_by: Sequence[str] = (),
        group_by_items: Sequence[str] = (),
        group_by_objs: Sequence[Mapping[str, Any]] = (),
        where: Sequence[str] = (),
        order_by: Sequence[str] = (),
        order_by_items: Sequence[str] = (),
        limit: int | None = None,
        time_constraint: tuple[str, str] | None = None,
        min_max_only: bool = False,
    ) -> Translated:
        """`min_max_only` (a query without metrics): dosi's `min_max_only`, one row with each
        grouped column's `__min` and `__max`, as MetricFlow names them."""
        t = Translated()
        if not metrics:
            spine = day_spine(self.names.manifest) is not None
            dimension_only_needs(t, group_by, group_by_items, group_by_objs, spine)
        if self.imported is not None:
            for m in metrics:
                if m not in self.imported:
                    t.need("metric_not_imported", f"metric `{m}` is not in the imported model")
        near = self._datasets(metrics)
        times = self._times(metrics)
        r = FilterRenderer(self.names, near, self._metric_time_sql(times))
        items: list[tuple[Resolved, str]] = []
        for name in group_by:
            res = self._resolve(t, name, near)
            if res is not None:
                items.append((res, name))
        for text in group_by_items:
            ref = self._item(t, r, text)
            if ref is not None and ref.resolved is not None:
                items.append((ref.resolved, _mf_name(ref.resolved, text)))
        for obj in group_by_objs:
            res = self._resolve(
                t,
                str(obj.get("name")),
                near,
                grain=obj.get("grain"),
                date_part=obj.get("date_part"),
            )
            if res is not None:
                items.append((res, _obj_name(obj)))
        if not metrics:  # a metric filter's entity lives on the grouped models
            r.near = list(dict.fromkeys(res.element.model for res, _ in items if res.element))
        gb: list[str | dict[str, Any]] = []
        native = default_grain(
            [
                (self.default_grains.get(m), [el.grain for el in self.metric_times.get(m, ())])
                for m in metrics
            ]
        )
        for res, mf in items:
            spelling = self._spelling(t, res, native)
            if spelling is None:
                continue
            via = self._via(res, near)
            if via is None:
                gb.append(spelling)
            else:  # MetricFlow's entity path as dosi's join path (docs/query.md)
                field_, _, grain_ = spelling.partition(":")
                obj: dict[str, Any] = {"field": field_, "via": via}
                if grain_:
                    obj["grain"] = grain_
                gb.append(obj)
            col = mf
            if (res.is_metric_time and res.grain is None and res.date_part is None) or (
                res.element is not None
                and res.element.kind == "time_dimension"
                and res.grain is None
                and res.date_part is None
            ):
                col = f"{mf}__{native if res.is_metric_time else res.element.grain}"  # type: ignore[union-attr]
            t.columns[spelling] = col
        q: dict[str, Any] = {"metrics": list(metrics)}
        if gb:
            q["group_by"] = gb
        preds = []
        dims: dict[str, Any] = {}
        for w in where:
            out = r.render(w, bare_names=True)
            for code, p in zip(out.codes, out.problems, strict=True):
                t.need(code, p)
            preds.append(out.sql)
            dims.update(out.metric_dimensions)
        if dims:  # MetricFlow's Metric(...) filters (dosi.query.metric_dimensions)
            q["metric_dimensions"] = dims
        mt = self._metric_time_sql(times)
        axis_sql = [x for x in (mt(None), mt("day")) if x]
        bounds = None
        if len(preds) == 1 and time_constraint is None and not t.needs:
            # a filter that only bounds metric_time applies after MetricFlow's spine joins:
            # dosi's time_range (dosi.importers.dbt.time_where)
            bounds = where_as_time_range(preds[0], axis_sql)
        if bounds is not None:
            q["time_range"] = bounds
        elif preds:
            q["where_sql"] = preds[0] if len(preds) == 1 else " AND ".join(f"({p})" for p in preds)
        ob = []
        for text in order_by:
            desc = text.startswith("-")
            key = text.lstrip("-")
            ob.append({"key": self._order_key(t, key, metrics, near, native), "desc": desc})
        for text in order_by_items:
            ref = self._item(t, r, text)
            if ref is None:
                continue
            if ref.metric is not None:
                ob.append({"key": ref.metric, "desc": ref.desc})
            elif ref.resolved is not None:
                spelling = self._spelling(t, ref.resolved, native)
                if spelling is not None:
                    ob.append({"key": spelling, "desc": ref.desc})
        if ob:
            q["order_by"] = ob
        if limit is not None:
            q["limit"] = int(limit)
        if min_max_only:
            q["min_max_only"] = True
        if time_constraint is not None:
            grain = next(
                (res.grain for res, _ in items if res.is_metric_time and res.grain), native
            )
            q["time_range"] = _time_range(t, time_constraint, grain)
            if any(":" in g and not g.startswith("metric_time:") for g in map(item_spelling, gb)):
                # MetricFlow constrains metric_time (each metric's own axis), never the
                # other time field the query groups by
                q["time_range"]["dimension"] = "metric_time"
        axes = {el.qualified for m in metrics for el in self.metric_times.get(m, ())}
        mode = spine_densify(self.names.manifest, metrics, q, axes)  # MetricFlow's spine joins
        if mode is not None:
            q["densify"] = mode
        t.query = q
        return t

    # -- helpers -------------------------------------------------------------------------------
    def _datasets(self, metrics: Sequence[str]) -> list[str]:
        out: list[str] = []
        for m in metrics:
            for el in self.metric_times.get(m, ()):
                if el.model not in out:
                    out.append(el.model)
        return out

    def _times(self, metrics: Sequence[str]) -> list[Element]:
        out: list[Element] = []
        for m in metrics:
            for el in self.metric_times.get(m, ()):
                if el not in out:
                    out.append(el)
        return out

    def _metric_time_sql(self, times: list[Element]) -> MetricTimeSql:
        def render(grain: str | None) -> str | None:
            if not times:
                return None
            if len(times) > 1:  # dosi's metric_time in a filter: each metric's own axis
                return "metric_time" + (f"__{grain}" if grain else "")
            cal = self.names.calendar
            return field_sql(times[0], grain, None, calendar=cal.grains if cal else None)

        return render

    def _resolve(self, t: Translated, name: str, near: Sequence[str], **kw: Any) -> Resolved | None:
        try:
            return self.names.resolve(name, near=near, **{k: v for k, v in kw.items() if v})
        except DbtNameError as err:
            t.need("unknown_name", err.message)
            return None

    def _item(self, t: Translated, r: FilterRenderer, text: str) -> Ref | None:
        try:
            return r.item(text)
        except DbtNameError as err:
            t.need("unknown_name", err.message)
        except Exception as err:  # Jinja's own errors: not a dbt item
            t.need("unknown_name", f"`{text}` is not a dbt group-by item: {err}")
        return None

    def _spelling(self, t: Translated, res: Resolved, native: str) -> str | None:
        grain = res.grain
        el = res.element
        if el is not None and (
            self._scd(el.model) or any(self._scd_entity(e) for e in res.entity_path)
        ):
            t.need("scd_join", f"`{el.model}` is a slowly changing dimension (validity window)")
            return None
        base = "metric_time" if el is None else el.qualified
        if res.date_part:
            part = dosi_date_part(res.date_part)
            if part is None:
                t.need("date_part", f"group by the date part `{res.date_part}`")
                return None
            return f"{base}:{part}"
        if res.is_metric_time and grain is None:
            grain = native
        if el is not None and el.kind == "time_dimension":
            grain = grain or el.grain
        if grain is None:
            return base
        dosi_grain = self._grain(t, grain)
        return None if dosi_grain is None else f"{base}:{dosi_grain}"

    def _via(self, res: Resolved, near: Sequence[str]) -> list[str] | None:
        """The join path an entity path spells (`listing__user__home_state`: through the
        model the listing entity identifies): the datasets of its entities but the last.
        None when the name has no entity path, lands on a queried dataset, the query has no
        metric (a dimension-only query joins no fact), starts at an entity no queried model has,
        or an entity identifies several models
        (the planner then finds the one path, or reports the ambiguity)."""
        el = res.element
        if el is None or not near or not res.entity_path or el.model in near:
            return None
        path = res.entity_path
        if not any(e.name == path[0] for m in near for e in self.names.models[m].sm.entities):
            return None  # MetricFlow finds the hop itself: the planner's unique path
        if not any(_entity_routes(self.names, m, el.model) > 1 for m in near):
            return None  # one route: the plain spelling says it
        via: list[str] = []
        for i, entity in enumerate(path[:-1]):
            # the model the entity lands on that carries the next entity (joins onward)
            models = [
                m
                for m in self.names.entity_models(entity)
                if any(e.name == path[i + 1] for e in m.sm.entities)
            ]
            if len(models) != 1:
                return None
            via.append(models[0].name)
        return via

    def _grain(self, t: Translated, grain: str) -> str | None:
        """dosi's grain for a MetricFlow grain: shared, or a custom granularity of the imported
        time spine (a calendar-table grain); None (with the need) otherwise."""
        if grain in SHARED_GRAINS:
            return grain
        cal = self.names.calendar
        if cal is not None and grain in cal.grains:
            return cal.grains[grain]
        if grain in SUB_SECOND_GRAINS:
            t.need("sub_second_grain", f"group by the grain `{grain}`")
        else:
            t.need("custom_granularity", f"group by the grain `{grain}`")
        return None

    def _scd(self, model: str) -> bool:
        """A slowly changing dimension without both validity bounds (not joined: D-VALIDITY
        needs them)."""
        info = self.names.models[model]
        natural = any(e.type is EntityType.NATURAL for e in info.sm.entities)
        return natural and scd_validity(info) is None

    def _scd_entity(self, entity: str) -> bool:
        """A join on `entity` lands on such a slowly changing dimension (its natural key)."""
        return any(
            e.name == entity and e.type is EntityType.NATURAL and scd_validity(info) is None
            for info in self.names.models.values()
            for e in info.sm.entities
        )

    def _order_key(
        self, t: Translated, key: str, metrics: Sequence[str], near: Sequence[str], native: str
    ) -> str:
        if key in metrics:
            return key
        res = self._resolve(t, key, near)
        if res is None:
            return key
        return self._spelling(t, res, native) or key


def _entity_routes(names: DbtNames, src: str, dst: str, limit: int = 2) -> int:
    """How many entity join routes lead from model `src` to `dst` (counted up to `limit`): a
    hop lands on a model its entity identifies."""
    found = 0
    stack: list[tuple[str, frozenset[str]]] = [(src, frozenset({src}))]
    while stack and found < limit:
        cur, seen = stack.pop()
        for e in names.models[cur].sm.entities:
            for nxt in names.entity_models(e.name):
                if nxt.name in seen:
                    continue
                if nxt.name == dst:
                    found += 1
                else:
                    stack.append((nxt.name, seen | {nxt.name}))
    return found


def _mf_name(res: Resolved, text: str) -> str:
    suffix = f"__{res.grain}" if res.grain else ""
    if res.date_part:
        suffix = f"__extract_{res.date_part}"
    if res.is_metric_time:
        return "metric_time" + suffix
    el = res.element
    assert el is not None
    path = "__".join(res.entity_path)
    base = f"{path}__{el.name}" if path else el.name
    return base + suffix


def _obj_name(obj: Mapping[str, Any]) -> str:
    name = str(obj.get("name"))
    if obj.get("date_part"):
        return f"{name}__extract_{obj['date_part']}"
    if obj.get("grain"):
        return f"{name}__{obj['grain']}"
    return name


def _time_range(t: Translated, tc: tuple[str, str], grain: str) -> dict[str, str]:
    """MetricFlow's inclusive [start, end] constraint, widened to whole buckets of the query
    grain (as MetricFlow does), as dosi's [start, end) range: dates at day grain and coarser,
    timestamps at the sub-day grains."""
    if grain not in SHARED_GRAINS:
        t.need("custom_granularity", f"a time constraint at the {grain} grain")
        grain = "day"
    start = bucket_start(_instant(tc[0]), grain)
    end = bucket_end(_instant(tc[1]), grain)
    if grain in ("second", "minute", "hour"):
        return {"start": start.isoformat(), "end": end.isoformat()}
    return {"start": start.date().isoformat(), "end": end.date().isoformat()}


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(str(text).replace("Z", ""))
