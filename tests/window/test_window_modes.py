"""D-WINDOW engine modes and cross-cutting semantics: basic mode, D-FILL never on window
outputs, recompute-on-rollup, axis resolution errors, window SQL in expressions, order/limit
over window outputs (WIN-CAR-*, WIN-QRY-01, DX §5). Expected values are computed in plain
Python from `wm_common.SALES`."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from wm_common import (
    CNT,
    REVENUE,
    Key,
    bucket,
    check,
    frame_expected,
    key_date,
    keyed,
    make_engine,
    model_yaml,
    offset_expected,
    query_error,
    run,
    series,
    ts,
)

import dosi

WINDOWS: dict[str, Any] = {
    "mom": {"type": "pop", "offset": "1 month"},
    "mom_delta": {"type": "pop", "offset": "1 month", "calculation": "delta"},
    "qoq_delta": {"type": "pop", "offset": "1 quarter", "calculation": "delta"},
    "roll3": {"type": "rolling", "function": "sum", "periods": 3},
    "ytd": {"type": "cumulative", "function": "sum", "reset": "year"},
    "rk": {"rank": {"function": "rank"}},
    "fv": {"value": {"function": "first_value"}},
    "cnt_cum": (CNT, {"type": "cumulative", "function": "sum"}),
    "mom_fill": (
        REVENUE,
        {
            "window": {"type": "pop", "offset": "1 month", "calculation": "value"},
            "fill_nulls_with": 0,
        },
    ),
    "roll_fill": (
        REVENUE,
        {
            "window": {
                "type": "rolling",
                "function": "sum",
                "periods": 2,
                "require_full_window": True,
            },
            "fill_nulls_with": -1,
        },
    ),
    "rank_fill": (REVENUE, {"window": {"rank": {"function": "rank"}}, "fill_nulls_with": 0}),
    "rev_fill": (REVENUE, {"fill_nulls_with": 0}),
}

MONTH = ["metric_time:month"]
REGION_MONTH = ["sales.region", "metric_time:month"]
T = ("metric_time__month",)
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


# -- basic mode ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def basic() -> dosi.Engine:
    return make_engine(WINDOWS, mode="basic")


def test_win_car_08_basic_mode_warns_once_per_window_metric(basic: dosi.Engine) -> None:
    """WIN-CAR-08 / DX §5: in basic mode every DATUS-carrying metric gets exactly one
    `ignored_vendor_extension` warning, naming the plain-base-aggregate fallback."""
    warns = [w for w in basic.warnings if w["code"] == "ignored_vendor_extension"]
    paths = [w.get("path") for w in warns]
    for name in WINDOWS:
        assert paths.count(f"metrics[{name}]") == 1, name
    mom = next(w for w in warns if w.get("path") == "metrics[mom]")
    assert "base aggregate" in mom["message"]


@pytest.mark.parametrize("dims", [(), ("region",)])
def test_win_car_08_basic_mode_is_plain_base_aggregate(
    basic: dosi.Engine, db: str, dims: tuple[str, ...]
) -> None:
    """WIN-CAR-08: in basic mode a window metric is its plain base aggregate (no axis needed,
    no derivation, no NULLs where the datus engine would have none) — identical to `revenue`."""
    grp = [f"sales.{d}" for d in dims] + ["sales.sale_date:month"]
    base = series("month", dims)
    keys = (*dims, "sale_date__month")
    names = ["revenue", "mom", "mom_delta", "roll3", "ytd", "rk", "fv"]
    check(basic, db, grp, keys, dict.fromkeys(names, base))
    reg = series(None, ("region",))
    check(
        basic,
        db,
        ["sales.region"],
        ("region",),
        {"mom": reg, "rk": reg, "cnt_cum": series(None, ("region",), measure="count")},
    )


def test_win_car_08_datus_mode_differs(eng: dosi.Engine, db: str) -> None:
    """Control for the basic-mode test: in datus mode the same metric derives (and needs the
    axis)."""
    err = query_error(eng, db, {"metrics": ["mom"], "group_by": ["sales.region"]})
    assert err.code == "time_axis_not_grouped"


# -- D-FILL ------------------------------------------------------------------------------------


def test_win_fill_never_applies_to_window_outputs(eng: dosi.Engine, db: str) -> None:
    """DX §3 D-WINDOW / WM Calculation: `fill_nulls_with` beside `window` leaves the NULL
    ("no comparable prior period"), while a plain metric's fill still applies in the same query
    (the all-NULL bucket west 2023-06 reads 0)."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "mom_fill": offset_expected(base, 1, "month", "value"),
            "roll_fill": frame_expected(base, "sum", 1, require_full=True),
            "rev_fill": {k: 0 if v is None else v for k, v in base.items()},
            "revenue": base,
        },
    )
    got = keyed(rows, RT, "mom_fill")
    assert got[("east", "2022-12-01")] is None
    assert keyed(rows, RT, "rev_fill")[("west", "2023-06-01")] == 0
    sql = eng.compile({"metrics": ["mom_fill", "roll_fill"], "group_by": REGION_MONTH})["sql"]
    assert "COALESCE" not in sql


def test_win_fill_rank_on_null_value_not_filled(eng: dosi.Engine, db: str) -> None:
    """D-FILL does not fill the base of a window either: the NULL bucket ranks as NULL (last),
    not as 0."""
    base = series("month", ("region",))
    got = keyed(run(eng, db, ["rank_fill", "rk"], REGION_MONTH), RT, "rank_fill")
    assert got[("west", "2023-06-01")] == len(base)


# -- recompute ---------------------------------------------------------------------------------


def test_win_car_05_offset_recomputes_at_quarter(eng: dosi.Engine, db: str) -> None:
    """WIN-CAR-05: a 1-quarter delta at quarter grain compares quarterly base totals; it is not
    the sum of the monthly window outputs."""
    q = series("quarter", ("region",))
    keys = ("region", "metric_time__quarter")
    rows = check(
        eng,
        db,
        ["sales.region", "metric_time:quarter"],
        keys,
        {"qoq_delta": offset_expected(q, 1, "quarter", "delta")},
    )
    monthly = keyed(run(eng, db, ["qoq_delta"], REGION_MONTH), RT, "qoq_delta")
    summed: dict[Key, Any] = {}
    for (region, m), v in monthly.items():
        k = (region, ts(bucket(key_date((m,)), "quarter")))
        summed[k] = (summed.get(k) or 0) + (v or 0)
    got = keyed(rows, keys, "qoq_delta")
    assert any(got[k] != summed[k] for k in got)


def test_win_car_05_dropping_a_dimension_recomputes(eng: dosi.Engine, db: str) -> None:
    """WIN-CAR-05: without region the window runs over the monthly totals (the NULL region's
    rows now count), never over summed per-region outputs."""
    tot = series("month")
    rows = check(
        eng,
        db,
        MONTH,
        T,
        {
            "mom_delta": offset_expected(tot, 1, "month", "delta"),
            "roll3": frame_expected(tot, "sum", 2),
            "ytd": frame_expected(tot, "sum", None, reset="year"),
        },
    )
    per_region = keyed(run(eng, db, ["mom_delta"], REGION_MONTH), RT, "mom_delta")
    jan = "2024-01-01"
    summed = sum(v for (r, m), v in per_region.items() if m == jan and v is not None)
    assert keyed(rows, T, "mom_delta")[(jan,)] != summed


def test_win_car_05_year_grain_recompute(eng: dosi.Engine, db: str) -> None:
    """WIN-CAR-05: at year grain the running count re-aggregates COUNT(sale_id) per year."""
    y = series("year", measure="count")
    check(
        eng,
        db,
        ["metric_time:year"],
        ("metric_time__year",),
        {"cnt_cum": frame_expected(y, "sum", None), "cnt": y},
    )


def test_win_mixed_base_measures_in_one_stage(eng: dosi.Engine, db: str) -> None:
    """WIN-RES-07: window metrics over different base measures (SUM and COUNT) share one stage."""
    base = series("month", ("region",))
    cnt = series("month", ("region",), measure="count")
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "mom": offset_expected(base, 1, "month", "percent_change"),
            "cnt_cum": frame_expected(cnt, "sum", None),
            "roll3": frame_expected(base, "sum", 2),
            "cnt": cnt,
        },
    )


def test_win_order_by_and_limit_apply_after_trim(eng: dosi.Engine, db: str) -> None:
    """order_by on a window output and limit apply to the trimmed rows (NULLs last)."""
    start = "2024-01-01"
    base = series("month")
    exp = {
        k: v
        for k, v in offset_expected(base, 1, "month", "percent_change").items()
        if k[0][:10] >= start
    }
    best = sorted((v for v in exp.values() if v is not None), reverse=True)[:2]
    rows = run(
        eng,
        db,
        ["mom"],
        MONTH,
        time_range={"start": start},
        order_by=[{"key": "mom", "desc": True}],
        limit=2,
    )
    assert [r["mom"] for r in rows] == pytest.approx(best)


# -- axis resolution / model validation --------------------------------------------------------


def test_win_qry_01_no_primary_time_dimension(db: str) -> None:
    """WIN-QRY-01: two time-typed fields and no D-TIME -> `no_primary_time_dimension` at query
    time (the model itself compiles), naming the metric and the time fields."""
    e = make_engine({"mom": {"type": "pop", "offset": "1 month"}}, primary_time=False)
    for grp in (["metric_time:month"], ["sales.sale_date:month"], []):
        err = query_error(e, db, {"metrics": ["mom"], "group_by": grp})
        assert err.code == "no_primary_time_dimension"
        assert err.metrics == ["mom"]
        assert set(err.candidates) == {"sales.sale_date", "sales.ship_date"}


def test_win_qry_01_rank_needs_no_axis_without_primary_time(db: str) -> None:
    """WIN-RNK-08: an axis-free (value-ordered) rank runs even where no time axis resolves."""
    e = make_engine({"rk": {"rank": {"function": "rank"}}}, primary_time=False)
    reg = series(None, ("region",))
    order = sorted(reg.values(), reverse=True)
    check(
        e,
        db,
        ["sales.region"],
        ("region",),
        {"rk": {k: order.index(v) + 1 for k, v in reg.items()}},
    )


@pytest.mark.parametrize(
    "expr",
    [
        "SUM(SUM(sales.amount)) OVER ()",
        "SUM(sales.amount) OVER (PARTITION BY sales.region)",
        "LAG(SUM(sales.amount)) OVER (ORDER BY 1)",
    ],
)
def test_win_car_04_raw_window_sql_rejected(expr: str) -> None:
    """WIN-CAR-04: raw window SQL in a metric expression -> `window_in_metric`."""
    doc = yaml.safe_load(model_yaml({}))
    doc["semantic_model"][0]["metrics"].append(
        {"name": "raw", "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr}]}}
    )
    with pytest.raises(dosi.ModelError) as info:
        dosi.Engine(model_text=yaml.safe_dump(doc))
    assert "window_in_metric" in {d.code for d in info.value.issues}


def test_win_car_03_window_on_ratio_metric_rejected() -> None:
    """WIN-CAR-03: a window on a ratio metric without `window.base` -> invalid_datus_extension."""
    text = model_yaml(
        {"bad": ("SUM(sales.amount) / COUNT(sales.sale_id)", {"type": "pop", "offset": "1 month"})}
    )
    with pytest.raises(dosi.ModelError) as info:
        dosi.Engine(model_text=text)
    assert "invalid_datus_extension" in {d.code for d in info.value.issues}
