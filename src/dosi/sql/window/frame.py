"""SQL of the `frame` family (WM "Compilation semantics", "Frame family"): the aggregate OVER
the metric's frame (partition, reset key, order, ROWS / RANGE / GROUPS bounds, 1.14 following
bounds and EXCLUDE), masked to the buckets it may read; `require_full_window` NULLs partial
frames; CORR is NULL without variance. The 1.14 regression functions read the metric as y and
`second` as x (REGR_SLOPE(y, x)); the percentiles are the dialect's spelling of
PERCENTILE_CONT / PERCENTILE_DISC (sqlglot renders DuckDB's QUANTILE_CONT)."""

from __future__ import annotations

from sqlglot import exp

from dosi.ext.window import FrameWindow, WindowSpec
from dosi.ext.window.span import SPAN_GRAINS
from dosi.plan.records import WindowMetric
from dosi.sql.util import clone
from dosi.sql.window.distinct import render_distinct
from dosi.sql.window.stage import WindowStageSql

_AGGS: dict[str, type[exp.Expression]] = {
    "sum": exp.Sum,
    "avg": exp.Avg,
    "min": exp.Min,
    "max": exp.Max,
    "stddev_pop": exp.StddevPop,
    "stddev_samp": exp.StddevSamp,
    "var_pop": exp.VariancePop,
    "var_samp": exp.Variance,
}
_TWO_ARG: dict[str, type[exp.Expression]] = {
    "covar_pop": exp.CovarPop,
    "covar_samp": exp.CovarSamp,
    "corr": exp.Corr,
}
#: REGR_*(y, x): y is the metric's own series, x the `second` one (1.14)
_REGR: dict[str, type[exp.Expression]] = {
    "regr_slope": exp.RegrSlope,
    "regr_intercept": exp.RegrIntercept,
    "regr_r2": exp.RegrR2,
    "regr_count": exp.RegrCount,
    "regr_avgx": exp.RegrAvgx,
    "regr_avgy": exp.RegrAvgy,
    "regr_sxx": exp.RegrSxx,
    "regr_syy": exp.RegrSyy,
    "regr_sxy": exp.RegrSxy,
}
_NEED_SPREAD = frozenset({"regr_slope", "regr_intercept", "regr_r2"})
_EXCLUDE = {"current_row": "CURRENT ROW", "group": "GROUP", "ties": "TIES"}


def render(s: WindowStageSql, wm: WindowMetric, spec: WindowSpec) -> exp.Expression:
    assert isinstance(spec, FrameWindow)
    w = spec
    if wm.distinct is not None:  # 1.15: distinct over the frame's fact rows
        return render_distinct(s, wm, w)
    v = s.masked(wm, s.cur(wm.base_column))
    if w.function == "count":
        return _framed(s, wm, w, s.frame_count(wm))
    if w.function in _REGR:
        assert wm.second_column is not None
        x = s.masked(wm, s.cur(wm.second_column))
        out = _framed(s, wm, w, _REGR[w.function](this=v, expression=x))
        if w.function not in _NEED_SPREAD:
            return out
        # undefined without spread in x: NULL, as the standard and PostgreSQL say (DuckDB and
        # ClickHouse return NaN)
        spread = _framed(s, wm, w, exp.RegrSxx(this=clone(v), expression=clone(x)))
        varies = exp.GT(this=spread, expression=exp.Literal.number(0))
        return exp.Case(ifs=[exp.If(this=varies, true=out)])
    if w.function in ("percentile_cont", "percentile_disc", "median"):
        if w.function != "percentile_disc":
            # an interpolated value is not a value of the series: over DECIMAL, DuckDB would
            # round it to the column's scale
            v = exp.Cast(this=v, to=exp.DataType.build("DOUBLE"))
        return _framed(s, wm, w, s.dialect.frame_percentile(w.function, v, w.fraction))
    if w.function not in _TWO_ARG:
        return _framed(s, wm, w, _AGGS[w.function](this=v))
    assert wm.second_column is not None
    second = s.masked(wm, s.cur(wm.second_column))
    out = _framed(s, wm, w, _TWO_ARG[w.function](this=second, expression=v))
    if w.function != "corr":
        return out

    # CORR is undefined when either series has no variance in the frame: NULL, as the SQL
    # standard and PostgreSQL say (DuckDB alone returns NaN).
    def paired(x: exp.Expression, other: exp.Expression) -> exp.Expression:
        present = exp.Not(this=exp.Is(this=clone(other), expression=exp.Null()))
        return exp.Case(ifs=[exp.If(this=present, true=clone(x))])

    varies = [
        exp.GT(
            this=_framed(s, wm, w, exp.VariancePop(this=paired(x, other))),
            expression=exp.Literal.number(0),
        )
        for x, other in ((v, second), (second, v))
    ]
    return exp.Case(ifs=[exp.If(this=exp.And(this=varies[0], expression=varies[1]), true=out)])


def _framed(
    s: WindowStageSql, wm: WindowMetric, w: FrameWindow, func: exp.Expression
) -> exp.Expression:
    """`func` OVER the metric's frame (partition, reset key, order, ROWS/RANGE bounds)."""
    partition: list[exp.Expression] = [s.cur(p) for p in wm.partition]
    if w.scope == "partition" or (s.stage.time_key is None and w.order.by == "time"):
        # no time key: a running total queried without its axis spans the whole partition
        return s.window(func, partition, None, None)
    if w.reset is not None:
        partition.append(s.r.bucket(s.cur(s.stage.time_key), w.reset, None))  # type: ignore[arg-type]
    order = s.order_keys(wm, w.order.by, w.order.direction, w.order.nulls)
    if w.span is not None:
        return s.window(func, partition, order, _span_frame(s, w))
    start: str | exp.Expression = (
        "UNBOUNDED" if w.preceding is None else exp.Literal.number(w.preceding)
    )
    spec = exp.WindowSpec(kind=w.units.upper(), start=start, start_side="PRECEDING")
    if w.following_unbounded:
        spec.set("end", "UNBOUNDED")
        spec.set("end_side", "FOLLOWING")
    elif w.following:
        spec.set("end", exp.Literal.number(w.following))
        spec.set("end_side", "FOLLOWING")
    else:
        spec.set("end", "CURRENT ROW")
    extent = clone(spec)  # the frame's extent: what require_full_window counts
    if w.exclusion in _EXCLUDE:
        spec.set("exclude", _EXCLUDE[w.exclusion])
    out: exp.Expression = s.window(func, partition, order, spec)
    if w.require_full_window and w.preceding is not None:
        count = s.window(
            s.frame_count(wm),
            [clone(p) for p in partition],
            [clone(o) for o in order],
            extent,
        )
        width = w.preceding + 1 + w.following
        full = exp.GTE(this=count, expression=exp.Literal.number(width))
        out = exp.Case(ifs=[exp.If(this=full, true=out)])
    return out


def _span_frame(s: WindowStageSql, w: FrameWindow) -> exp.WindowSpec:
    """1.15 `span`: RANGE BETWEEN (span - one bucket) PRECEDING AND CURRENT ROW over the time
    key, so a bucket is in the frame when it starts after `t - span` (the bucket exactly a
    span back is out: a 2-month span on March 31 starts on February 1). Calendar units are
    applied months first, then days and time, on every engine that has INTERVAL frames."""
    assert w.span is not None
    grain = s.stage.grain or "day"
    span = s.dialect.interval(w.span.count, w.span.granularity)
    one = s.dialect.interval(1, grain if grain in SPAN_GRAINS else "day")
    start = exp.Paren(this=exp.Sub(this=span, expression=one))
    return exp.WindowSpec(kind="RANGE", start=start, start_side="PRECEDING", end="CURRENT ROW")
