"""Attribution: why a metric changed between a baseline and a current window, by dimension.

Both windows and every candidate dimension are compared within ONE statement (CHECKLIST
SURF-ATTR-01): each (window, grouping) is the metric query the planner would compile anyway,
so fan-out rules, fills and joins mean exactly what they mean elsewhere, and the arms meet in
a UNION ALL. The strategy (term-wise / mix-shift / unsupported, exact or approximate) comes
from `dosi.plan.attribution`. Result keys follow the reference engine's `attribute`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from sqlglot import exp

from dosi.errors import QueryError, QueryShapeError, closest
from dosi.ir.model import MetricIr, ModelIr
from dosi.pipeline import plan_tree
from dosi.plan.attribution import Strategy, attribution_strategy
from dosi.plan.joins import JoinGraph
from dosi.query.params_attribution import attribution_params, bind_attribution_params
from dosi.query.request import request_object, shape_error
from dosi.query.spec import TimeRange, parse_query, parse_time_range
from dosi.sql.dialects import get_dialect

REQUEST_KEYS = (
    "metric",
    "current",
    "baseline",
    "dimensions",
    "where_sql",
    "top_n",
    "params",
    "context_filter",
)
_NUM = "__dosi_attr_num"
_DEN = "__dosi_attr_den"
#: the `value` of the segment whose dimension value is NULL (the reference engine's spelling)
NULL_SEGMENT = "(null)"


@dataclass(frozen=True)
class AttributionRequest:
    metric: str
    current: TimeRange
    baseline: TimeRange
    dimensions: tuple[str, ...]
    where_sql: str | None
    top_n: int
    raw_current: dict[str, Any]
    raw_baseline: dict[str, Any]
    params: tuple[tuple[str, Any], ...] = ()  # D-PARAM: one value per param (PARAM-ATTR-01)
    context_filter: Any = None  # accepted, never applied: `context_skipped`


@dataclass
class AttributionPlan:
    request: AttributionRequest
    strategy: Strategy
    dimensions: list[str]  # the ones that compiled
    warnings: list[dict[str, Any]]
    sql: str | None  # None: nothing to run (unsupported)
    metric: MetricIr
    params: dict[str, Any] | None = None  # the resolved binding (comparison_metadata.params)


def _shape(message: str) -> QueryShapeError:
    return shape_error("attribution request", message)


def parse_request(raw: Any) -> AttributionRequest:
    raw = request_object(
        raw,
        REQUEST_KEYS,
        what="attribution request",
        shape='an attribution request is an object {"metric", "current", "baseline"}',
    )
    metric = raw.get("metric")
    if not isinstance(metric, str) or not metric:
        raise _shape("missing field `metric`")
    windows = {}
    for key in ("current", "baseline"):
        value = raw.get(key)
        if not isinstance(value, dict):
            raise _shape(f'missing field `{key}` (a window {{"start", "end"}})')
        tr = parse_time_range(value)
        assert tr is not None
        if tr.start is None or tr.end is None:
            raise _shape(f"`{key}` needs both start and end")
        windows[key] = tr
    dims = raw.get("dimensions") or []
    if isinstance(dims, str):
        dims = [dims]
    if not isinstance(dims, list) or not all(isinstance(d, str) and d for d in dims):
        raise _shape("`dimensions` must be a list of `dataset.field` names")
    where = raw.get("where_sql")
    if where is not None and not isinstance(where, str):
        raise _shape("`where_sql` must be a SQL predicate string")
    params = attribution_params(raw)
    top_n = raw.get("top_n", 10)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        raise _shape("`top_n` must be a positive integer")
    return AttributionRequest(
        metric,
        windows["current"],
        windows["baseline"],
        tuple(dict.fromkeys(dims)),
        where,
        top_n,
        dict(raw["current"]),
        dict(raw["baseline"]),
        params,
        raw.get("context_filter"),
    )


def _shadow(model: ModelIr, m: MetricIr, s: Strategy) -> tuple[ModelIr, list[str]]:
    """A model copy whose hidden metrics compute what the strategy compares."""
    base = dataclasses.replace(m, window=None)
    extra: dict[str, MetricIr] = {}
    if s.name == "mix_shift":
        for name, measure in ((_NUM, s.numerator), (_DEN, s.denominator)):
            assert measure is not None
            extra[name] = dataclasses.replace(
                base,
                name=name,
                kind="aggregate",
                formula=exp.column(measure),
                measures=(measure,),
                fill_nulls_with=None,
            )
        names = [_NUM, _DEN]
    else:
        extra[_NUM] = dataclasses.replace(base, name=_NUM)
        names = [_NUM]
    return dataclasses.replace(model, metrics={**model.metrics, **extra}), names


def _window_json(tr: TimeRange) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if tr.start is not None:
        out["start"] = tr.start.isoformat()
    if tr.end is not None:
        out["end"] = tr.end.isoformat()
    if tr.dimension:
        out["dimension"] = tr.dimension
    return out


def candidate_dimensions(dimensions: list[dict[str, Any]]) -> list[str]:
    """SURF-ATTR-02: recommended (is_dimension) non-time fields, best first."""
    return [d["name"] for d in dimensions if d["is_dimension"] and not d["is_time"]]


def plan_attribution(
    model: ModelIr,
    graph: JoinGraph,
    req: AttributionRequest,
    candidates: list[str],
    dialect: str | None = None,
) -> AttributionPlan:
    m = model.metrics.get(req.metric)
    if m is None:
        raise QueryError(
            "unknown_metric",
            f"unknown metric `{req.metric}`",
            candidates=closest(req.metric, model.metrics) or list(model.metrics),
        )
    if not req.dimensions:
        raise QueryError(
            "dimensions_required",
            f"name the dimensions to analyze; `candidates` lists what `{req.metric}` can be "
            "grouped by, best first",
            candidates=candidates,
            hint=json.dumps({"dimensions": candidates[:3]}),
        )
    model, m, binding = bind_attribution_params(model, m, req.params)
    strategy = attribution_strategy(model, m)
    plan = AttributionPlan(req, strategy, [], [], None, m, binding)
    if req.context_filter is not None:
        # the reference engine takes the key and ignores it; dosi ignores it too, but says so
        plan.warnings.append(
            {
                "code": "context_skipped",
                "message": "attribution does not apply `context_filter`: both windows are "
                "computed over every row of the metric (a context layer would change the "
                "population per window); put a row condition in `where_sql`, which filters "
                "both windows",
            }
        )
    if not strategy.attributable:  # an unsupported shape answers first, as the reference
        return plan
    if m.time_axis is None and not (req.current.dimension and req.baseline.dimension):
        raise QueryError(
            "no_primary_time_dimension",
            f"metric `{m.name}` has no primary time dimension (its datasets have different "
            "ones, or none), so the two windows have no axis to compare on",
            metrics=[m.name],
            candidates=[
                f.qualified for d in model.datasets.values() for f in d.fields.values() if f.is_time
            ],
            hint='name it in both windows: "current": {"start": ..., "end": ..., '
            '"dimension": "dataset.field"}, or declare a metric-level time_dimension',
        )
    shadow, names = _shadow(model, m, strategy)
    dia = get_dialect(dialect)
    arms: list[exp.Select] = []
    groupings: list[str | None] = [None, *req.dimensions]
    for grouping in groupings:
        built: list[exp.Select] = []
        try:
            for period, tr in (("current", req.current), ("baseline", req.baseline)):
                raw: dict[str, Any] = {"metrics": names, "time_range": _window_json(tr)}
                if grouping is not None:
                    raw["group_by"] = [grouping]
                if req.where_sql:
                    raw["where_sql"] = req.where_sql
                rq, _, tree = plan_tree(shadow, graph, parse_query(raw), dia)
                # a typed NULL: DataFusion types a UNION column by its first arm
                value: exp.Expression = exp.cast(exp.null(), "VARCHAR")
                if grouping is not None:
                    value = exp.cast(exp.column(rq.dims[0].output, "q"), "VARCHAR")
                cols = [
                    exp.alias_(exp.Literal.string(grouping or ""), "dimension"),
                    exp.alias_(exp.Literal.string(period), "period"),
                    exp.alias_(value, "value"),
                    exp.alias_(exp.column(_NUM, "q"), "n"),
                    exp.alias_(
                        exp.column(_DEN, "q") if len(names) > 1 else exp.null(),
                        "d",
                    ),
                ]
                built.append(exp.select(*cols).from_(exp.alias_(exp.paren(tree), "q")))
        except QueryError as err:
            _unshadow(err, m.name)
            if grouping is None:
                raise
            plan.warnings.append(
                {
                    "code": "dimension_skipped",
                    "message": f"dimension skipped: {err.message}",
                    "dimension": grouping,
                }
            )
            continue
        if grouping is not None:
            plan.dimensions.append(grouping)
        arms.extend(built)
    union: exp.Expression = arms[0]
    for arm in arms[1:]:
        union = exp.union(union, arm, distinct=False)
    plan.sql = dia.finalize(union).sql(dialect=dia.name)
    return plan


def mix_rate_split(bs: float, cs: float, br: float, cr: float) -> tuple[float, float] | None:
    """Split a segment's change in share x rate into mix and rate effects that add up to it.

    LMDI (logarithmic mean Divisia index, the reference engine's split): with v = share x
    rate, L = (cv - bv) / ln(cv / bv), mix = L ln(cs / bs), rate = L ln(cr / br). It needs
    positive shares and rates; otherwise None: the split is undefined and the segment's whole
    change is one `fallback` term (`lmdi_fallback`).
    """
    if min(bs, cs, br, cr) <= 0:
        return None
    bv, cv = bs * br, cs * cr
    lmean = cv if math.isclose(cv, bv) else (cv - bv) / math.log(cv / bv)
    return lmean * math.log(cs / bs), lmean * math.log(cr / br)


def _unshadow(err: QueryError, name: str) -> None:
    """Errors name the requested metric, never the hidden ones the comparison compiles."""
    for hidden in (_NUM, _DEN):
        err.message = err.message.replace(hidden, name)
    err.args = (err.message,)
    err.metrics = [name if x in (_NUM, _DEN) else x for x in err.metrics]
    err.suggested_retry = None


def _f(v: Any) -> float | None:
    if v is None:
        return None
    x = float(v)
    return None if math.isnan(x) else x


def _days(tr: TimeRange) -> int | None:
    if tr.start is None or tr.end is None:
        return None
    a = tr.start if isinstance(tr.start, dt.datetime) else dt.datetime.combine(tr.start, dt.time())
    b = tr.end if isinstance(tr.end, dt.datetime) else dt.datetime.combine(tr.end, dt.time())
    return (b - a).days


def _literal(model: ModelIr, dim: str, value: str) -> exp.Expression:
    try:
        datatype = model.field(dim).datatype
    except KeyError:
        datatype = None
    if datatype in ("Integer", "Decimal", "Float", "Double", "Number"):
        try:
            float(value)
            return exp.Literal.number(value)
        except ValueError:
            pass
    if datatype == "Boolean":
        return exp.Boolean(this=value.lower() == "true")
    return exp.Literal.string(value)


def _drill(model: ModelIr, dim: str, value: str | None) -> dict[str, str]:
    column = exp.column(*reversed(dim.split(".", 1)))
    if value is None:
        pred: exp.Expression = exp.Is(this=column, expression=exp.null())
    else:
        pred = exp.EQ(this=column, expression=_literal(model, dim, value))
    return {"where_sql": pred.sql()}


def attribution_result(model: ModelIr, plan: AttributionPlan, table: pa.Table | None) -> dict:
    req, s = plan.request, plan.strategy
    meta = {
        "baseline": req.raw_baseline,
        "current": req.raw_current,
        "baseline_days": _days(req.baseline),
        "current_days": _days(req.current),
        "equal_length_windows": _days(req.baseline) == _days(req.current),
        "queries_executed": 0 if table is None else 1,
        "params": dict(plan.params or {}),
    }
    days_b, days_c = meta["baseline_days"], meta["current_days"]
    if days_b is not None and days_c is not None and days_b != days_c:
        # first, as the reference engine lists it: every delta mixes in the length difference
        plan.warnings.insert(
            0,
            {
                "code": "unequal_windows",
                "message": f"the baseline covers {days_b} days and the current window "
                f"{days_c}: each delta mixes the change in level with the change in length",
            },
        )
    out: dict[str, Any] = {
        "metric": req.metric,
        "strategy": s.name,
        "attributable": s.attributable,
        "attribution": s.exactness,
    }
    if table is None:
        out.update(
            {
                "unsupported_reason": s.reason,
                "dimension_ranking": [],
                "selected_dimensions": [],
                "top_dimension_values": [],
                "per_dimension": {},
                "comparison_metadata": meta,
                "warnings": plan.warnings,
            }
        )
        return out
    rows = table.to_pylist()
    cells: dict[tuple[str, str], dict[str | None, tuple[float | None, float | None]]] = {}
    for r in rows:
        cells.setdefault((r["dimension"], r["period"]), {})[r["value"]] = (_f(r["n"]), _f(r["d"]))

    def total(period: str) -> tuple[float, float]:
        n, d = cells.get(("", period), {}).get(None, (None, None))
        if n is None and s.name != "mix_shift":  # an empty window, or a NULL aggregate
            plan.warnings.append(
                {
                    "code": "null_metric_value",
                    "message": f"the {period} window's total is NULL (no rows, or only NULL "
                    "values); it counts as 0 in the deltas",
                }
            )
        return (n or 0.0, d or 0.0)

    (bn, bd), (cn, cd) = total("baseline"), total("current")
    if s.name == "mix_shift":
        for period, den in (("baseline", bd), ("current", cd)):
            if den <= 0:  # no ratio to split: never a delta against a made-up 0 (issue 20)
                raise QueryError(
                    "denominator_nonpositive",
                    f"the {period} window's denominator of `{req.metric}` is "
                    f"{'0 (no rows)' if den == 0 else den}: the ratio is undefined there, so "
                    "its change has no mix / rate split",
                    metrics=[req.metric],
                    hint="choose windows where the denominator has rows, or attribute the "
                    "numerator and denominator metrics separately",
                )
        bval = bn / bd if bd else None
        cval = cn / cd if cd else None
    else:
        bval, cval = bn, cn
    delta = (cval or 0.0) - (bval or 0.0) if bval is not None or cval is not None else None
    out["total_change"] = {
        "baseline_value": bval,
        "current_value": cval,
        "delta": delta,
        "pct_change": (delta / bval * 100) if delta is not None and bval else None,
    }
    scale = max(1.0, abs(bval or 0.0), abs(cval or 0.0))
    if delta is not None and abs(delta) <= 1e-9 * scale:
        # a share of (almost) nothing is noise: no contribution percentages (issue 20)
        delta_for_pct = None
        plan.warnings.append(
            {
                "code": "zero_total_delta",
                "message": "the metric did not change between the windows (the delta is zero "
                "within rounding), so no value gets a contribution percentage",
            }
        )
    else:
        delta_for_pct = delta
    per: dict[str, Any] = {}
    ranking = []
    everything = []
    factor_all: dict[str, float] | None = None
    for dim in plan.dimensions:
        base = cells.get((dim, "baseline"), {})
        cur = cells.get((dim, "current"), {})
        values = []
        fallbacks = 0
        factors = {
            "mix_effect": 0.0,
            "rate_effect": 0.0,
            "entered": 0.0,
            "exited": 0.0,
            "fallback": 0.0,
        }
        for v in dict.fromkeys([*cur, *base]):
            b_n, b_d = base.get(v, (None, None))
            c_n, c_d = cur.get(v, (None, None))
            kind = "entered" if v not in base else "exited" if v not in cur else "normal"
            if plan.metric.fill_nulls_with is not None:
                kind = "normal"  # D-FILL: a missing segment reads the fill value, not absence
            item: dict[str, Any] = {"dimension": dim, "value": NULL_SEGMENT if v is None else v}
            if s.name == "mix_shift":
                bv = (b_n or 0.0) / bd if bd else 0.0
                cv = (c_n or 0.0) / cd if cd else 0.0
                br = b_n / b_d if b_n is not None and b_d else None
                cr = c_n / c_d if c_n is not None and c_d else None
                bs = (b_d or 0.0) / bd if bd else 0.0
                cs = (c_d or 0.0) / cd if cd else 0.0
                split = None if br is None or cr is None else mix_rate_split(bs, cs, br, cr)
                mix: float | None
                rate: float | None
                if split is not None:
                    mix, rate = split
                    factors["mix_effect"] += mix
                    factors["rate_effect"] += rate
                elif br is not None and cr is not None:  # a zero share or rate: one term
                    mix = rate = None
                    kind = "fallback"
                    factors["fallback"] += cv - bv
                    fallbacks += 1
                else:
                    mix = rate = None  # a segment absent from one window has no split
                    factors["entered" if kind == "entered" else "exited"] += cv - bv
                item.update(
                    {
                        "baseline_value": bv,
                        "current_value": cv,
                        "mix_effect": mix,
                        "rate_effect": rate,
                        "baseline_rate": br,
                        "current_rate": cr,
                        "baseline_share": bs,
                        "current_share": cs,
                    }
                )
            else:
                fill = float(plan.metric.fill_nulls_with or 0.0)
                item.update(
                    {
                        "baseline_value": fill if b_n is None else b_n,
                        "current_value": fill if c_n is None else c_n,
                    }
                )
            d = item["current_value"] - item["baseline_value"]
            item["delta"] = d
            item["contribution_pct"] = d / delta_for_pct * 100 if delta_for_pct else None
            item["segment_kind"] = kind
            item["drill_down"] = _drill(model, dim, v)
            values.append(item)
        # ties: falls before rises, then by the value's text, "(null)" included (the reference
        # engine's order), never by the union's row order, which is the engine's
        values.sort(key=lambda x: (-abs(x["delta"]), x["delta"], x["value"]))
        score = max((abs(x["contribution_pct"] or 0.0) / 100 for x in values), default=0.0)
        b_sum = sum(x["baseline_value"] for x in values)
        c_sum = sum(x["current_value"] for x in values)
        b_res = b_sum - (bval or 0.0)
        c_res = c_sum - (cval or 0.0)
        tol = 1e-6 * max(1.0, abs(bval or 0.0), abs(cval or 0.0))
        entry: dict[str, Any] = {
            "values": values,
            "score": score,
            "non_additive": False,
            "truncated": False,
            "reconciliation": {
                "baseline_residual": b_res,
                "current_residual": c_res,
                "passed": abs(b_res) <= tol and abs(c_res) <= tol,
            },
        }
        if s.name == "mix_shift":
            factors["residual"] = (delta or 0.0) - sum(
                factors[k] for k in ("mix_effect", "rate_effect", "entered", "exited", "fallback")
            )
            entry["factor_totals"] = factors
            factor_all = factor_all or factors
        per[dim] = entry
        ranking.append(
            {"dimension": dim, "score": score, "non_additive": False, "truncated": False}
        )
        everything.extend(values)
        if s.name == "mix_shift" and fallbacks:
            plan.warnings.append(
                {
                    "code": "lmdi_fallback",
                    "message": f"{fallbacks} value(s) of `{dim}` have a zero (or negative) "
                    "share or rate in one window, where the logarithmic (LMDI) mix / rate split "
                    "is undefined: each one's whole change is a single `fallback` term",
                    "dimension": dim,
                }
            )
        if score > 1:
            plan.warnings.append(
                {
                    "code": "offsetting_deltas",
                    "message": f"offsetting positive and negative deltas (score {score:.2f} > 1);"
                    " the total masks larger component moves",
                    "dimension": dim,
                }
            )
    ranking.sort(key=lambda x: -x["score"])
    everything.sort(key=lambda x: -abs(x["delta"]))
    if factor_all is not None:
        out["factor_totals"] = factor_all
    out.update(
        {
            "dimension_ranking": ranking,
            "selected_dimensions": [r["dimension"] for r in ranking],
            "top_dimension_values": everything[: req.top_n],
            "per_dimension": per,
        }
    )
    if s.base_window is not None:
        out["window_mapping"] = {
            "family": s.base_window,
            "note": f"`{req.metric}` is an {s.base_window} window metric; its base aggregate "
            "is compared over the two windows",
        }
    out["comparison_metadata"] = meta
    out["warnings"] = plan.warnings
    out["sql"] = plan.sql
    return out
