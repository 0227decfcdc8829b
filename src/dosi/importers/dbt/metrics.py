"""dbt metrics as Ossie metrics with DATUS payloads.

| dbt | Ossie / DATUS |
|---|---|
| simple over a measure | the aggregate over the measure's field (`SUM(bookings_source.booking_value)`), D-TIME when the measure's agg time dimension is not its model's, D-FILL for `fill_nulls_with` |
| simple with a filter | D-DERIVE `filter` over the measure's plain metric when the filter reads only the measure's own model; else the aggregate of a CASE (dosi joins the model it reads) |
| ratio | D-DERIVE `compose` `numerator / denominator` (dosi divides as a non-integer, NULL on 0, as MetricFlow) |
| derived | D-DERIVE `compose` over the inputs; an input with a filter or an `offset_window` becomes a helper metric (`<metric>__<alias>`) |
| `offset_window` | D-WINDOW offset, `calculation: value` |
| `offset_to_grain` | D-WINDOW offset `{"period_start": grain}` (1.15), `calculation: value` |
| cumulative | D-WINDOW `cumulative` (all time, or reset at `grain_to_date`), `rolling` for a `window` |

The expression written for a derived metric is the expansion dosi checks it against
(D-DERIVE's flatten-tier gate), so basic mode computes the same number. A `percentile` measure
is a percentile aggregate (`PercentileAgg`). What has no DATUS form yet (conversion metrics,
semi-additive measures, metric-valued filters) is skipped with a structured
warning naming the metric and the reason, and so is every metric that depends on a skipped one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from dbt_semantic_interfaces.implementations.elements.measure import (
    PydanticNonAdditiveDimensionParameters,
)
from dbt_semantic_interfaces.implementations.metric import PydanticMetric, PydanticMetricInput
from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest
from dbt_semantic_interfaces.type_enums.aggregation_type import AggregationType
from dbt_semantic_interfaces.type_enums.metric_type import MetricType
from dbt_semantic_interfaces.type_enums.period_agg import PeriodAggregation
from sqlglot import exp

from dosi.ext.window.offset import PERIOD_STARTS
from dosi.importers.common import Notes, datus_entry, metric_obj
from dosi.importers.dbt.filters import FilterRenderer, field_sql
from dosi.importers.dbt.names import GRAINS, DbtNames, Element
from dosi.importers.dbt.spine import period_value
from dosi.importers.dbt.time_grains import SHARED_GRAINS

DBT_VENDOR = "DBT"
_SQL = "duckdb"  # sqlglot dialect used to read dbt expressions (warehouse SQL, liberal)


class Skip(Exception):
    """A metric that cannot be carried: `code` and the reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass
class Out:
    """One Ossie metric being written."""

    name: str
    sql: str  # the Ossie expression (for derived metrics: the expansion)
    payload: dict[str, Any] = field(default_factory=dict)
    plain: bool = False  # a plain aggregate (a filter base, a window's own expression)
    stage: bool = False  # a window, or a compose over one: no flat expression
    window: bool = False
    description: str | None = None
    label: str | None = None
    dbt: dict[str, Any] = field(default_factory=dict)
    helper: bool = False


@dataclass(frozen=True)
class Agg:
    """An aggregate over a measure field."""

    func: str  # SQL aggregate name
    distinct: bool
    col: str  # qualified field
    measure: Element
    semi: dict[str, Any] | None = None  # D-SEMI payload of a non_additive_dimension measure

    def sql(self, arg: str | None = None) -> str:
        inner = arg if arg is not None else self.col
        return f"{self.func}({'DISTINCT ' if self.distinct else ''}{inner})"


@dataclass(frozen=True)
class PercentileAgg(Agg):
    """A dbt `percentile` measure (issue 21 item 5): `percentile: p` is
    `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)`, `use_discrete_percentile` PERCENTILE_DISC,
    `use_approximate_percentile` (continuous or discrete) `APPROX_QUANTILE(x, p)`."""

    fraction: float = 0.5
    discrete: bool = False
    approximate: bool = False

    def sql(self, arg: str | None = None) -> str:
        inner = arg if arg is not None else self.col
        if self.approximate:
            return f"APPROX_QUANTILE({inner}, {self.fraction!r})"
        name = "PERCENTILE_DISC" if self.discrete else "PERCENTILE_CONT"
        return f"{name}({self.fraction!r}) WITHIN GROUP (ORDER BY {inner})"


class MetricConverter:
    """Converts every metric of a manifest; `outputs` in emission order."""

    def __init__(
        self,
        manifest: PydanticSemanticManifest,
        names: DbtNames,
        notes: Notes,
        edges: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.names = names
        self.edges: dict[str, set[str]] = {}
        for a, b in edges:
            self.edges.setdefault(a, set()).add(b)
        self.notes = notes
        self.dbt = {m.name: m for m in manifest.metrics}
        self.outputs: dict[str, Out] = {}
        self.done: dict[str, Out | None] = {}
        self.signatures: dict[tuple[Any, ...], str] = {}
        self.measure_metrics: dict[str, str] = {}
        self._stack: list[str] = []

    def run(self) -> list[dict[str, Any]]:
        for name in self.dbt:
            self.metric(name)
        return [self._ossie(o) for o in self.outputs.values()]

    # -- one dbt metric ------------------------------------------------------------------------
    def metric(self, name: str) -> Out | None:
        """The Ossie metric a dbt metric becomes under its own name (None: skipped)."""
        if name in self.done:
            return self.done[name]
        if name in self._stack:
            raise Skip("metric_cycle", f"metric `{name}` reaches itself through its inputs")
        m = self.dbt.get(name)
        if m is None:
            raise Skip("unknown_metric", f"no metric `{name}` in the project")
        self._stack.append(name)
        try:
            out: Out | None = self.build(m, (), name)
        except Skip as s:
            self.notes.warn(
                s.code, f"metric `{name}` is not imported: {s.reason}", path=f"metric:{name}"
            )
            out = None
        finally:
            self._stack.pop()
        self.done[name] = out
        if out is not None:
            out.description = out.description or m.description
            out.label = m.label
            out.dbt = _dbt_block(m)
            self._emit(out)
            if m.time_granularity:
                self.notes.warn(
                    "default_grain_not_carried",
                    f"metric `{name}` declares the default grain `{m.time_granularity}`; "
                    "dosi queries name their grain (metric_time:<grain>)",
                    path=f"metric:{name}",
                )
        return out

    def build(self, m: PydanticMetric, extra: Sequence[str], name: str) -> Out:
        filters = list(dict.fromkeys([*_templates(m.filter), *extra]))  # AND is idempotent
        if m.type is MetricType.SIMPLE:
            return self.simple(m, filters, name)
        if m.type is MetricType.RATIO:
            tp = m.type_params
            assert tp.numerator is not None and tp.denominator is not None
            num = self.input(tp.numerator, name, filters)
            den = self.input(tp.denominator, name, filters)
            return self.compose(name, f"{num.name} / {den.name}", {num.name: num, den.name: den})
        if m.type is MetricType.DERIVED:
            return self.derived(m, filters, name)
        if m.type is MetricType.CUMULATIVE:
            return self.cumulative(m, filters, name)
        if m.type is MetricType.CONVERSION:
            return self.conversion(m, filters, name)
        raise Skip("unsupported_metric_type", f"metric type `{m.type.value}` is not known")

    # -- simple --------------------------------------------------------------------------------
    def agg_of(self, m: PydanticMetric) -> Agg:
        tp = m.type_params
        if tp.measure is None:
            raise Skip(
                "metric_without_measure",
                "a simple metric without a measure (dbt's newer inline `agg` form) is not read yet",
            )
        return self.measure_agg(tp.measure.name)

    def measure_agg(self, measure_name: str) -> Agg:
        """The aggregate a measure stands for."""
        el = self.names.measure(measure_name)
        sm = self.names.models[el.model].sm
        measure = next(x for x in sm.measures if x.name == el.name)
        semi = semi_additive_payload(self.names, el, measure.non_additive_dimension)
        a = measure.agg
        params = measure.agg_params
        col = el.qualified
        if a in (AggregationType.SUM, AggregationType.SUM_BOOLEAN):
            return Agg("SUM", False, col, el, semi)
        if a is AggregationType.COUNT:
            return Agg("COUNT", False, col, el, semi)
        if a is AggregationType.COUNT_DISTINCT:
            return Agg("COUNT", True, col, el, semi)
        if a is AggregationType.AVERAGE:
            return Agg("AVG", False, col, el, semi)
        if a in (AggregationType.MIN, AggregationType.MAX):
            return Agg(a.value.upper(), False, col, el, semi)
        p = params.percentile if params is not None else None
        discrete = params is not None and params.use_discrete_percentile
        approx = params is not None and params.use_approximate_percentile
        if a is AggregationType.MEDIAN or (
            a is AggregationType.PERCENTILE and p == 0.5 and not discrete and not approx
        ):
            return Agg("MEDIAN", False, col, el, semi)
        if a is AggregationType.PERCENTILE and p is not None:
            return PercentileAgg(
                "PERCENTILE",
                False,
                col,
                el,
                semi,
                fraction=float(p),
                discrete=discrete,
                approximate=approx,
            )
        raise Skip(
            "percentile_not_supported",
            f"measure `{el.name}` is a percentile without a `percentile` fraction",
        )

    def time_of(self, el: Element) -> Element | None:
        return self.names.agg_time(el)

    def simple(self, m: PydanticMetric, filters: Sequence[str], name: str) -> Out:
        agg = self.agg_of(m)
        tp = m.type_params
        if tp.measure is not None:
            filters = list(dict.fromkeys([*filters, *_templates(tp.measure.filter)]))
        payload = self._time_payload(agg.measure)
        fill = tp.fill_nulls_with
        if tp.join_to_timespine:
            self.notes.warn(
                "time_spine_not_carried",
                f"metric `{name}` joins to the time spine (a row for every time bucket): the "
                'queries the importer translates ask densify: "time"; a hand-written dosi '
                "query returns the buckets that have data unless it does",
                path=f"metric:{name}",
            )
        if not filters:
            if fill is not None:
                payload["fill_nulls_with"] = fill
            return Out(name, agg.sql(), {**payload, **_semi(agg)}, plain=fill is None)
        pred, datasets = self.predicate(filters, agg.measure, name)
        if fill is not None:
            payload["fill_nulls_with"] = fill
        own = datasets <= {agg.measure.model}
        if agg.semi is not None:
            # D-SEMI picks the snapshot over every row of the measure and the CASE below
            # filters among the picked rows; MetricFlow filters first and picks among the rows
            # left. The two agree at the non-additive dimension's own grain, and whenever the
            # filter reads only what is constant per window grouping (an account's type with
            # groupings by account); at a coarser grain they may pick different dates.
            self.notes.warn(
                "semi_additive_filter_order",
                f"metric `{name}` filters the semi-additive `{agg.measure.name}`; dosi picks "
                "each period's snapshot over all its rows and filters after, MetricFlow filters "
                "first: equal at the snapshot dimension's own grain or when the filter is "
                "constant per window grouping",
                path=f"metric:{name}",
            )
        if agg.semi is None and ((own and agg.func != "COUNT") or (own and agg.distinct)):
            base = self.measure_metric(agg)
            payload = {"derive": {"type": "filter", "base": base, "where": pred}, **payload}
            return Out(name, agg.sql(f"CASE WHEN {pred} THEN {agg.col} END"), payload)
        far = sorted(
            d for d in datasets - {agg.measure.model} if not self.reaches(agg.measure.model, d)
        )
        if far:
            far_sm = self.names.models[far[0]].sm
            scd = any(e.type.value == "natural" for e in far_sm.entities)
            raise Skip(
                "scd_join_not_carried" if scd else "filter_not_reachable",
                f"its filter reads `{far[0]}`, which `{agg.measure.model}` does not reach through "
                "the imported (many-to-one) relationships",
            )
        # a predicate on another model (or a COUNT of a column): the aggregate of a CASE,
        # which dosi evaluates through the join, counting only non-NULL values
        case = agg.sql(f"CASE WHEN {pred} THEN {agg.col} END")
        return Out(name, case, {**payload, **_semi(agg)}, plain=True)

    def reaches(self, src: str, dst: str) -> bool:
        seen, todo = {src}, [src]
        while todo:
            for nxt in self.edges.get(todo.pop(), ()):
                if nxt == dst:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def predicate(
        self, filters: Sequence[str], measure: Element, name: str
    ) -> tuple[str, set[str]]:
        time_el = self.time_of(measure)

        def metric_time(grain: str | None) -> str | None:
            return None if time_el is None else field_sql(time_el, grain, None)

        r = FilterRenderer(self.names, [measure.model], metric_time)
        parts, datasets = [], set()
        for f in filters:
            out = r.render(f)
            if out.problems:
                raise Skip("filter_not_carried", f"its filter `{f.strip()}`: {out.problems[0]}")
            if out.metric_dimensions:
                raise Skip(
                    "metric_filter_not_carried",
                    f"its filter `{f.strip()}` reads a metric's value per entity; dosi's metric "
                    "dimensions are a query key (docs/metric-dimensions.md), not part of a "
                    "metric's definition",
                )
            parts.append(out.sql)
            datasets |= out.datasets
            if out.metric_time and time_el is not None:
                datasets.add(time_el.model)
        pred = parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)
        return pred, datasets  # bare boolean columns already explicit (filters.explicit_booleans)

    def measure_metric(self, agg: Agg) -> str:
        """A plain metric over the measure (a dbt metric if one is exactly that, else a
        helper) for D-DERIVE filters and windows to derive from."""
        el = agg.measure
        key = (el.model, el.name, agg.sql())
        hit = self.measure_metrics.get(str(key))
        if hit is not None:
            return hit
        for m in self.dbt.values():
            tp = m.type_params
            if (
                m.type is MetricType.SIMPLE
                and tp.measure is not None
                and tp.measure.name == el.name
                and not _templates(m.filter)
                and tp.fill_nulls_with is None
                and m.name not in self._stack
            ):
                out = self.metric(m.name)
                if out is not None and out.plain:
                    self.measure_metrics[str(key)] = m.name
                    return m.name
        name = self._free(el.name if el.name not in self.dbt else f"{el.name}__measure")
        payload = {**self._time_payload(el), **_semi(agg)}
        out = Out(name, agg.sql(), payload, plain=True, helper=True)
        out.description = (
            f"Measure `{el.name}` of `{el.model}` ({agg.sql()}): a helper metric the dbt import "
            "adds for filtered and window metrics to derive from."
        )
        self._emit(out)
        self.measure_metrics[str(key)] = name
        return name

    def _time_payload(self, el: Element) -> dict[str, Any]:
        t = self.time_of(el)
        sm = self.names.models[el.model].sm
        default = sm.defaults.agg_time_dimension if sm.defaults is not None else None
        if t is not None and t.name != default:
            return {"time_dimension": t.qualified}
        return {}

    # -- inputs, composes ----------------------------------------------------------------------
    def input(self, inp: PydanticMetricInput, parent: str, extra: Sequence[str]) -> Out:
        base, window = self._input_window(inp, parent, extra)
        if window is None:
            return base
        return self.window(f"{parent}__{inp.alias or inp.name}", base, window)

    def _input_window(
        self, inp: PydanticMetricInput, parent: str, extra: Sequence[str]
    ) -> tuple[Out, dict[str, Any] | None]:
        """The input's metric, and the D-WINDOW offset its `offset_window` / `offset_to_grain`
        asks for (None: the input as it is)."""
        filters = tuple([*_templates(inp.filter), *extra])
        raw = inp.offset_to_grain
        to_grain = str(getattr(raw, "value", raw)).lower() if raw else None
        if to_grain is not None and to_grain not in PERIOD_STARTS:
            raise Skip(
                "offset_to_grain_not_supported",
                f"input `{inp.alias or inp.name}` is offset to the start of its "
                f"{inp.offset_to_grain} (`offset_to_grain`), which is no D-WINDOW period",
            )
        base = self.metric(inp.name) if not filters else self.variant(inp, parent, filters)
        if base is None:
            raise Skip("input_not_imported", f"its input `{inp.name}` is not imported")
        if to_grain is not None:  # D-WINDOW 1.15: the value at the start of the period
            # at a coarser grain MetricFlow reads the day value at the start of the period
            # holding each bucket's first day: the first of the day values
            return base, {
                "offset": {"period_start": to_grain},
                "calculation": "value",
                "period_value": {"value": "first", "grain": "day"},
            }
        if inp.offset_window is None:
            return base, None
        w = inp.offset_window
        grain = str(w.granularity).lower().rstrip("s")
        if grain not in SHARED_GRAINS:
            raise Skip(
                "custom_granularity_not_supported",
                f"input `{inp.alias or inp.name}` is offset by {w.count} {w.granularity}, "
                "a custom granularity",
            )
        # MetricFlow answers a grain the shift does not land on from its day spine: each day
        # reads the shifted day, the bucket sums them (D-WINDOW 1.15 period_value on offsets)
        return base, {
            "offset": {"count": int(w.count), "granularity": grain},
            "calculation": "value",
            "period_value": {"value": "sum", "grain": "day"},
        }

    def variant(self, inp: PydanticMetricInput, parent: str, filters: tuple[str, ...]) -> Out:
        key = ("variant", inp.name, filters)
        hit = self.signatures.get(key)
        if hit is not None:
            return self.outputs[hit]
        m = self.dbt.get(inp.name)
        if m is None:
            raise Skip("unknown_metric", f"no metric `{inp.name}` in the project")
        name = self._free(f"{parent}__{inp.alias or inp.name}")
        self._stack.append(name)
        try:
            out = self.build(m, filters, name)
        finally:
            self._stack.pop()
        out.helper = True
        out.description = (
            f"`{inp.name}` filtered by {' and '.join(f.strip() for f in filters)} "
            f"(a helper metric of the dbt import, an input of `{parent}`)."
        )
        self._emit(out)
        self.signatures[key] = name
        return out

    def window(self, name: str, base: Out, window: dict[str, Any]) -> Out:
        key = ("window", base.name, json.dumps(window, sort_keys=True))
        hit = self.signatures.get(key)
        if hit is not None:
            return self.outputs[hit]
        out = self._window_out(self._free(name), base, window)
        out.helper = True
        out.description = f"`{base.name}` with the window {json.dumps(window)} (dbt import helper)."
        self._emit(out)
        self.signatures[key] = out.name
        return out

    def _window_out(self, name: str, base: Out, window: dict[str, Any]) -> Out:
        """A window metric `name` over `base` (not emitted)."""
        if base.window:  # a window over a window output: through a compose (D-DERIVE 1.9)
            base = self.compose(self._free(f"{base.name}__series"), base.name, {base.name: base})
            base.helper = True
            base.description = f"`{base.name}` as a series a window can read (dbt import helper)."
            self._emit(base)
        payload: dict[str, Any] = {}
        if base.plain and "semi_additive" not in base.payload:
            payload["window"] = window
            payload.update({k: v for k, v in base.payload.items() if k == "time_dimension"})
        else:
            payload["window"] = {"base": base.name, **window}
        return Out(name, base.sql, payload, stage=True, window=True)

    def compose(self, name: str, expr: str, members: dict[str, Out]) -> Out:
        tree = sqlglot.parse_one(expr, read=_SQL)

        def sub(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and not n.table and n.name in members:
                return exp.Paren(this=sqlglot.parse_one(members[n.name].sql, read=_SQL))
            return n

        expansion = tree.transform(sub).sql(dialect=_SQL)
        stage = any(o.stage for o in members.values())
        payload: dict[str, Any] = {"derive": {"type": "compose", "expr": tree.sql(dialect=_SQL)}}
        axes = {o.payload.get("time_dimension") for o in members.values()}
        if len(axes) == 1 and None not in axes:
            # the members' one time axis (a measure's own agg_time_dimension) is the
            # compose's too: metric_time reads it, not the dataset's default
            payload["time_dimension"] = axes.pop()
        return Out(name, expansion, payload, stage=stage)

    def derived(self, m: PydanticMetric, filters: Sequence[str], name: str) -> Out:
        tp = m.type_params
        if not tp.expr or not tp.metrics:
            raise Skip("invalid_derived_metric", "a derived metric needs `expr` and `metrics`")
        members: dict[str, Out] = {}
        rename: dict[str, str] = {}
        bare = tp.expr.strip()
        if len(tp.metrics) == 1 and bare == (tp.metrics[0].alias or tp.metrics[0].name):
            # the expr is its one input: an offset input is the metric itself (a window
            # metric, not a compose over a helper), so a coarser grain can sample it
            base, window = self._input_window(tp.metrics[0], name, filters)
            if window is not None:
                return self._window_out(name, base, window)
        for inp in tp.metrics:
            out = self.input(inp, name, filters)
            rename[inp.alias or inp.name] = out.name
            members[out.name] = out
        try:
            tree = sqlglot.parse_one(tp.expr, read=_SQL)
        except sqlglot.errors.ParseError as err:
            raise Skip("invalid_derived_metric", f"its expr is not SQL: {err}") from None
        for col in tree.find_all(exp.Column):
            if col.table or col.name not in rename:
                raise Skip(
                    "invalid_derived_metric",
                    f"its expr names `{col.sql()}`, which is none of its inputs",
                )

        def sub(n: exp.Expression) -> exp.Expression:
            return exp.column(rename[n.name]) if isinstance(n, exp.Column) else n

        return self.compose(name, tree.transform(sub).sql(dialect=_SQL), members)

    # -- conversion ----------------------------------------------------------------------------
    def conversion(self, m: PydanticMetric, filters: Sequence[str], name: str) -> Out:
        """D-CONVERSION over two plain event metrics (the measures' own metrics, or a D-DERIVE
        filter of the base measure when the metric or its base input has a filter)."""
        ctp = m.type_params.conversion_type_params
        if ctp is None or ctp.base_measure is None or ctp.conversion_measure is None:
            raise Skip(
                "conversion_not_supported",
                "a conversion metric over base / conversion metrics (not measures) is not read yet",
            )
        bm, cm = ctp.base_measure, ctp.conversion_measure
        base_agg, conv_agg = self.measure_agg(bm.name), self.measure_agg(cm.name)
        if base_agg.semi is not None or conv_agg.semi is not None:
            raise Skip("conversion_not_supported", "a conversion over a semi-additive measure")
        if _templates(cm.filter):
            raise Skip("conversion_not_supported", "a filter on the conversion measure")
        base_filters = list(dict.fromkeys([*filters, *_templates(bm.filter)]))
        base = self.measure_metric(base_agg)
        base_sql = base_agg.sql()
        if base_filters:
            pred, datasets = self.predicate(base_filters, base_agg.measure, name)
            if not datasets <= {base_agg.measure.model}:
                raise Skip(
                    "conversion_not_supported",
                    "its filter reads another model than the base events' own",
                )
            base_sql = base_agg.sql(f"CASE WHEN {pred} THEN {base_agg.col} END")
            fb = self._free(f"{name}__base")
            out = Out(
                fb,
                base_sql,
                {"derive": {"type": "filter", "base": base, "where": pred}},
                helper=True,
            )
            out.description = f"The base events of `{name}` (dbt import helper)."
            self._emit(out)
            base = fb
        conv = self.measure_metric(conv_agg)
        for inp in (bm, cm):
            if inp.join_to_timespine:
                self.notes.warn(
                    "time_spine_not_carried",
                    f"metric `{name}` joins `{inp.name}` to the time spine (a row for every "
                    "time bucket); dosi returns the buckets that have data",
                    path=f"metric:{name}",
                )
        bmodel, cmodel = base_agg.measure.model, conv_agg.measure.model

        def field_of(model: str, element: str, what: str) -> str:
            el = self.names.models[model].elements.get(element)
            if el is None or el.kind == "measure":
                raise Skip(
                    "conversion_not_supported",
                    f"its {what} `{element}` is no dimension or entity of `{model}`",
                )
            return el.qualified

        spec: dict[str, Any] = {
            "base": base,
            "conversion": conv,
            "entity": {
                "base": field_of(bmodel, ctp.entity, "entity"),
                "conversion": field_of(cmodel, ctp.entity, "entity"),
            },
            "calculation": ctp.calculation.value,
        }
        if ctp.window is not None:
            grain = str(ctp.window.granularity).lower().rstrip("s")
            if grain not in GRAINS:
                raise Skip(
                    "custom_granularity_not_supported",
                    f"its window is {ctp.window.count} {ctp.window.granularity}",
                )
            spec["window"] = {"count": int(ctp.window.count), "granularity": grain}
        if ctp.constant_properties:
            spec["constant_properties"] = [
                {
                    "base": field_of(bmodel, p.base_property, "constant property"),
                    "conversion": field_of(cmodel, p.conversion_property, "constant property"),
                }
                for p in ctp.constant_properties
            ]
        rate = ctp.calculation.value == "conversion_rate"
        sql = f"{conv_agg.sql()} / {base_sql}" if rate else conv_agg.sql()
        payload: dict[str, Any] = {"conversion": spec}
        fill = cm.fill_nulls_with if not rate else None
        if fill is not None:
            payload["fill_nulls_with"] = fill
        return Out(name, sql, payload)

    # -- cumulative ----------------------------------------------------------------------------
    def cumulative(self, m: PydanticMetric, filters: Sequence[str], name: str) -> Out:
        tp = m.type_params
        ctp = tp.cumulative_type_params
        window = (ctp.window if ctp is not None else None) or tp.window
        to_date = (ctp.grain_to_date if ctp is not None else None) or tp.grain_to_date
        period = ctp.period_agg if ctp is not None else PeriodAggregation.FIRST
        agg = self.agg_of(m)
        if agg.semi is not None:
            raise Skip(
                "semi_additive_not_supported",
                f"it accumulates the semi-additive `{agg.measure.name}`, a running sum of "
                "snapshots D-SEMI does not define",
            )
        func = {"SUM": "sum", "MIN": "min", "MAX": "max"}.get(agg.func)
        if agg.func == "COUNT":
            # a distinct count over the window's rows (DATUS 1.15 count_distinct frames)
            func = "count_distinct" if agg.distinct else "sum"
        elif agg.distinct:
            func = None
        if func is None:
            raise Skip(
                "cumulative_not_additive",
                f"it accumulates `{agg.sql()}`; D-WINDOW frames re-aggregate per-bucket "
                "values, which for this aggregate is not the aggregate over the window's rows",
            )
        base = self.simple(m, filters, f"{name}__base") if filters else None
        spec: dict[str, Any]
        if window is not None:
            grain = str(window.granularity).lower().rstrip("s")
            if grain not in SHARED_GRAINS:
                raise Skip(
                    "custom_granularity_not_supported",
                    f"its window is {window.count} {window.granularity}, a custom granularity",
                )
            # MetricFlow's window is calendar time (rows after `t - window`, up to `t`): the
            # 1.15 `span` of a rolling frame, read on the running values of each day
            spec = {"type": "rolling", "function": func, "span": f"{int(window.count)} {grain}"}
        elif to_date is not None:
            g = str(to_date).lower()
            if g not in (*GRAINS[1:], "hour", "minute"):  # sub-day resets: DATUS 1.15
                raise Skip("grain_to_date_not_supported", f"grain_to_date `{g}`")
            spec = {"type": "cumulative", "function": func, "reset": g}
        else:  # MetricFlow accumulates from the beginning of time (DATUS 1.15 history)
            spec = {"type": "cumulative", "function": func, "history": "all"}
        spec["period_value"] = period_value(period, self.time_of(agg.measure))
        if base is None:
            plain = Out(f"{name}__base", agg.sql(), self._time_payload(agg.measure), plain=True)
        else:
            plain = base
            if not base.plain:
                base.name = self._free(base.name)
                base.helper = True
                self._emit(base)
        payload: dict[str, Any] = {}
        if plain.plain:
            payload["window"] = spec
            payload.update({k: v for k, v in plain.payload.items() if k == "time_dimension"})
        else:
            payload["window"] = {"base": plain.name, **spec}
        return Out(name, plain.sql, payload, stage=True, window=True)

    # -- output --------------------------------------------------------------------------------
    def _free(self, name: str) -> str:
        taken = set(self.outputs) | set(self.dbt)
        if name not in taken:
            return name
        n = 2
        while f"{name}_{n}" in taken:
            n += 1
        return f"{name}_{n}"

    def _emit(self, out: Out) -> None:
        self.outputs[out.name] = out

    def _ossie(self, o: Out) -> dict[str, Any]:
        exts = []
        payload = dict(o.payload)
        if not o.stage and "CASE WHEN" in o.sql:
            # MetricFlow filters a metric's input rows (a WHERE): a bucket no row passes is no
            # row, where dosi's filter keeps it as NULL; dosi 1.15 `empty_buckets: drop`
            payload["empty_buckets"] = "drop"
        if payload:
            exts.append(datus_entry(payload))
        dbt = dict(o.dbt)
        if o.helper:
            dbt["helper"] = True  # not a dbt metric: `dosi export dbt` leaves it out
        if dbt:
            exts.append({"vendor_name": DBT_VENDOR, "data": json.dumps(dbt)})
        obj = metric_obj(
            o.name,
            o.sql,
            description=o.description,
            synonyms=[o.label] if o.label else (),
        )
        if exts:
            obj["custom_extensions"] = exts
        return obj


def _semi(agg: Agg) -> dict[str, Any]:
    return {"semi_additive": agg.semi} if agg.semi is not None else {}


def semi_additive_payload(
    names: DbtNames, measure: Element, nad: PydanticNonAdditiveDimensionParameters | None
) -> dict[str, Any] | None:
    """MetricFlow's `non_additive_dimension` as D-SEMI's `semi_additive`. MetricFlow's
    `window_choice` picks the snapshot by its time (`min`: the earliest, `max`: the latest),
    which D-SEMI spells `first` / `last` (its `min` / `max` pick by value); the window
    groupings are entities, whose columns become the D-SEMI groupings."""
    if nad is None:
        return None
    info = names.models[measure.model]
    dim = info.elements.get(nad.name)
    if dim is None or dim.kind != "time_dimension":
        raise Skip(
            "semi_additive_not_supported",
            f"measure `{measure.name}` does not add along `{nad.name}`, which is no time "
            f"dimension of `{measure.model}`",
        )
    groupings = []
    for g in nad.window_groupings or ():
        el = info.elements.get(g)
        if el is None:
            raise Skip(
                "semi_additive_not_supported",
                f"window grouping `{g}` of measure `{measure.name}` is no element of "
                f"`{measure.model}`",
            )
        groupings.append(el.field)
    choice = {"min": "first", "max": "last"}[nad.window_choice.value]
    out: dict[str, Any] = {"dimension": dim.qualified, "snapshot": choice}
    if groupings:
        out["window_groupings"] = groupings
    return out


def _templates(where: Any) -> list[str]:
    if where is None:
        return []
    return [w.where_sql_template for w in where.where_filters]


def _dbt_block(m: PydanticMetric) -> dict[str, Any]:
    """The dbt definition, kept so `dosi export dbt` can write the metric back as it was."""
    data = json.loads(m.json(exclude={"metadata"}, exclude_none=True))
    data.get("type_params", {}).pop("input_measures", None)
    data.get("type_params", {}).pop("metric_aggregation_params", None)
    return {"metric": data}
