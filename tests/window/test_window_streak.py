"""D-WINDOW `streak` family (DATUS 1.13; WM "Family roadmap", issue 23 item 3), executed on
DuckDB. Expected values come from `streaked`, a plain-Python restatement of the definition (the
run of calendar-adjacent buckets ending at each bucket, all meeting the condition), over
series built to break naive versions: a missing day inside a run, equal consecutive values
(no growth, but >= 0 change), a NULL value, negative and zero values, a NULL region, and
months with gaps in `wm_common.SALES`."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from wm_common import (
    D,
    Key,
    Sale,
    assert_series,
    bucket,
    build_db,
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
    with_date,
)

import dosi

OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    "!=": operator.ne,
}

WINDOWS: dict[str, Any] = {
    "pos": {"streak": {"op": ">", "target": 0}},
    "pos_type": {"type": "streak", "op": ">"},
    "nonneg": {"streak": {"op": ">=", "target": 0}},
    "big": {"streak": {"op": ">=", "target": 50}},
    "low": {"streak": {"op": "<", "target": 25.5}},
    "growth": {"streak": {"compare": "change", "op": ">"}},
    "growth_type": {"type": "streak", "compare": "change", "op": ">", "target": 0},
    "flat_or_up": {"streak": {"compare": "change", "op": ">="}},
    "decline": {"streak": {"compare": "change", "op": "<", "target": -5}},
    "pos_all": {"streak": {"op": ">", "partition": {"mode": "none"}}},
    "mom": {"type": "pop", "offset": "1 month", "calculation": "value"},
    "net": (
        "SUM(sales.amount) - COUNT(sales.sale_id)",
        {"derive": {"type": "compose", "expr": "revenue - cnt"}},
    ),
    "net_growth": {"base": "net", "streak": {"compare": "change", "op": ">"}},
    "mom_delta": {"type": "pop", "offset": "1 month", "calculation": "delta"},
    "mom2": ("SUM(sales.amount)", {"derive": {"type": "compose", "expr": "mom_delta * 2"}}),
    # a window over another window's output (level 2) declares its partition (WIN-19-07)
    "mom2_up": {"base": "mom2", "streak": {"op": ">", "partition": {"mode": "query_dimensions"}}},
    "mom2_share": {"base": "mom2", "share": {"partition": {"mode": "none"}}},
}


def _daily(rows: Iterable[tuple[str, str | None, int | None]]) -> tuple[Sale, ...]:
    return tuple(Sale(i, D(day), region, amount) for i, (day, region, amount) in enumerate(rows))


# east: 10, 20, 20 (a tie), 30, [01-05 missing], 40, 50, NULL, 60, -5, 0, 5 (two rows)
# west: 0, 1, 2, [01-04 missing], 3, 3, 4; NULL region: 7, 8 on adjacent days
STREAK_SALES = _daily(
    [
        ("2024-01-01", "east", 10),
        ("2024-01-02", "east", 20),
        ("2024-01-03", "east", 20),
        ("2024-01-04", "east", 30),
        ("2024-01-06", "east", 40),
        ("2024-01-07", "east", 50),
        ("2024-01-08", "east", None),
        ("2024-01-09", "east", 60),
        ("2024-01-10", "east", -5),
        ("2024-01-11", "east", 0),
        ("2024-01-12", "east", 2),
        ("2024-01-12", "east", 3),
        ("2024-01-01", "west", 0),
        ("2024-01-02", "west", 1),
        ("2024-01-03", "west", 2),
        ("2024-01-05", "west", 3),
        ("2024-01-06", "west", 3),
        ("2024-01-07", "west", 4),
        ("2024-01-02", None, 7),
        ("2024-01-03", None, 8),
    ]
)


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return make_engine(WINDOWS)


@pytest.fixture(scope="module")
def daily_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_db(tmp_path_factory.mktemp("streak") / "streak.duckdb", STREAK_SALES)


def streaked(
    base: dict[Key, Any],
    grain: str,
    op: str,
    target: float = 0,
    compare: str = "value",
) -> dict[Key, Any]:
    """The run length ending at each bucket: 0 when the bucket fails the condition, else one
    more than the calendar-previous bucket's run (that bucket has no row: 1). A change needs
    the calendar-previous bucket's row; NULLs never meet a condition."""

    def prev(k: Key) -> Key:
        return with_date(k, shift(key_date(k), -1, grain))

    def meets(k: Key) -> bool:
        v = base[k]
        if v is None:
            return False
        if compare == "value":
            return OPS[op](v, target)
        p = prev(k)
        if p not in base or base[p] is None:
            return False
        return OPS[op](v - base[p], target)

    out: dict[Key, Any] = {}
    for k in sorted(base, key=key_date):
        if not meets(k):
            out[k] = 0
        else:
            p = prev(k)
            out[k] = out[p] + 1 if p in out else 1
    return out


DAY = ["sales.region", "metric_time:day"]
RD = ("region", "metric_time__day")


def test_streak_value_conditions_over_days(eng: dosi.Engine, daily_db: str) -> None:
    """`value <op> target`: the missing 2024-01-05 breaks east's positive run, the NULL
    2024-01-08 and the -5 break it again; 0 fails > 0 but meets >= 0."""
    base = series("day", ("region",), rows=STREAK_SALES)
    want = {
        "pos": streaked(base, "day", ">"),
        "pos_type": streaked(base, "day", ">"),
        "nonneg": streaked(base, "day", ">="),
        "big": streaked(base, "day", ">=", 50),
        "low": streaked(base, "day", "<", 25.5),
    }
    rows = check(eng, daily_db, DAY, RD, want)
    got = keyed(rows, RD, "pos")
    east = [got[("east", f"2024-01-{d:02d}")] for d in (1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12)]
    assert east == [1, 2, 3, 4, 1, 2, 0, 1, 0, 0, 1]
    assert [keyed(rows, RD, "nonneg")[("east", f"2024-01-{d}")] for d in (10, 11, 12)] == [0, 1, 2]


def test_streak_growth_vs_previous_bucket(eng: dosi.Engine, daily_db: str) -> None:
    """`compare: change`: growth needs the calendar-previous bucket's row, so the first bucket
    after a gap has no change (0); a tie is no growth but meets >= 0."""
    base = series("day", ("region",), rows=STREAK_SALES)
    want = {
        "growth": streaked(base, "day", ">", compare="change"),
        "growth_type": streaked(base, "day", ">", compare="change"),
        "flat_or_up": streaked(base, "day", ">=", compare="change"),
        "decline": streaked(base, "day", "<", -5, compare="change"),
    }
    rows = check(eng, daily_db, DAY, RD, want)
    growth = keyed(rows, RD, "growth")
    east = [growth[("east", f"2024-01-{d:02d}")] for d in (1, 2, 3, 4, 6, 7)]
    assert east == [0, 1, 0, 1, 0, 1]
    flat = keyed(rows, RD, "flat_or_up")
    assert [flat[("west", f"2024-01-0{d}")] for d in (1, 2, 3, 5, 6, 7)] == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("grain", ["week", "month", "quarter"])
def test_streak_at_coarser_grains(eng: dosi.Engine, db: str, grain: str) -> None:
    """Month gaps in SALES break runs at each grain; the zero-sum west 2023-10 fails > 0; the
    all-NULL west 2023-06 fails every condition."""
    base = series(grain, ("region",))
    check(
        eng,
        db,
        ["sales.region", f"metric_time:{grain}"],
        ("region", f"metric_time__{grain}"),
        {
            "pos": streaked(base, grain, ">"),
            "growth": streaked(base, grain, ">", compare="change"),
            "flat_or_up": streaked(base, grain, ">=", compare="change"),
        },
    )


def test_streak_partition_none_over_one_series(eng: dosi.Engine, daily_db: str) -> None:
    """partition none: one series for the whole query; grouped by the day alone it is the
    total per day."""
    base = series("day", rows=STREAK_SALES)
    check(
        eng,
        daily_db,
        ["metric_time:day"],
        ("metric_time__day",),
        {"pos_all": streaked(base, "day", ">")},
    )


def test_streak_partition_leaving_out_a_grouped_dim_is_an_error(
    eng: dosi.Engine, daily_db: str
) -> None:
    """A partition that leaves out a grouped dimension would put several rows in one bucket:
    a structured error naming the dimension, never a run over an arbitrary row order."""
    err = query_error(eng, daily_db, {"metrics": ["pos_all"], "group_by": DAY})
    assert err.code == "window_partition_not_unique"
    assert err.candidates == ["sales.region"]
    assert "sales.region" in (err.hint or "")


def test_streak_needs_the_time_axis(eng: dosi.Engine, daily_db: str) -> None:
    err = query_error(eng, daily_db, {"metrics": ["pos"], "group_by": ["sales.region"]})
    assert err.code == "time_axis_not_grouped"
    assert err.suggested_retry is not None


def test_streak_within_the_time_range(eng: dosi.Engine, daily_db: str) -> None:
    """A run starts inside the queried range (as a running total does): the same values with
    a month-over-month metric beside it, whose lookback widens the scan."""
    start, end = D("2024-01-03"), D("2024-01-11")
    base = series("day", ("region",), rows=STREAK_SALES, start=start, end=end)
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    want = {
        "pos": streaked(base, "day", ">"),
        "growth": streaked(base, "day", ">", compare="change"),
    }
    check(eng, daily_db, DAY, RD, want, time_range=tr)
    rows = run(eng, daily_db, ["pos", "growth", "mom"], DAY, time_range=tr)
    for name, expected in want.items():
        assert_series(keyed(rows, RD, name), expected, f"{name} beside an offset")
    assert keyed(rows, RD, "pos")[("east", "2024-01-03")] == 1


def test_streak_of_a_derive_series(eng: dosi.Engine, db: str) -> None:
    """`window.base` names a D-DERIVE compose: the run reads that series."""
    rev = series("month", ("region",))
    cnt = series("month", ("region",), measure="count")
    net = {k: None if rev[k] is None else rev[k] - cnt[k] for k in rev}
    check(
        eng,
        db,
        ["sales.region", "metric_time:month"],
        ("region", "metric_time__month"),
        {"net_growth": streaked(net, "month", ">", compare="change")},
    )


def test_share_and_streak_over_a_window_output(eng: dosi.Engine, db: str) -> None:
    """Level 2 (D-DERIVE stage tier): the streak and the share of a compose over a
    month-over-month delta; a NULL delta (no previous month) fails the condition and has no
    share."""
    base = series("month", ("region",))
    delta = offset_expected(base, 1, "month", "delta")
    mom2 = {k: None if v is None else 2 * v for k, v in delta.items()}
    total = sum(v for v in mom2.values() if v is not None)
    check(
        eng,
        db,
        ["sales.region", "metric_time:month"],
        ("region", "metric_time__month"),
        {
            "mom2": mom2,
            "mom2_up": streaked(mom2, "month", ">"),
            "mom2_share": {k: None if v is None else v / total for k, v in mom2.items()},
        },
    )


def test_streak_basic_mode_is_the_plain_aggregate(daily_db: str) -> None:
    eng = make_engine({"pos": {"streak": {"op": ">"}}}, mode="basic")
    rows = run(eng, daily_db, ["pos"], ["sales.region"])
    assert keyed(rows, ("region",), "pos") == series(None, ("region",), rows=STREAK_SALES)


def test_streak_reference_on_a_hand_series() -> None:
    """The reference itself: a run over 3 adjacent months, a gap, then 2."""
    base = {
        ("x", ts(D(d))): v
        for d, v in [
            ("2024-01-01", 1),
            ("2024-02-01", 2),
            ("2024-03-01", 3),
            ("2024-05-01", 4),
            ("2024-06-01", 5),
        ]
    }
    assert list(streaked(base, "month", ">").values()) == [1, 2, 3, 1, 2]
    assert list(streaked(base, "month", ">", compare="change").values()) == [0, 1, 2, 0, 1]
    assert bucket(D("2024-06-15"), "month") == D("2024-06-01")
