"""How a metric's change between two windows decomposes by dimension (attribution strategy).

DATUS D-DERIVE (attribution metadata): a decomposition is `exact` only for a linear
combination of SUM / COUNT tier measures; a ratio of two such measures splits into mix and rate
effects (`mix_shift`, `approximate`); COUNT(DISTINCT) and other non-additive measures overlap
across segments and are `unsupported`. Window metrics transform a time series: an offset
(period-over-period) metric is attributed through its base aggregate (`approximate`), every
other family is `unsupported` (`window_metric`; a share's segments are coupled through the
total, a streak is a run length).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from dosi.ir.model import MetricIr, ModelIr

ADDITIVE_AGGS = frozenset({"sum", "count", "count_star"})
#: Why a window family's change has no per-segment decomposition (the default: a time series
#: transform).
_WINDOW_WHY: dict[str, str] = {
    "share": "share window metrics divide each group by its partition's total: one group's "
    "change moves every other group's share, so segment effects do not add up",
    "streak": "streak window metrics count consecutive buckets meeting a condition: a run "
    "length has no additive split across segments",
}


@dataclass(frozen=True)
class Strategy:
    name: str  # term_wise | mix_shift | unsupported
    exactness: str | None  # exact | approximate | None when unsupported
    reason: dict[str, Any] | None = None
    numerator: str | None = None  # mix_shift: measure names
    denominator: str | None = None
    base_window: str | None = None  # the window family attributed through its base
    terms: tuple[str, ...] = field(default=())

    @property
    def attributable(self) -> bool:
        return self.name != "unsupported"


def listed_attributable(m: MetricIr, s: Strategy) -> bool:
    """The catalog's `attributable`: a decomposable metric with a time axis to put the two
    windows on (without one, each window must name its time field)."""
    return s.attributable and m.time_axis is not None


def _strip(e: exp.Expression) -> exp.Expression:
    while isinstance(e, (exp.Paren, exp.Cast, exp.Nullif)) or (
        # a D-DERIVE compose fill: COALESCE(x, <literal>) is still the measure x
        isinstance(e, exp.Coalesce)
        and len(e.expressions) == 1
        and isinstance(e.expressions[0], exp.Literal)
    ):
        e = e.this  # NULLIF(x, 0) guards a denominator: the measure is x
    return e


def _measure(model: ModelIr, e: exp.Expression) -> str | None:
    e = _strip(e)
    if isinstance(e, exp.Column) and not e.table and e.name in model.measures:
        return e.name
    return None


def _linear(model: ModelIr, e: exp.Expression) -> bool:
    """Sums and differences of additive measures, optionally scaled by constants."""
    e = _strip(e)
    if isinstance(e, exp.Column):
        name = _measure(model, e)
        return name is not None and model.measures[name].agg in ADDITIVE_AGGS
    if isinstance(e, (exp.Add, exp.Sub)):
        return _linear(model, e.this) and _linear(model, e.expression)
    if isinstance(e, exp.Neg):
        return _linear(model, e.this)
    if isinstance(e, exp.Mul):
        a, b = _strip(e.this), _strip(e.expression)
        if isinstance(a, exp.Literal):
            return _linear(model, b)
        if isinstance(b, exp.Literal):
            return _linear(model, a)
    if isinstance(e, exp.Div) and isinstance(_strip(e.expression), exp.Literal):
        return _linear(model, e.this)
    return False


def attribution_strategy(model: ModelIr, m: MetricIr) -> Strategy:
    if m.lod is not None:  # D-LOD not-yet table (LOD-NI-12): rejected up front
        return Strategy(
            "unsupported",
            None,
            {
                "code": "level_of_detail",
                "inputs": [m.name],
                "message": f"metric `{m.name}` reads a level of detail ({m.lod.text}), whose "
                "value is a function of each window's filter context; attribution compares "
                "both windows in one statement, so it would have to compute it once per window",
            },
        )
    if m.derive is not None and m.derive.above_stage:
        # D-DERIVE stage tier (DRV-CMP-12): arithmetic over window outputs, or a window over
        # one; no materialized aggregate decomposes it
        return Strategy(
            "unsupported",
            None,
            {
                "code": "window_metric",
                "message": f"`{m.name}` is computed over window outputs (D-DERIVE stage tier); "
                "attribute its members over explicit baseline / current windows instead",
            },
        )
    w = m.window
    family = w.family if w is not None else None
    if family is not None and family != "offset":
        why = _WINDOW_WHY.get(family, f"{family} window metrics transform a time series")
        return Strategy(
            "unsupported",
            None,
            {
                "code": "window_metric",
                "message": f"{why}; attribute the base aggregate over explicit baseline / "
                "current windows instead",
            },
        )
    approx_window = family == "offset"
    formula = _strip(m.formula)
    if _linear(model, formula):
        return Strategy(
            "term_wise",
            "approximate" if approx_window else "exact",
            base_window=family,
            terms=m.measures,
        )
    if isinstance(formula, exp.Div):
        num, den = _measure(model, formula.this), _measure(model, formula.expression)
        if (
            num is not None
            and den is not None
            and model.measures[num].agg in ADDITIVE_AGGS
            and model.measures[den].agg in ADDITIVE_AGGS
        ):
            return Strategy(
                "mix_shift", "approximate", numerator=num, denominator=den, base_window=family
            )
        if num is not None and den is not None:  # a ratio with a side that does not add up
            side, bad = (
                ("numerator", num)
                if model.measures[num].agg not in ADDITIVE_AGGS
                else ("denominator", den)
            )
            return Strategy(
                "unsupported",
                None,
                {
                    "code": "ratio_non_sum_tier",
                    "side": side,
                    "measure": bad,
                    "agg": model.measures[bad].agg,
                    "message": f"the ratio's {side} `{bad}` is "
                    f"{model.measures[bad].agg.upper()}; a rate decomposes (mix / rate) only "
                    "over SUM / COUNT sides",
                },
            )
    bad = next((x for x in m.measures if model.measures[x].agg not in ADDITIVE_AGGS), m.measures[0])
    agg = model.measures[bad].agg
    return Strategy(
        "unsupported",
        None,
        {
            "code": "non_sum_tier_measure",
            "measure": bad,
            "agg": agg,
            "message": f"measure `{bad}` is {agg.upper()}; only linear combinations of SUM / "
            "COUNT (and their ratios) decompose across segments",
        },
    )
