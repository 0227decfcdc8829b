"""D-WINDOW offset family and the `pop` sugar, executed on DuckDB (WIN-ENUM-02..06, WIN-OFF-*,
WIN-POP-*). Expected values are computed in plain Python from `wm_common.SALES`."""

from __future__ import annotations

import pytest
from wm_common import (
    CNT,
    assert_series,
    check,
    key_date,
    keyed,
    make_engine,
    offset_expected,
    query_error,
    run,
    series,
    shift,
    ts,
)

import dosi

WINDOWS = {
    "mom": {"type": "pop", "offset": "1 month"},
    "mom_delta": {"type": "pop", "offset": "1 month", "calculation": "delta"},
    "mom_value": {"type": "pop", "offset": "1 month", "calculation": "value"},
    "mom_ratio": {"type": "pop", "offset": "1 month", "calculation": "ratio"},
    "gen_pct": {"offset": {"count": 1, "granularity": "month"}, "calculation": "percent_change"},
    "gen_obj_pop": {"type": "pop", "offset": {"count": 1, "granularity": "month"}},
    "two_m": {"type": "pop", "offset": "2 months", "calculation": "value"},
    "yoy_value": {"type": "pop", "offset": "1 year", "calculation": "value"},
    "yoy_pct": {"type": "pop", "offset": "1 year"},
    "yoy_delta": {"type": "pop", "offset": "1 year", "calculation": "delta"},
    "m12_value": {
        "type": "pop",
        "offset": {"count": 12, "granularity": "month"},
        "calculation": "value",
    },
    "qoq_value": {"type": "pop", "offset": "1 quarter", "calculation": "value"},
    "wow_value": {"type": "pop", "offset": "1 week", "calculation": "value"},
    "d7_value": {"type": "pop", "offset": "7 days", "calculation": "value"},
    "dod_value": {"type": "pop", "offset": "1 day", "calculation": "value"},
    "m3_value": {
        "type": "pop",
        "offset": {"count": 3, "granularity": "month"},
        "calculation": "value",
    },
    "w2_value": {"type": "pop", "offset": "2 weeks", "calculation": "value"},
    "d14_value": {"type": "pop", "offset": "14 days", "calculation": "value"},
    "q4_value": {"type": "pop", "offset": "4 quarters", "calculation": "value"},
    "fwd_value": {
        "offset": {"count": 1, "granularity": "month", "direction": "forward"},
        "calculation": "value",
    },
    "fwd_delta": {
        "offset": {"count": 1, "granularity": "month", "direction": "forward"},
        "calculation": "delta",
    },
    "fwd_yoy": {
        "offset": {"count": 1, "granularity": "year", "direction": "forward"},
        "calculation": "ratio",
    },
    "cnt_mom_delta": (CNT, {"type": "pop", "offset": "1 month", "calculation": "delta"}),
}

MONTH = ["metric_time:month"]
REGION_MONTH = ["sales.region", "metric_time:month"]
T = ("metric_time__month",)
RT = ("region", "metric_time__month")


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


def test_win_enum_02_to_05_pop_calculations_total_by_month(eng: dosi.Engine, db: str) -> None:
    """WIN-ENUM-02..05 / WIN-OFF-06: value, delta, percent_change (pop default), ratio over the
    monthly totals; calendar gaps give NULL (never "the previous existing row"); the
    2023-12 -> 2024-01 year boundary compares normally."""
    base = series("month")
    check(
        eng,
        db,
        MONTH,
        T,
        {
            "revenue": base,
            "mom": offset_expected(base, 1, "month", "percent_change"),
            "mom_delta": offset_expected(base, 1, "month", "delta"),
            "mom_value": offset_expected(base, 1, "month", "value"),
            "mom_ratio": offset_expected(base, 1, "month", "ratio"),
        },
    )


def test_win_off_06_gap_is_null_not_previous_row(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-06: 2024-06 follows the missing 2024-05 -> NULL, although 2024-04 exists; no
    densified 2024-05 row is emitted; the year boundary 2024-01 reads 2023-12."""
    got = keyed(run(eng, db, ["mom_value"], MONTH), T, "mom_value")
    assert got[(ts_("2024-06-01"),)] is None
    assert (ts_("2024-05-01"),) not in got
    assert got[(ts_("2024-01-01"),)] == series("month")[(ts_("2023-12-01"),)]


def ts_(day: str) -> str:
    return day


def test_win_mod_05_offsets_partition_by_region_with_null_region(eng: dosi.Engine, db: str) -> None:
    """WIN-MOD-05 / WIN-OFF-09: every non-time dim is a join key; a NULL region never matches
    (plain `=`), even though NULL has data in 2023-12 and 2024-01; per-region gaps give NULL."""
    base = series("month", ("region",))
    rows = check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "mom": offset_expected(base, 1, "month", "percent_change"),
            "mom_delta": offset_expected(base, 1, "month", "delta"),
            "mom_value": offset_expected(base, 1, "month", "value"),
            "mom_ratio": offset_expected(base, 1, "month", "ratio"),
        },
    )
    by = keyed(rows, RT, "mom_value")
    assert by[(None, ts_("2024-01-01"))] is None  # NULL 2023-12 = 10 exists but never matches
    assert by[("east", ts_("2024-03-01"))] is None  # east has no 2024-02 (gap), not 150
    assert by[("east", ts_("2024-01-01"))] == 200


def test_win_enum_06_zero_denominator_is_null(eng: dosi.Engine, db: str) -> None:
    """WIN-ENUM-04/05/06: west 2023-10 sums to 0 -> percent_change and ratio are NULL for west
    2023-11 while delta and value are defined; division is non-integer."""
    rows = run(eng, db, ["mom", "mom_ratio", "mom_delta", "mom_value"], REGION_MONTH)
    row = next(
        r for r in rows if r["region"] == "west" and r["metric_time__month"] == ts_("2023-11-01")
    )
    assert row["mom"] is None and row["mom_ratio"] is None
    assert row["mom_delta"] == 50 and row["mom_value"] == 0
    ratios = [r["mom_ratio"] for r in rows if r["mom_ratio"] is not None]
    assert ratios and all(isinstance(x, float) for x in ratios)
    jan = next(
        r for r in rows if r["region"] == "east" and r["metric_time__month"] == ts_("2024-01-01")
    )
    assert jan["mom_ratio"] == pytest.approx(150 / 200)  # 0.75, not integer division 0


def test_win_pop_04_sugar_equals_general_form(eng: dosi.Engine, db: str) -> None:
    """WIN-POP-01/04 / WIN-OFF-01: `{type: pop, offset: "1 month"}` == the general form with
    calculation percent_change == pop with the object offset."""
    rows = run(eng, db, ["mom", "gen_pct", "gen_obj_pop"], REGION_MONTH)
    for r in rows:
        assert r["mom"] == r["gen_pct"] == r["gen_obj_pop"]
    assert any(r["mom"] is not None for r in rows)


def test_win_off_07_yoy_over_months_equals_12_months(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-07: a 1-year offset over monthly buckets lands on the prior-year month, and equals
    `{count: 12, granularity: month}`."""
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        base = series("month", dims)
        rows = check(
            eng,
            db,
            grp,
            keys,
            {
                "yoy_value": offset_expected(base, 1, "year", "value"),
                "m12_value": offset_expected(base, 12, "month", "value"),
                "yoy_pct": offset_expected(base, 1, "year", "percent_change"),
                "yoy_delta": offset_expected(base, 1, "year", "delta"),
            },
        )
        assert all(r["yoy_value"] == r["m12_value"] for r in rows)
        assert sum(r["yoy_value"] is not None for r in rows) >= 3


def test_win_off_07_yoy_values_hand_checked(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-07: east 2024-01 (150) vs 2023-01 (70); east 2024-03 (150) vs 2023-03 (90)."""
    got = keyed(run(eng, db, ["yoy_delta"], REGION_MONTH), RT, "yoy_delta")
    assert got[("east", ts_("2024-01-01"))] == 80
    assert got[("east", ts_("2024-03-01"))] == 60
    assert got[("west", ts_("2024-04-01"))] == -20


@pytest.mark.parametrize("grain", ["quarter", "year"])
def test_win_off_07_yoy_at_coarser_grains(eng: dosi.Engine, db: str, grain: str) -> None:
    """WIN-OFF-07 / WIN-CAR-05: a 1-year offset at quarter and year grain recomputes the base at
    that grain and shifts by one year."""
    base = series(grain)
    key = (f"metric_time__{grain}",)
    check(
        eng,
        db,
        [f"metric_time:{grain}"],
        key,
        {
            "revenue": base,
            "yoy_value": offset_expected(base, 1, "year", "value"),
            "yoy_pct": offset_expected(base, 1, "year", "percent_change"),
        },
    )


def test_win_off_multi_month_count(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-02/06 / WIN-POP-02: `"2 months"` (plural) shifts exactly two calendar months."""
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        base = series("month", dims)
        check(eng, db, grp, keys, {"two_m": offset_expected(base, 2, "month", "value")})


@pytest.mark.parametrize("grain", ["month", "quarter"])
def test_win_off_quarter_offset(eng: dosi.Engine, db: str, grain: str) -> None:
    """WIN-OFF-03/07: a 1-quarter offset at month grain (three months back) and at quarter grain
    (the previous quarter)."""
    base = series(grain, ("region",))
    check(
        eng,
        db,
        ["sales.region", f"metric_time:{grain}"],
        ("region", f"metric_time__{grain}"),
        {"qoq_value": offset_expected(base, 1, "quarter", "value")},
    )


def test_win_off_04_forward_offset(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-04 (LEAD semantics): the reference is the NEXT calendar bucket; 2024-04 reads the
    missing 2024-05 -> NULL; the last bucket -> NULL."""
    for dims, keys, grp in (((), T, MONTH), (("region",), RT, REGION_MONTH)):
        base = series("month", dims)
        check(
            eng,
            db,
            grp,
            keys,
            {
                "fwd_value": offset_expected(base, 1, "month", "value", "forward"),
                "fwd_delta": offset_expected(base, 1, "month", "delta", "forward"),
                "fwd_yoy": offset_expected(base, 1, "year", "ratio", "forward"),
            },
        )
    got = keyed(run(eng, db, ["fwd_value"], MONTH), T, "fwd_value")
    assert got[(ts_("2023-12-01"),)] == series("month")[(ts_("2024-01-01"),)]
    assert got[(ts_("2024-04-01"),)] is None
    assert got[(ts_("2024-06-01"),)] is None


@pytest.mark.parametrize("grain", ["day", "week"])
def test_win_off_week_offsets(eng: dosi.Engine, db: str, grain: str) -> None:
    """WIN-ENUM-01 / WIN-POP-02: `"1 week"` and `"7 days"` shift by seven days; week buckets
    start on ISO Monday (the 2023-12-25 week holds 2023-12-31, the 2024-01-01 week holds
    2024-01-01 and 2024-01-02)."""
    base = series(grain, ("region",))
    exp = offset_expected(base, 1, "week", "value")
    rows = check(
        eng,
        db,
        ["sales.region", f"metric_time:{grain}"],
        ("region", f"metric_time__{grain}"),
        {"revenue": base, "wow_value": exp, "d7_value": exp},
    )
    if grain == "week":
        weeks = {r["metric_time__week"] for r in rows}
        assert ts_("2023-12-25") in weeks and ts_("2024-01-01") in weeks


def test_win_off_day_offset_at_day_grain(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-06: a 1-day offset at day grain: 2024-01-01 reads 2023-12-31 (year boundary);
    a 1-year offset from the leap day 2024-02-29 lands on 2023-02-28 (end-of-month clamp)."""
    base = series("day")
    rows = check(
        eng,
        db,
        ["metric_time:day"],
        ("metric_time__day",),
        {
            "dod_value": offset_expected(base, 1, "day", "value"),
            "yoy_value": offset_expected(base, 1, "year", "value"),
            "fwd_yoy": offset_expected(base, 1, "year", "ratio", "forward"),
        },
    )
    got = keyed(rows, ("metric_time__day",), "dod_value")
    assert got[(ts_("2024-01-01"),)] == 10
    assert got[(ts_("2024-01-02"),)] == 25
    assert keyed(rows, ("metric_time__day",), "yoy_value")[(ts_("2024-02-29"),)] == 11


def test_win_off_11_mixed_shifts_in_one_query(eng: dosi.Engine, db: str) -> None:
    """WIN-OFF-11 / WIN-RES-07: back, forward and coarser shifts in one query (one self-join per
    distinct shift) give the same values as computed separately."""
    base = series("month", ("region",))
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {
            "revenue": base,
            "mom": offset_expected(base, 1, "month", "percent_change"),
            "two_m": offset_expected(base, 2, "month", "value"),
            "yoy_value": offset_expected(base, 1, "year", "value"),
            "fwd_value": offset_expected(base, 1, "month", "value", "forward"),
            "qoq_value": offset_expected(base, 1, "quarter", "value"),
        },
    )


def test_win_off_count_base(eng: dosi.Engine, db: str) -> None:
    """WIN-CAR-02: the base may be any plain aggregate, e.g. COUNT(sale_id)."""
    base = series("month", ("region",), measure="count")
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {"cnt": base, "cnt_mom_delta": offset_expected(base, 1, "month", "delta")},
    )


def test_win_qry_02_concrete_axis_field(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-02: the axis may be grouped as the concrete field `sales.sale_date:month`."""
    base = series("month")
    check(
        eng,
        db,
        ["sales.sale_date:month"],
        ("sale_date__month",),
        {"mom_delta": offset_expected(base, 1, "month", "delta")},
    )


@pytest.mark.parametrize(
    "group_by",
    [
        ["sales.sale_date:month", "sales.sale_date:year"],
        ["sales.sale_date:year", "sales.sale_date:month"],
    ],
)
def test_win_qry_02_two_grains_of_the_axis(eng: dosi.Engine, db: str, group_by: list[str]) -> None:
    """WIN-QRY-02 (reference: a coarser grain of the axis is an extra dimension): with the axis
    grouped at month and year, the month is the series and the year a partition, whatever the
    group_by order (a 1-month lookback never crosses into another year's partition)."""
    base = series("month")
    by_year = {(k[0], f"{k[0][:4]}-01-01"): v for k, v in base.items()}
    exp = {}
    for (m, y), _ in by_year.items():
        prev = ts(shift(key_date((m,)), -1, "month"))
        exp[(m, y)] = base.get((prev,)) if prev[:4] == y[:4] else None
    check(eng, db, group_by, ("sale_date__month", "sale_date__year"), {"mom_value": exp})


def test_win_qry_02_axis_twice_at_the_same_grain(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-02: the axis grouped twice at the query grain (`sales.sale_date:month` and
    `metric_time:month`) is one time key, not a partition: the values equal the single-item
    query's (not all-NULL offsets and identity frames)."""
    base = series("month")
    both = {(k[0], k[0]): v for k, v in base.items()}
    check(
        eng,
        db,
        ["sales.sale_date:month", "metric_time:month"],
        ("sale_date__month", "metric_time__month"),
        {
            "mom_value": {
                (k[0], k[0]): v for k, v in offset_expected(base, 1, "month", "value").items()
            },
            "fwd_delta": {
                (k[0], k[0]): v
                for k, v in offset_expected(base, 1, "month", "delta", "forward").items()
            },
            "revenue": both,
        },
    )


def test_win_offset_where_on_ungrouped_field_shrinks_population(eng: dosi.Engine, db: str) -> None:
    """A dimension filter on an ungrouped field shrinks the series the offset compares."""
    base = series("month", where=lambda s: s.region == "east")
    check(
        eng,
        db,
        MONTH,
        T,
        {"mom_delta": offset_expected(base, 1, "month", "delta")},
        where_sql="sales.region = 'east'",
    )


def test_win_qry_06_example_query(eng: dosi.Engine, db: str) -> None:
    """WIN-QRY-06: the spec's example shape (base + growth, region x month, a time_range)."""
    start, end = ts_("2023-12-01")[:10], ts_("2024-04-01")[:10]
    base = series("month", ("region",))
    exp = offset_expected(base, 1, "month", "percent_change")
    keep = {k for k in base if start <= k[1][:10] < end}
    check(
        eng,
        db,
        REGION_MONTH,
        RT,
        {"revenue": {k: base[k] for k in keep}, "mom": {k: exp[k] for k in keep}},
        time_range={"start": start, "end": end},
    )


# -- alignment ---------------------------------------------------------------------------------

# reference engine matrix (REPORT §4.2): offset -> grains that compile
ALIGNED = {
    "mom_value": ("month", 1, {"day", "month"}),
    "wow_value": ("week", 1, {"day", "week"}),
    "d7_value": ("day", 7, {"day", "week"}),
    "qoq_value": ("quarter", 1, {"day", "month", "quarter"}),
    "yoy_value": ("year", 1, {"day", "month", "quarter", "year"}),
    # further shifts: aligned iff the shift is a whole number of query buckets
    "dod_value": ("day", 1, {"day"}),
    "m3_value": ("month", 3, {"day", "month", "quarter"}),
    "two_m": ("month", 2, {"day", "month"}),
    "w2_value": ("week", 2, {"day", "week"}),
    "d14_value": ("day", 14, {"day", "week"}),
    "q4_value": ("quarter", 4, {"day", "month", "quarter", "year"}),
}


@pytest.mark.parametrize("metric", sorted(ALIGNED))
@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter", "year"])
def test_win_off_misaligned_matrix(eng: dosi.Engine, db: str, metric: str, grain: str) -> None:
    """WIN-OFF-07 (reference `window_offset_misaligned`): an offset that does not land on a bucket
    boundary of the query grain is rejected; aligned ones compute the exact shifted value."""
    gran, count, ok = ALIGNED[metric]
    q = {"metrics": [metric], "group_by": [f"metric_time:{grain}"]}
    if grain in ok:
        base = series(grain)
        got = keyed(eng.execute(q, db_path=db)["rows"], (f"metric_time__{grain}",), metric)
        assert_series(got, offset_expected(base, count, gran, "value"), metric)
    else:
        err = query_error(eng, db, q)
        assert err.code == "window_offset_misaligned"
        assert err.metrics == [metric]
        for g in ok:
            assert g in (err.hint or "")


# -- axis errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "group_by",
    [[], ["sales.region"], ["metric_time"], ["sales.sale_date"], ["sales.ship_date:month"]],
)
def test_win_qry_02_axis_not_grouped(eng: dosi.Engine, db: str, group_by: list[str]) -> None:
    """WIN-QRY-02 / WIN-OFF-12 (reference: `time_axis_not_grouped`): an offset needs the axis in
    group_by WITH a grain; the error names the missing axis and both spellings."""
    err = query_error(eng, db, {"metrics": ["mom"], "group_by": group_by})
    assert err.code == "time_axis_not_grouped"
    assert err.missing_dimensions == ["sales.sale_date"]
    assert err.candidates == ["sales.sale_date", "metric_time"]
    assert "sales.sale_date:<grain>" in (err.hint or "")
