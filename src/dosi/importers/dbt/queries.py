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

from dosi.importers.dbt.filters import FilterRenderer, MetricTimeSql, Ref, field_sql
from dosi.importers.dbt.names import ALL_GRAINS, GRAINS, DbtNameError, DbtNames, Element, Resolved
from dosi.importers.dbt.spine import joins_time_spine

#: what a translation may need that dosi (or this translation) does not have; the test bed's
#: `needs:` names come from here
NEEDS = {
    "conversion_metric": "conversion metrics",
    "semi_additive": "semi-additive measures (non_additive_dimension)",
    "percentile": "percentile aggregates other than the median",
    "offset_to_grain": "offset_to_grain (a value at the start of a period)",
    "custom_granularity": "custom granularities (fiscal, alien_day)",
    "sub_day_grain": "sub-day grains (hour, minute, second, ...)",
    "date_part": "date parts in group_by (EXTRACT year, dow, ...)",
    "dimension_only_query": "queries without metrics (distinct dimension values)",
    "metric_filter": "metric-valued filters (Metric(...) in a filter)",
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
            for im in m.type_params.input_measures:
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
    ) -> Translated:
        t = Translated()
        if not metrics:
            t.need(
                "dimension_only_query",
                "a query without metrics lists distinct dimension "
                "values; dosi queries aggregate metrics",
            )
            return t
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
        gb: list[str] = []
        native = _finest(
            times, [self.default_grains[m] for m in metrics if m in self.default_grains]
        )
        for res, mf in items:
            spelling = self._spelling(t, res, native)
            if spelling is None:
                continue
            gb.append(spelling)
            col = mf
            if (res.is_metric_time and res.grain is None) or (
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
        for w in where:
            out = r.render(w, bare_names=True)
            for code, p in zip(out.codes, out.problems, strict=True):
                t.need(code, p)
            preds.append(out.sql)
        if preds:
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
        if time_constraint is not None:
            grain = next(
                (res.grain for res, _ in items if res.is_metric_time and res.grain), native
            )
            q["time_range"] = _time_range(t, time_constraint, grain)
        axes = {el.qualified for m in metrics for el in self.metric_times.get(m, ())}
        if joins_time_spine(self.names.manifest, metrics, q, axes):  # MetricFlow's spine join
            q["densify"] = "time"
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
            if len(times) != 1:
                return None
            return field_sql(times[0], grain, None)

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
        if res.date_part:
            t.need("date_part", f"group by the date part `{res.date_part}`")
            return None
        if res.is_metric_time and grain is None:
            grain = native
        if grain is not None and grain not in GRAINS:
            code = "sub_day_grain" if grain in ALL_GRAINS else "custom_granularity"
            t.need(code, f"group by the grain `{grain}`")
            return None
        if res.is_metric_time:
            return f"metric_time:{grain}"
        el = res.element
        assert el is not None
        if self._scd(el.model) or any(self._scd_entity(e) for e in res.entity_path):
            t.need("scd_join", f"`{el.model}` is a slowly changing dimension (validity window)")
            return None
        if el.kind == "time_dimension":
            g = grain or el.grain
            if g not in GRAINS:
                t.need("sub_day_grain", f"`{el.name}` is stored by the {g}")
                return None
            return f"{el.qualified}:{g}"
        return el.qualified

    def _scd(self, model: str) -> bool:
        sm = self.names.models[model].sm
        return any(e.type is EntityType.NATURAL for e in sm.entities)

    def _scd_entity(self, entity: str) -> bool:
        """A join on `entity` lands on a slowly changing dimension (its natural key)."""
        return any(
            e.name == entity and e.type is EntityType.NATURAL
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


def _finest(times: Sequence[Element], defaults: Sequence[str] = ()) -> str:
    """metric_time's grain when the query names none: the metrics' declared default grain,
    else the finest grain of their time axes (as MetricFlow resolves it)."""
    grains = list(defaults) or [el.grain for el in times if el.grain]
    known = [g for g in grains if g in ALL_GRAINS]
    return min(known, key=ALL_GRAINS.index) if known else "day"


def _mf_name(res: Resolved, text: str) -> str:
    if res.is_metric_time:
        return "metric_time" + (f"__{res.grain}" if res.grain else "")
    el = res.element
    assert el is not None
    path = "__".join(res.entity_path)
    base = f"{path}__{el.name}" if path else el.name
    return base + (f"__{res.grain}" if res.grain else "")


def _obj_name(obj: Mapping[str, Any]) -> str:
    name = str(obj.get("name"))
    if obj.get("date_part"):
        return f"{name}__extract_{obj['date_part']}"
    if obj.get("grain"):
        return f"{name}__{obj['grain']}"
    return name


def _time_range(t: Translated, tc: tuple[str, str], grain: str) -> dict[str, str]:
    """MetricFlow's inclusive [start, end] constraint, widened to whole buckets of the query
    grain (as MetricFlow does), as dosi's [start, end) range."""
    if grain not in GRAINS:
        t.need("sub_day_grain", f"a time constraint at the {grain} grain")
        grain = "day"
    start = _day(t, tc[0])
    end = _day(t, tc[1])
    start = _bucket_start(start, grain)
    end = _bucket_end(end, grain) + dt.timedelta(days=1)
    return {"start": start.isoformat(), "end": end.isoformat()}


def _day(t: Translated, text: str) -> dt.date:
    value = dt.datetime.fromisoformat(str(text).replace("Z", ""))
    if value.time() != dt.time(0):
        t.need("sub_day_grain", f"time constraint `{text}` is finer than a day")
    return value.date()


def _bucket_start(d: dt.date, grain: str) -> dt.date:
    if grain == "week":
        return d - dt.timedelta(days=d.weekday())
    if grain == "month":
        return d.replace(day=1)
    if grain == "quarter":
        return d.replace(month=(d.month - 1) // 3 * 3 + 1, day=1)
    if grain == "year":
        return d.replace(month=1, day=1)
    return d


def _bucket_end(d: dt.date, grain: str) -> dt.date:
    if grain == "day":
        return d
    if grain == "week":
        return _bucket_start(d, grain) + dt.timedelta(days=6)
    months = {"month": 1, "quarter": 3, "year": 12}[grain]
    first = _bucket_start(d, grain)
    y, m = divmod(first.month - 1 + months, 12)
    return dt.date(first.year + y, m + 1, 1) - dt.timedelta(days=1)
