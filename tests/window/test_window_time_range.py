"""D-WINDOW under a time_range: scan expansion + trim, and the query-time restrictions
(WIN-QRY-04, WIN-OFF-05/10, WIN-FRM-17..20, WIN-RES-*). Expected values are computed in plain
Python from `wm_common.SALES`."""

from __future__ import annotations

from typing import Any

import pytest
from wm_common import (
    RETURNS,
    SALES,
    D,
    Key,
    Sale,
    assert_series,
    bucket,
    check,
    frame_expected,
    key_date,
    keyed,
    make_engine,
    offset_expected,
    query_error,
    run,
    series,
    ts,
)

import dosi
from dosi.errors import QueryError

WINDOWS: dict[str, Any] = {
    "mom_value": {"type": "pop", "offset": "1 month", "calculation": "value"},
    "mom": {"type": "pop", "offset": "1 month"},
    "yoy_value": {"type": "pop", "offset": "1 year", "calculation": "value"},
    "fwd_value": {
        "offset": {"count": 1, "granularity": "month", "direction": "forward"},
        "calculation": "value",
    },
    "wow_value": {"type": "pop", "offset": "1 week", "calculation": "value"},
    "ytd": {"type": "cumulative", "function": "sum", "reset": "year"},
    "qtd": {"type": "cumulative", "function": "sum", "reset": "quarter"},
    "mtd": {"type": "cumulative", "function": "sum", "reset": "month"},
    "wtd": {"type": "cumulative", "function": "sum", "reset": "week"},
    "cum": {"type": "cumulative", "function": "sum"},
    "roll3": {"type": "rolling", "function": "sum", "periods": 3},
    "roll3_count": {"type": "rolling", "function": "count", "periods": 3},
    "roll2_full": {"type": "rolling", "function": "sum", "periods": 2, "require_full_window": True},
    "roll2_desc": {
        "frame": {"function": "sum", "preceding": 1, "order": {"by": "time", "direction": "desc"}}
    },
    "roll2_desc_full": {
        "frame": {
            "function": "sum",
            "preceding": 1,
            "require_full_window": True,
            "order": {"by": "time", "direction": "desc"},
        }
    },
    "cum_desc": {
        "frame": {
            "function": "count",
            "preceding": "unbounded",
            "order": {"by": "time", "direction": "desc"},
        }
    },
    "ytd_desc": {
        "frame": {
            "function": "sum",
            "preceding": "unbounded",
            "reset": "year",
            "order": {"by": "time", "direction": "desc"},
        }
    },
    "rk": {"rank": {"function": "rank"}},
    "fv": {"value": {"function": "first_value"}},
    "byval": {
        "frame": {
            "function": "sum",
            "preceding": "unbounded",
            "order": {"by": "value"},
            "partition": {"mode": "none"},
        }
    },
    "scope_sum": {
        "frame": {"function": "sum", "scope": "partition", "partition": {"mode": "none"}}
    },
    "ship_mom": (
        "SUM(sales.amount)",
        {
            "time_dimension": "sales.ship_date",
            "window": {"type": "pop", "offset": "1 month", "calculation": "value"},
        },
    ),
}

SHIPPED = [Sale(s.sale_id, s.ship_date, s.region, s.amount) for s in SALES]
MONTH = ["metric_time:month"]
REGION_MONTH = ["sales.region", "metric_time:month"]
T = ("metric_time__month",)
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS, with_returns=True)


def in_range(full: dict[Key, Any], start: str | None, end: str | None) -> dict[Key, Any]:
    return {
        k: v
        for k, v in full.items()
        if (start is None or key_date(k) >= D(start)) and (end is None or key_date(k) < D(end))
    }


def ts_(day: str) -> str:
    return day


# -- expansion + trim ----------------------------------------------------------------------------


def test_win_off_10_first_bucket_sees_pre_range_value(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-10 / WIN-QRY-04: the scan is widened by the offsets (chained back shifts) and the
    output trimmed: 2024-01 reads 2023-12 (outside the range), yoy reads 2023; the forward offset
    of the last in-range bucket (2024-03) reads 2024-04 beyond the end (WIN-OFF-05)."""
    start, end = "2024-01-01", "2024-04-01"
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        base = series("month", dims)
        rows = check(
            eng,
            db,
            grp,
            keys,
            {
                "revenue": in_range(base, start, end),
                "mom_value": in_range(offset_expected(base, 1, "month", "value"), start, end),
                "yoy_value": in_range(offset_expected(base, 1, "year", "value"), start, end),
                "fwd_value": in_range(
                    offset_expected(base, 1, "month", "value", "forward"), start, end
                ),
            },
            time_range={"start": start, "end": end},
        )
    got = keyed(rows, RT, "mom_value")
    assert got[("east", ts_("2024-01-01"))] == 200  # east 2023-12, loaded only for lookback
    assert keyed(rows, RT, "fwd_value")[("east", ts_("2024-03-01"))] == 300  # 2024-04


def test_win_off_10_scan_bounds_in_sql(eng: dosi.Engine) -> None:
    """WIN-OFF-05/10 / WIN-FRM-17/19/20: the base scan's lower bound is widened by the chained
    back shifts and the reset alignment, the upper bound only by forward offsets; the trim sits
    outside the windowed SELECT."""
    q = {
        "metrics": ["mom_value", "fwd_value", "ytd"],
        "group_by": MONTH,
        "time_range": {"start": "2024-03-01", "end": "2024-05-01"},
    }
    sql = eng.compile(q)["sql"]
    base, rest = sql.split("), win AS (", 1)
    assert "sales.sale_date >= CAST('2024-01-01' AS DATE)" in base  # min(03-01 - 1 month, Jan 1)
    assert "sales.sale_date < CAST('2024-06-01' AS DATE)" in base
    assert "WHERE metric_time__month >= CAST('2024-03-01' AS DATE)" in rest.split(") SELECT")[-1]
    q = {
        "metrics": ["mom_value"],
        "group_by": MONTH,
        "time_range": {"start": "2024-03-01", "end": "2024-05-01"},
    }
    base = eng.compile(q)["sql"].split("), win AS (", 1)[0]
    assert "sales.sale_date < CAST('2024-05-01' AS DATE)" in base  # back offsets: end unchanged
    q = {"metrics": ["wtd"], "group_by": ["metric_time:day"], "time_range": {"start": "2024-01-03"}}
    base = eng.compile(q)["sql"].split("), win AS (", 1)[0]
    # the week start is the calendar's (Monday), so the aligned bound is a literal (issue 22)
    assert "sales.sale_date >= CAST('2024-01-01' AS DATE)" in base


@pytest.mark.parametrize("dimension", ["metric_time", "sales.sale_date"])
def test_win_qry_04_time_range_dimension_on_axis(eng: dosi.Engine, db: str, dimension: str) -> None:
    """WIN-QRY-04: a time_range naming the axis (as metric_time or the concrete field) expands
    and trims exactly like one without `dimension`."""
    tr = {"start": "2024-01-01", "end": "2024-04-01"}
    metrics = ["mom_value", "fwd_value", "ytd"]
    plain = run(eng, db, metrics, REGION_MONTH, time_range=tr)
    named = run(eng, db, metrics, REGION_MONTH, time_range={**tr, "dimension": dimension})
    for m in metrics:
        assert keyed(named, RT, m) == keyed(plain, RT, m)


def test_win_qry_04_time_range_on_another_field_is_not_implemented(eng: dosi.Engine) -> None:
    """WIN-QRY-04 (issue 20 point 6): a time_range on a non-axis field (ship_date) could be
    neither widened for the lookback nor trimmed along the axis, so the first offset would
    compare with a truncated bucket: not_implemented naming the window metric."""
    with pytest.raises(QueryError) as err:
        eng.compile(
            {
                "metrics": ["mom_value", "revenue"],
                "group_by": MONTH,
                "time_range": {
                    "start": "2024-01-01",
                    "end": "2024-03-01",
                    "dimension": "sales.ship_date",
                },
            }
        )
    assert err.value.code == "not_implemented"
    assert err.value.metrics == ["mom_value"]


@pytest.mark.parametrize(
    "grain,metric,reset,start",
    [
        ("month", "ytd", "year", "2024-03-01"),
        ("month", "ytd", "year", "2023-11-01"),
        ("month", "qtd", "quarter", "2024-02-01"),
        ("day", "mtd", "month", "2023-12-15"),
        ("day", "wtd", "week", "2024-01-02"),
        ("week", "ytd", "year", "2024-01-08"),
    ],
)
def test_win_frm_17_mid_period_start_accumulates_from_period_start(
    eng: dosi.Engine, db: str, grain: str, metric: str, reset: str, start: str
) -> None:
    """WIN-FRM-17/18/19: a mid-period start still accumulates from the reset boundary (YTD from
    Jan 1, QTD from the quarter start, WTD from Monday), then the output is trimmed."""
    key = f"metric_time__{grain}"
    for dims in ((), ("region",)):
        base = series(grain, dims)
        exp = in_range(frame_expected(base, "sum", None, reset=reset), start, None)
        check(
            eng,
            db,
            [f"sales.{d}" for d in dims] + [f"metric_time:{grain}"],
            (*dims, key),
            {metric: exp},
            time_range={"start": start},
        )


def test_win_frm_17_ytd_hand_checked(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-17: YTD from 2024-03 = Jan + Feb + Mar totals although Jan/Feb are trimmed."""
    m = series("month")
    got = keyed(run(eng, db, ["ytd"], MONTH, time_range={"start": "2024-03-01"}), T, "ytd")
    assert min(got) == (ts_("2024-03-01"),)
    assert got[(ts_("2024-03-01"),)] == sum(m[(ts_(f"2024-0{i}-01"),)] for i in (1, 2, 3))


RANGES = [
    ("2024-01-01", "2024-04-01"),
    ("2023-12-01", None),
    (None, "2024-02-01"),
    ("2023-04-01", "2024-07-01"),
    ("2024-02-01", "2024-03-01"),
]


@pytest.mark.parametrize("start,end", RANGES)
def test_win_qry_04_trim_never_changes_in_range_values(
    eng: dosi.Engine, db: str, start: str | None, end: str | None
) -> None:
    """WIN-QRY-04 / WIN-FRM-18: for offsets (back, forward, coarser) and resets, the rows a
    time_range keeps are exactly the unbounded query's rows for those buckets."""
    metrics = ["revenue", "mom", "mom_value", "yoy_value", "fwd_value", "ytd", "qtd"]
    full = run(eng, db, metrics, REGION_MONTH)
    tr = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    part = run(eng, db, metrics, REGION_MONTH, time_range=tr)
    assert part, "the range holds data"
    for m in metrics:
        assert_series(keyed(part, RT, m), in_range(keyed(full, RT, m), start, end), m)


def test_win_qry_04_week_reset_trim_at_day_grain(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-04 / WIN-FRM-19: a week reset and a week offset at day grain, trimmed mid-week,
    keep the unbounded values (the week straddling 2023/2024 included)."""
    metrics = ["wtd", "wow_value", "mtd"]
    grp = ["sales.region", "metric_time:day"]
    keys = ("region", "metric_time__day")
    full = run(eng, db, metrics, grp)
    part = run(eng, db, metrics, grp, time_range={"start": "2024-01-02", "end": "2024-03-02"})
    for m in metrics:
        assert_series(
            keyed(part, keys, m), in_range(keyed(full, keys, m), "2024-01-02", "2024-03-02"), m
        )


# -- non-expanding frames -------------------------------------------------------------------------


def test_win_frames_alone_not_scan_expanded(eng: dosi.Engine, db: str) -> None:
    """Reference behaviour (REPORT §4.3): rolling and running frames alone under a start are not
    scan-expanded: they see only the in-range rows (roll3 at 2024-03 = 180 alone)."""
    start = "2024-03-01"
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        inr = series("month", dims, start=D(start))
        check(
            eng,
            db,
            grp,
            keys,
            {
                "roll3": frame_expected(inr, "sum", 2),
                "roll3_count": frame_expected(inr, "count", 2),
                "roll2_full": frame_expected(inr, "sum", 1, require_full=True),
                "cum": frame_expected(inr, "sum", None),
            },
            time_range={"start": start},
        )
    got = keyed(run(eng, db, ["roll3"], MONTH, time_range={"start": start}), T, "roll3")
    assert got[(ts_("2024-03-01"),)] == series("month")[(ts_("2024-03-01"),)]


def test_win_res_rolling_with_expanding_metric_answers_as_alone(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-07 (decision): rolling frames may share a query with scan-expanding metrics under a
    start, and answer exactly as they would alone (the widened rows never enter their frames)."""
    start, end = "2024-01-01", "2024-05-01"
    tr = {"start": start, "end": end}
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        inr = series("month", dims, start=D(start), end=D(end))
        base = series("month", dims)
        check(
            eng,
            db,
            grp,
            keys,
            {
                "roll3": frame_expected(inr, "sum", 2),
                "roll3_count": frame_expected(inr, "count", 2),
                "roll2_full": frame_expected(inr, "sum", 1, require_full=True),
                "mom_value": in_range(offset_expected(base, 1, "month", "value"), start, end),
                "ytd": in_range(frame_expected(base, "sum", None, reset="year"), start, end),
            },
            time_range=tr,
        )


@pytest.mark.parametrize(
    "tr", [{"end": "2024-03-01"}, {"start": "2023-12-01", "end": "2024-03-01"}]
)
def test_win_res_desc_frames_with_forward_offset_answer_as_alone(
    eng: dosi.Engine, db: str, tr: dict[str, str]
) -> None:
    """WIN-OFF-05 / WIN-QRY-04: a forward offset widens the scan's END; a time-DESC frame (rolling,
    running, or reset) must not accumulate the rows loaded only for that lookahead — it answers
    exactly as it would alone (as rolling frames do for the start-side expansion)."""
    start, end = tr.get("start"), tr["end"]
    desc = ["roll2_desc", "roll2_desc_full", "ytd_desc"]
    if start is None:  # a running metric with a start is WIN-RES-04's not_implemented
        desc.append("cum_desc")
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        alone = {m: keyed(run(eng, db, [m], grp, time_range=tr), keys, m) for m in desc}
        inr = series("month", dims, start=D(start) if start else None, end=D(end))
        inr_year = series(
            "month", dims, start=D(start[:4] + "-01-01") if start else None, end=D(end)
        )
        assert_series(alone["roll2_desc"], frame_expected(inr, "sum", 1, order_desc=True))
        assert_series(
            alone["ytd_desc"],
            in_range(
                frame_expected(inr_year, "sum", None, reset="year", order_desc=True), start, end
            ),
        )
        base = series("month", dims)
        check(
            eng,
            db,
            grp,
            keys,
            {
                **alone,
                "fwd_value": in_range(
                    offset_expected(base, 1, "month", "value", "forward"), start, end
                ),
            },
            time_range=tr,
        )


def test_win_res_07_mixed_resets_and_offsets_with_start(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-07 / WIN-FRM-20: mixed offsets and resets with a start: the scan aligns to the
    coarsest reset; each finer reset stays exact under the over-expanded scan."""
    start = "2024-03-01"
    base = series("month")
    check(
        eng,
        db,
        MONTH,
        T,
        {
            "mom": in_range(offset_expected(base, 1, "month", "percent_change"), start, None),
            "yoy_value": in_range(offset_expected(base, 1, "year", "value"), start, None),
            "ytd": in_range(frame_expected(base, "sum", None, reset="year"), start, None),
            "qtd": in_range(frame_expected(base, "sum", None, reset="quarter"), start, None),
            "mtd": in_range(frame_expected(base, "sum", None, reset="month"), start, None),
        },
        time_range={"start": start},
    )


# -- restrictions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("other", ["mom", "ytd", "wtd"])
def test_win_res_04_running_with_expanding_under_start(
    eng: dosi.Engine, db: str, other: str
) -> None:
    """WIN-RES-04: a no-reset running metric + a metric that widens the scan's start (offset
    lookback, reset alignment) under a time_range start -> not_implemented naming the running
    metric; without a start the pair is fine."""
    grp = ["metric_time:month"] if other != "wtd" else ["metric_time:day"]
    err = query_error(
        eng, db, {"metrics": ["cum", other], "group_by": grp, "time_range": {"start": "2024-02-01"}}
    )
    assert err.code == "not_implemented"
    assert err.metrics == ["cum"]
    assert "reset" in (err.hint or "")
    rows = run(eng, db, ["cum", other], grp, time_range={"end": "2024-04-01"})
    assert rows


def test_win_res_04_running_with_forward_offset_under_start_is_alone(
    eng: dosi.Engine, db: str
) -> None:
    """WIN-RES-04 / WIN-OFF-05: a forward offset widens only the scan's END, so a running metric
    beside it under a start accumulates exactly what it accumulates alone."""
    tr = {"start": "2024-02-01"}
    alone = run(eng, db, ["cum"], MONTH, time_range=tr)
    both = run(eng, db, ["cum", "fwd_value"], MONTH, time_range=tr)
    assert [r["cum"] for r in both] == [r["cum"] for r in alone]
    assert len(both) == len(alone) > 0


def test_win_res_04_running_with_rolling_under_start_is_fine(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-04: running + rolling with a start is fine: neither expands the scan."""
    start = "2024-02-01"
    inr = series("month", start=D(start))
    check(
        eng,
        db,
        MONTH,
        T,
        {"cum": frame_expected(inr, "sum", None), "roll3": frame_expected(inr, "sum", 2)},
        time_range={"start": start},
    )


@pytest.mark.parametrize("glob", ["rk", "fv", "byval", "scope_sum"])
@pytest.mark.parametrize("expanding", ["mom", "ytd"])
def test_win_res_05_partition_global_with_expanding_under_range(
    eng: dosi.Engine, db: str, glob: str, expanding: str
) -> None:
    """WIN-RES-05: a partition-global metric (rank, value, value-ordered frame, scope frame) +
    a metric that widens the scan under the time_range -> not_implemented naming the global
    one."""
    tr = {"start": "2024-01-01"}
    err = query_error(eng, db, {"metrics": [glob, expanding], "group_by": MONTH, "time_range": tr})
    assert err.code == "not_implemented"
    assert err.metrics == [glob]


@pytest.mark.parametrize("glob", ["rk", "fv", "byval", "scope_sum"])
@pytest.mark.parametrize("expanding", ["mom", "ytd"])
def test_win_res_05_partition_global_beside_non_widening_range_is_alone(
    eng: dosi.Engine, db: str, glob: str, expanding: str
) -> None:
    """WIN-RES-05: with an end-only range a back offset or a reset widens nothing, so the
    partition-global metric sees the same population as alone."""
    tr = {"end": "2024-04-01"}
    alone = run(eng, db, [glob], MONTH, time_range=tr)
    both = run(eng, db, [glob, expanding], MONTH, time_range=tr)
    assert [r[glob] for r in both] == [r[glob] for r in alone]
    assert len(alone) > 0


def test_win_res_05_partition_global_with_expanding_no_range(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-05: without a time_range the same pair is fine and both compute over all rows."""
    base = series("month")
    from test_window_rank_value import ranked  # plain-Python ranking

    check(
        eng,
        db,
        MONTH,
        T,
        {"rk": ranked(base, "rank"), "mom": offset_expected(base, 1, "month", "percent_change")},
    )


def test_win_res_05_rank_with_running_under_start(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-05: rank + a running cumulative with a start is fine (nothing expands)."""
    from test_window_rank_value import ranked

    start = "2024-01-01"
    inr = series("month", start=D(start))
    check(
        eng,
        db,
        MONTH,
        T,
        {"rk": ranked(inr, "rank"), "cum": frame_expected(inr, "sum", None)},
        time_range={"start": start},
    )


def test_win_res_01_two_axes(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-01: window metrics on different time axes (D-TIME ship_date vs the dataset's
    sale_date) in one query -> not_implemented naming both."""
    err = query_error(eng, db, {"metrics": ["mom_value", "ship_mom"], "group_by": MONTH})
    assert err.code == "not_implemented"
    assert sorted(err.metrics) == ["mom_value", "ship_mom"]
    assert "sales.ship_date" in err.message and "sales.sale_date" in err.message


def test_win_qry_01_metric_time_dimension_is_the_axis(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-01: the metric's own D-TIME `time_dimension` is its axis: alone, ship_mom buckets
    and shifts by ship_date (the 2023-12-31 sale ships in January, so February's reference is
    the shipped January total, not the sold one)."""
    base = series("month", rows=SHIPPED)
    rows = check(eng, db, MONTH, T, {"ship_mom": offset_expected(base, 1, "month", "value")})
    feb = keyed(rows, T, "ship_mom")[(ts_("2024-02-01"),)]
    assert feb == series("month", rows=SHIPPED)[(ts_("2024-01-01"),)]
    assert feb != series("month")[(ts_("2024-01-01"),)]


def test_win_qry_04_metric_axis_expansion_and_trim(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-01/04: for a metric whose D-TIME axis is ship_date, a time_range without
    `dimension` bounds ship_date, the lookback loads the pre-range ship month and the output is
    trimmed on that axis."""
    base = series("month", rows=SHIPPED)
    start, end = "2024-01-01", "2024-03-01"
    check(
        eng,
        db,
        MONTH,
        T,
        {"ship_mom": in_range(offset_expected(base, 1, "month", "value"), start, end)},
        time_range={"start": start, "end": end},
    )


def test_win_res_03_window_beside_a_second_fact_dataset(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-03 relaxed (issue 10, as the reference engine answers): a window metric may
    share a query with a metric of another fact dataset; the branches merge, then the window
    stage reads the merged series. Expected values in plain Python from SALES / RETURNS."""
    base = series("month")
    refunds: dict[Key, Any] = {}
    for _, day, _, refund in RETURNS:
        k = (ts(bucket(D(day), "month")),)
        refunds[k] = refunds.get(k, 0) + refund
    keys = set(base) | set(refunds)
    full = {k: base.get(k) for k in keys}
    check(
        eng,
        db,
        MONTH,
        T,
        {
            "mom": offset_expected(full, 1, "month", "percent_change"),
            "refunds": {k: refunds.get(k) for k in keys},
        },
    )
    start, end = "2024-01-01", "2024-04-01"
    check(
        eng,
        db,
        MONTH,
        T,
        {
            "mom": in_range(offset_expected(full, 1, "month", "percent_change"), start, end),
            "refunds": in_range({k: refunds.get(k) for k in keys}, start, end),
        },
        time_range={"start": start, "end": end},
    )
