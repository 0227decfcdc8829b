"""D-WINDOW frame family and the `rolling` / `cumulative` sugars, executed on DuckDB
(WIN-ENUM-07..11, WIN-FRM-*, WIN-ROL-*, WIN-CUM-*, WIN-MOD-*, WIN-19-01). Expected values are
computed in plain Python from `wm_common.SALES`."""

from __future__ import annotations

from typing import Any

import pytest
from wm_common import (
    CNT,
    Key,
    agg,
    assert_series,
    bucket,
    check,
    close,
    frame_expected,
    key_date,
    keyed,
    make_engine,
    query_error,
    run,
    series,
    ts,
)

import dosi


def cumulative(fn: str, reset: str | None = None) -> dict[str, Any]:
    w: dict[str, Any] = {"type": "cumulative", "function": fn}
    if reset:
        w["reset"] = reset
    return w


def frame(**kw: Any) -> dict[str, Any]:
    return {"frame": kw}


WINDOWS = {
    "roll3": {"type": "rolling", "function": "sum", "periods": 3},
    "roll3_full": {"type": "rolling", "function": "sum", "periods": 3, "require_full_window": True},
    "roll2_avg": {"type": "rolling", "function": "avg", "periods": 2},
    "roll3_count": {"type": "rolling", "function": "count", "periods": 3},
    "roll3_min": {"type": "rolling", "function": "min", "periods": 3},
    "roll3_max": {"type": "rolling", "function": "max", "periods": 3},
    "roll1": {"type": "rolling", "function": "sum", "periods": 1},
    "roll1_full": {"type": "rolling", "function": "avg", "periods": 1, "require_full_window": True},
    "cum": cumulative("sum"),
    "cum_max": cumulative("max"),
    "cum_avg": cumulative("avg"),
    "cum_count": cumulative("count"),
    "wtd": cumulative("sum", "week"),
    "mtd": cumulative("sum", "month"),
    "qtd": cumulative("sum", "quarter"),
    "ytd": cumulative("sum", "year"),
    "gen_cum": frame(function="sum", preceding="unbounded"),
    "gen_p2": frame(function="sum", preceding=2),
    "gen_p0": frame(function="max", preceding=0),
    "gen_p1_full": frame(function="sum", preceding=1, require_full_window=True),
    "gen_p2_reset_year": frame(function="sum", preceding=2, reset="year"),
    "gen_ytd": frame(function="sum", preceding="unbounded", reset="year"),
    "cum_desc": frame(
        function="sum", preceding="unbounded", order={"by": "time", "direction": "desc"}
    ),
    "roll2_desc": frame(function="sum", preceding=1, order={"by": "time", "direction": "desc"}),
    "cum_none": frame(function="sum", preceding="unbounded", partition={"mode": "none"}),
    "cum_except": frame(
        function="sum",
        preceding="unbounded",
        partition={"mode": "query_dimensions_except", "exclude": ["sales.region"]},
    ),
    "cum_qd": frame(function="sum", preceding="unbounded", partition={"mode": "query_dimensions"}),
    "byval": frame(function="sum", preceding="unbounded", order={"by": "value"}),
    "byval_none": frame(
        function="sum", preceding="unbounded", order={"by": "value"}, partition={"mode": "none"}
    ),
    "byval_asc_none": frame(
        function="sum",
        preceding="unbounded",
        order={"by": "value", "direction": "asc"},
        partition={"mode": "none"},
    ),
    "byval_range": frame(
        function="sum",
        preceding="unbounded",
        units="range",
        order={"by": "value", "direction": "asc"},
        partition={"mode": "none"},
    ),
    "byval_range_count": frame(
        function="count",
        preceding="unbounded",
        units="range",
        order={"by": "value"},
        partition={"mode": "none"},
    ),
    "byval_range_tb": frame(
        function="sum",
        preceding="unbounded",
        units="range",
        order={"by": "value"},
        partition={"mode": "time_bucket"},
    ),
    "scope_qd": frame(function="sum", scope="partition"),
    "scope_none": frame(function="sum", scope="partition", partition={"mode": "none"}),
    "scope_tb": frame(function="sum", scope="partition", partition={"mode": "time_bucket"}),
    "scope_count_none": frame(function="count", scope="partition", partition={"mode": "none"}),
    "scope_except": frame(
        function="max",
        scope="partition",
        partition={"mode": "query_dimensions_except", "exclude": ["sales.region"]},
    ),
    "sd_pop": frame(function="stddev_pop", preceding=2),
    "sd_samp": frame(function="stddev_samp", preceding=2),
    "var_pop": frame(function="var_pop", preceding="unbounded"),
    "var_samp": frame(function="var_samp", preceding=3),
    "corr3": frame(function="corr", preceding=3, second="cnt"),
    "covp": frame(function="covar_pop", preceding="unbounded", second="cnt"),
    "covs": frame(function="covar_samp", preceding=2, second="cnt"),
    "cnt_roll2": (CNT, {"type": "rolling", "function": "sum", "periods": 2}),
}

MONTH = ["metric_time:month"]
REGION_MONTH = ["sales.region", "metric_time:month"]
T = ("metric_time__month",)
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


def both() -> list[tuple[tuple[str, ...], tuple[str, ...], list[str]]]:
    return [((), T, MONTH), (("region",), RT, REGION_MONTH)]


# -- rolling -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_rol_02_rolling_functions(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-ROL-01/02 / WIN-ENUM-07/08 / WIN-FRM-15: `periods: N` = ROWS N-1 PRECEDING over the
    previous existing buckets (no densification across gaps: 2023-11 spans 2023-10 and 2023-06);
    count counts frame rows; the NULL region is its own partition; an all-NULL bucket
    (west 2023-06) is ignored by sum/avg/min/max but counted by count."""
    base = series("month", dims)
    check(
        eng,
        db,
        grp,
        keys,
        {
            "roll3": frame_expected(base, "sum", 2),
            "roll2_avg": frame_expected(base, "avg", 1),
            "roll3_count": frame_expected(base, "count", 2),
            "roll3_min": frame_expected(base, "min", 2),
            "roll3_max": frame_expected(base, "max", 2),
            "gen_p2": frame_expected(base, "sum", 2),
        },
    )


def test_win_frm_15_rolling_spans_existing_rows_hand_checked(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-15: 2024-06 follows the 2024-05 gap: its 3-row frame is 2024-03, 2024-04, 2024-06
    (= 180 + 320 + 60 for the totals); east 2024-03 spans 2023-12, 2024-01 and 2024-03."""
    tot = keyed(run(eng, db, ["roll3"], MONTH), T, "roll3")
    assert tot[(ts_("2024-06-01"),)] == 180 + 320 + 60
    reg = keyed(run(eng, db, ["roll3"], REGION_MONTH), RT, "roll3")
    assert reg[("east", ts_("2024-03-01"))] == 200 + 150 + 150


def ts_(day: str) -> str:
    return day


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_rol_02_periods_one_is_identity(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-ROL-02: `periods: 1` (and `preceding: 0`) is the identity frame; with
    require_full_window it is still never partial."""
    base = series("month", dims)
    check(eng, db, grp, keys, {"roll1": base, "gen_p0": base, "roll1_full": base})


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_rol_03_require_full_window(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-ROL-03 / WIN-FRM-06: buckets whose frame holds fewer than `preceding + 1` rows are
    NULL (the first N-1 rows of every partition, including the NULL-region partition)."""
    base = series("month", dims)
    rows = check(
        eng,
        db,
        grp,
        keys,
        {
            "roll3_full": frame_expected(base, "sum", 2, require_full=True),
            "gen_p1_full": frame_expected(base, "sum", 1, require_full=True),
        },
    )
    if dims:
        got = keyed(rows, keys, "roll3_full")
        assert got[(None, ts_("2023-12-01"))] is None  # the NULL partition has only 3 rows
        assert got[(None, ts_("2024-03-01"))] is not None


def test_win_enum_11_metric_series_semantics_count_base(eng: dosi.Engine, db: str) -> None:
    """WIN-ENUM-11: the frame re-aggregates the per-bucket metric values (a rolling sum of a
    COUNT is the sum of the per-bucket counts)."""
    base = series("month", ("region",), measure="count")
    check(eng, db, REGION_MONTH, RT, {"cnt_roll2": frame_expected(base, "sum", 1)})


# -- cumulative ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_cum_02_running_functions(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-CUM-01/02: cumulative without reset runs from the partition start (sum, max, avg,
    count); the sugar equals the general `preceding: "unbounded"` form."""
    base = series("month", dims)
    rows = check(
        eng,
        db,
        grp,
        keys,
        {
            "cum": frame_expected(base, "sum", None),
            "cum_max": frame_expected(base, "max", None),
            "cum_avg": frame_expected(base, "avg", None),
            "cum_count": frame_expected(base, "count", None),
            "gen_cum": frame_expected(base, "sum", None),
        },
    )
    assert all(r["cum"] == r["gen_cum"] for r in rows)


@pytest.mark.parametrize(
    "grain,metric,reset",
    [
        ("day", "wtd", "week"),
        ("day", "mtd", "month"),
        ("week", "mtd", "month"),
        ("week", "qtd", "quarter"),
        ("month", "qtd", "quarter"),
        ("month", "ytd", "year"),
        ("quarter", "ytd", "year"),
        ("week", "ytd", "year"),
    ],
)
def test_win_cum_reset_period_to_date(
    eng: dosi.Engine, db: str, grain: str, metric: str, reset: str
) -> None:
    """WIN-FRM-04/05/17 / WIN-CUM-02: a reset restarts accumulation at each boundary of its
    granularity (the reset bucket joins the partition), per region and in total; week buckets
    straddling a month/year boundary belong to the period their week start falls in."""
    for dims in ((), ("region",)):
        base = series(grain, dims)
        keys = (*dims, f"metric_time__{grain}")
        grp = [f"sales.{d}" for d in dims] + [f"metric_time:{grain}"]
        check(eng, db, grp, keys, {metric: frame_expected(base, "sum", None, reset=reset)})


def test_win_cum_ytd_hand_checked(eng: dosi.Engine, db: str) -> None:
    """WIN-CUM-02: YTD restarts in January across the year boundary (totals)."""
    got = keyed(run(eng, db, ["ytd", "gen_ytd"], MONTH), T, "ytd")
    m = series("month")
    assert got[(ts_("2023-12-01"),)] == sum(
        v for k, v in m.items() if k[0].startswith("2023") and v is not None
    )
    assert got[(ts_("2024-01-01"),)] == m[(ts_("2024-01-01"),)]
    assert got[(ts_("2024-03-01"),)] == sum(m[(ts_(f"2024-0{i}-01"),)] for i in (1, 2, 3))


@pytest.mark.parametrize(
    "grain,metric", [("week", "wtd"), ("month", "mtd"), ("quarter", "qtd"), ("year", "ytd")]
)
def test_win_qry_03_reset_equal_to_grain_is_identity(
    eng: dosi.Engine, db: str, grain: str, metric: str
) -> None:
    """WIN-QRY-03: a reset equal to the query grain is allowed and is the identity."""
    base = series(grain, ("region",))
    check(
        eng,
        db,
        ["sales.region", f"metric_time:{grain}"],
        ("region", f"metric_time__{grain}"),
        {metric: base, "revenue": base},
    )


@pytest.mark.parametrize(
    "grain,metric",
    [("month", "wtd"), ("quarter", "mtd"), ("year", "qtd"), ("year", "mtd"), ("quarter", "wtd")],
)
def test_win_qry_03_reset_finer_than_grain(
    eng: dosi.Engine, db: str, grain: str, metric: str
) -> None:
    """WIN-QRY-03: a reset finer than the queried grain -> `window_reset_too_fine`."""
    err = query_error(eng, db, {"metrics": [metric], "group_by": [f"metric_time:{grain}"]})
    assert err.code == "window_reset_too_fine"
    assert err.metrics == [metric]
    assert grain in (err.hint or "")


def test_win_frm_05_numeric_preceding_clipped_at_reset(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-05: a numeric `preceding` with `reset` is clipped at the boundary (2024-01 holds
    only itself, 2024-02 two rows, 2024-04 the 3 rows 2024-02..04)."""
    for dims, keys, grp in both():
        base = series("month", dims)
        check(
            eng, db, grp, keys, {"gen_p2_reset_year": frame_expected(base, "sum", 2, reset="year")}
        )
    got = keyed(run(eng, db, ["gen_p2_reset_year"], MONTH), T, "gen_p2_reset_year")
    m = series("month")
    assert got[(ts_("2024-01-01"),)] == m[(ts_("2024-01-01"),)]
    assert got[(ts_("2024-04-01"),)] == sum(m[(ts_(f"2024-0{i}-01"),)] for i in (2, 3, 4))


def test_win_car_05_recompute_at_quarter_grain(eng: dosi.Engine, db: str) -> None:
    """WIN-CAR-05: at quarter grain the frame runs over the quarterly base (re-aggregated from
    source rows), never over sums of monthly window outputs."""
    q = series("quarter", ("region",))
    rows = check(
        eng,
        db,
        ["sales.region", "metric_time:quarter"],
        ("region", "metric_time__quarter"),
        {
            "revenue": q,
            "roll3": frame_expected(q, "sum", 2),
            "cum_avg": frame_expected(q, "avg", None),
            "ytd": frame_expected(q, "sum", None, reset="year"),
        },
    )
    monthly = keyed(run(eng, db, ["roll3"], REGION_MONTH), RT, "roll3")
    summed: dict[Key, float] = {}
    for (region, month), v in monthly.items():
        k = (region, ts(bucket(key_date((month,)), "quarter")))
        summed[k] = summed.get(k, 0) + (v or 0)
    got = keyed(rows, ("region", "metric_time__quarter"), "roll3")
    assert any(not close(got[k], summed[k]) for k in got)


# -- order / partition modifiers -----------------------------------------------------------------


def test_win_mod_01_time_desc_order(eng: dosi.Engine, db: str) -> None:
    """WIN-MOD-01 / WIN-FRM-10: `order: {by: time, direction: desc}` accumulates from the latest
    bucket backwards (east 2022-12 holds the region's grand total)."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "cum_desc": frame_expected(base, "sum", None, order_desc=True),
            "roll2_desc": frame_expected(base, "sum", 1, order_desc=True),
        },
    )
    got = keyed(rows, RT, "cum_desc")
    assert got[("east", ts_("2022-12-01"))] == sum(
        v for k, v in base.items() if k[0] == "east" and v is not None
    )


def test_win_frm_11_partition_modes_time_ordered(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-11 / WIN-MOD-02/05: the default (and explicit `query_dimensions`) partition is
    every non-time dim; `none` and `query_dimensions_except [region]` run one series over all
    regions in time order. Rows of one bucket are time-order peers without a tie-breaker, so for
    those the checkable invariant is: the largest value in a bucket (amounts per bucket are
    >= 0) is the running total through that bucket, the smallest is above the total before it."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "cum": frame_expected(base, "sum", None),
            "cum_qd": frame_expected(base, "sum", None),
        },
    )
    total = series("month")
    running = frame_expected(total, "sum", None)
    months = sorted(total, key=key_date)
    for metric in ("cum_none", "cum_except"):
        got = run(eng, db, [metric], REGION_MONTH)
        assert len(got) == len(rows)
        for i, (m,) in enumerate(months):
            vals = [r[metric] for r in got if r["metric_time__month"] == m]
            before = running[months[i - 1]] if i else 0
            assert close(max(vals), running[(m,)]), (metric, m)
            assert min(vals) >= before - 1e-9, (metric, m)
    # month only: every partition mode is the same single series
    one = run(eng, db, ["cum", "cum_none", "cum_qd"], MONTH)
    for r in one:
        assert r["cum"] == r["cum_none"] == r["cum_qd"] == running[(r["metric_time__month"],)]


def test_win_mod_exclude_not_grouped(eng: dosi.Engine, db: str) -> None:
    """WIN-MOD-03/04 (reference behaviour: `window_exclude_not_grouped`): an excluded dim the
    query does not group by is rejected, naming it in `missing_dimensions`."""
    err = query_error(eng, db, {"metrics": ["cum_except"], "group_by": MONTH})
    assert err.code == "window_exclude_not_grouped"
    assert err.metrics == ["cum_except"]
    assert err.missing_dimensions == ["sales.region"]
    assert "sales.region" in (err.hint or "")


# -- value-ordered frames ------------------------------------------------------------------------


def value_running(
    values: dict[Key, Any], desc: bool, units_range: bool, fn: str = "sum"
) -> dict[Key, Any]:
    """Running aggregate in value order over one partition; under RANGE tied values are peers."""
    ordered = sorted(values, key=lambda k: values[k], reverse=desc)
    out: dict[Key, Any] = {}
    for k in ordered:
        if units_range:
            frame_keys = [
                x for x in ordered if (values[x] >= values[k] if desc else values[x] <= values[k])
            ]
        else:
            frame_keys = ordered[: ordered.index(k) + 1]
        out[k] = agg(fn, [values[x] for x in frame_keys])
    return out


def test_win_frm_12_value_order_default_partition_is_identity(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-10/21 (reference: value-ordered partitions include the time bucket): with the
    default partition every region x month row is its own partition -> the base value."""
    base = series("month", ("region",))
    base = {k: v for k, v in base.items() if v is not None}
    got = keyed(run(eng, db, ["byval"], REGION_MONTH), RT, "byval")
    for k, v in base.items():
        assert close(got[k], v), k


def test_win_frm_21_value_order_axis_free_by_region(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-21 / WIN-RES-02: value-ordered frames need no time axis. Region totals are
    distinct, so the ROWS running sum in value order is deterministic: desc (default) and asc."""
    base = series(None, ("region",))
    rows = check(
        eng,
        db,
        ["sales.region"],
        ("region",),
        {
            "byval_none": value_running(base, desc=True, units_range=False),
            "byval_asc_none": value_running(base, desc=False, units_range=False),
            "byval_range": value_running(base, desc=False, units_range=True),
        },
    )
    assert len(rows) == 3


def test_win_frm_12_range_units_ties_are_peers(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-12 / WIN-ENUM-08: under `units: range` tied values are peers that aggregate (and
    count) together; region x month has ties (150/150 east, 50/50 west)."""
    base = {k: v for k, v in series("month", ("region",)).items() if v is not None}
    rows = run(
        eng,
        db,
        ["byval_range", "byval_range_count"],
        REGION_MONTH,
        where_sql="sales.amount IS NOT NULL",
    )
    exp_sum = value_running(base, desc=False, units_range=True)
    exp_cnt = value_running(base, desc=True, units_range=True, fn="count")
    assert_series(keyed(rows, RT, "byval_range"), exp_sum, "byval_range")
    assert_series(keyed(rows, RT, "byval_range_count"), exp_cnt, "byval_range_count")
    got = keyed(rows, RT, "byval_range")
    assert got[("east", ts_("2024-01-01"))] == got[("east", ts_("2024-03-01"))]


def test_win_frm_12_rows_value_order_with_ties_multiset(eng: dosi.Engine, db: str) -> None:
    """WIN-FRM-12: under ROWS, tied values are NOT peers: the running sums differ between tied
    rows (which tied row comes first is not defined, so compare the multiset)."""
    base = {k: v for k, v in series("month", ("region",)).items() if v is not None}
    rows = run(eng, db, ["byval_none"], REGION_MONTH, where_sql="sales.amount IS NOT NULL")
    exp = value_running(base, desc=True, units_range=False)
    got = sorted(r["byval_none"] for r in rows)
    assert all(close(a, b) for a, b in zip(got, sorted(exp.values()), strict=True))


def test_win_mod_02_range_time_bucket_partition(eng: dosi.Engine, db: str) -> None:
    """WIN-MOD-02: `time_bucket` makes each month its own population across regions."""
    base = {k: v for k, v in series("month", ("region",)).items() if v is not None}
    exp: dict[Key, Any] = {}
    for m in {k[1] for k in base}:
        exp.update(
            value_running({k: v for k, v in base.items() if k[1] == m}, desc=True, units_range=True)
        )
    rows = run(eng, db, ["byval_range_tb"], REGION_MONTH, where_sql="sales.amount IS NOT NULL")
    assert_series(keyed(rows, RT, "byval_range_tb"), exp, "byval_range_tb")


# -- scope: partition (1.9) --------------------------------------------------------------------


def test_win_19_01_scope_partition(eng: dosi.Engine, db: str) -> None:
    """WIN-19-01: `scope: partition` aggregates the whole partition (no ORDER BY, no frame):
    default partition (all query dims incl. the time bucket) -> the row's own value; `none` ->
    the grand total on every row; `time_bucket` and `query_dimensions_except [region]` -> the
    month's total across regions; count over `none` -> the number of rows."""
    base = series("month", ("region",))
    month_total = series("month")
    grand = sum(v for v in base.values() if v is not None)
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "scope_qd": base,
            "scope_none": dict.fromkeys(base, grand),
            "scope_tb": {k: month_total[(k[1],)] for k in base},
            "scope_count_none": dict.fromkeys(base, len(base)),
            "scope_except": {
                k: max(v for kk, v in base.items() if kk[1] == k[1] and v is not None)
                if any(kk[1] == k[1] and v is not None for kk, v in base.items())
                else None
                for k in base
            },
        },
    )
    assert len(rows) == len(base)


def test_win_19_01_scope_partition_axis_free(eng: dosi.Engine, db: str) -> None:
    """WIN-19-01: a scope frame not partitioned by time bucket needs no time axis."""
    base = series(None, ("region",))
    grand = sum(v for v in base.values() if v is not None)
    check(
        eng,
        db,
        ["sales.region"],
        ("region",),
        {"scope_none": dict.fromkeys(base, grand), "scope_qd": base},
    )


# -- W2 / W3 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_enum_09_w2_statistics(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-ENUM-09: stddev_pop / stddev_samp / var_pop / var_samp over the frame (samp over a
    single row is NULL)."""
    base = series("month", dims)
    check(
        eng,
        db,
        grp,
        keys,
        {
            "sd_pop": frame_expected(base, "stddev_pop", 2),
            "sd_samp": frame_expected(base, "stddev_samp", 2),
            "var_pop": frame_expected(base, "var_pop", None),
            "var_samp": frame_expected(base, "var_samp", 3),
        },
    )


@pytest.mark.parametrize("dims,keys,grp", both())
def test_win_enum_10_w3_two_argument(
    eng: dosi.Engine, db: str, dims: Any, keys: Any, grp: Any
) -> None:
    """WIN-ENUM-10 / WIN-FRM-13: corr / covar_pop / covar_samp pair the metric with the `second`
    series (cnt), which the base stage computes even when `cnt` is not requested."""
    base = series("month", dims)
    cnt = series("month", dims, measure="count")
    rows = check(
        eng,
        db,
        grp,
        keys,
        {
            "corr3": frame_expected(base, "corr", 3, second=cnt),
            "covp": frame_expected(base, "covar_pop", None, second=cnt),
            "covs": frame_expected(base, "covar_samp", 2, second=cnt),
        },
    )
    assert "cnt" not in rows[0]


def test_win_enum_10_corr_argument_order_in_sql(eng: dosi.Engine) -> None:
    """WIN-ENUM-10: rendered `CORR(second, primary)`."""
    sql = eng.compile({"metrics": ["corr3"], "group_by": MONTH})["sql"]
    assert "CORR(c.sales_sale_id_count, c.sales_amount_sum)" in sql


def test_win_frm_14_sql_shape(eng: dosi.Engine) -> None:
    """WIN-FRM-14/16/17: ROWS frame over the base CTE; a reset adds DATE_TRUNC to the partition;
    require_full_window wraps a CASE on the frame's row count."""
    sql = eng.compile({"metrics": ["roll3_full", "ytd"], "group_by": REGION_MONTH})["sql"]
    assert "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW" in sql
    assert "PARTITION BY c.region, DATE_TRUNC('YEAR', c.metric_time__month)" in sql
    assert "CASE WHEN COUNT(*) OVER" in sql and ">= 3" in sql
