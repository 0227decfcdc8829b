"""Property tests for D-WINDOW over small random series with calendar gaps and NULL dimension
values (WIN-OFF-06/09, WIN-CUM-02, WIN-FRM-15/17, WIN-ROL-02, WIN-QRY-04). Each example writes
its own DuckDB file; the expected values are direct restatements of the spec's definitions
(period-to-date sums, the previous N existing buckets, the exact shifted calendar key)."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wm_common import (
    Key,
    Sale,
    assert_series,
    bucket,
    build_db,
    close,
    key_date,
    keyed,
    make_engine,
    run,
    series,
    shift,
    sql_sum,
    ts,
)

import dosi

WINDOWS: dict[str, Any] = {
    "m1": {"type": "pop", "offset": "1 month", "calculation": "value"},
    "m2_fwd": {
        "offset": {"count": 2, "granularity": "month", "direction": "forward"},
        "calculation": "value",
    },
    "y1": {"type": "pop", "offset": "1 year", "calculation": "value"},
    "q1_delta": {"type": "pop", "offset": "1 quarter", "calculation": "delta"},
    "w1": {"type": "pop", "offset": "1 week", "calculation": "value"},
    "d3": {"type": "pop", "offset": "3 days", "calculation": "value"},
    "ytd": {"type": "cumulative", "function": "sum", "reset": "year"},
    "qtd": {"type": "cumulative", "function": "sum", "reset": "quarter"},
    "mtd": {"type": "cumulative", "function": "sum", "reset": "month"},
    "wtd": {"type": "cumulative", "function": "sum", "reset": "week"},
    "r1": {"type": "rolling", "function": "sum", "periods": 1},
    "r2": {"type": "rolling", "function": "sum", "periods": 2},
    "r4": {"type": "rolling", "function": "sum", "periods": 4},
}

FIRST = dt.date(2022, 11, 1)
DAYS = 800  # through early 2025: several year, quarter and week boundaries

day_st = st.integers(0, DAYS).map(lambda n: FIRST + dt.timedelta(days=n))
# clustered dates leave calendar gaps between clusters
cluster_st = st.tuples(st.integers(0, DAYS), st.lists(st.integers(0, 40), min_size=1, max_size=5))
sale_st = st.tuples(
    st.sampled_from(["a", "b", None]),
    st.one_of(st.none(), st.integers(-20, 100)),
)


@st.composite
def sales_st(draw: st.DrawFn) -> list[Sale]:
    clusters = draw(st.lists(cluster_st, min_size=1, max_size=6))
    out: list[Sale] = []
    ids = itertools.count()
    for anchor, offsets in clusters:
        for off in offsets:
            day = FIRST + dt.timedelta(days=min(DAYS, anchor + off))
            region, amount = draw(sale_st)
            out.append(Sale(next(ids), day, region, amount))
    return out


class Runner:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.n = 0
        self.engine = make_engine(WINDOWS)

    def load(self, sales: list[Sale]) -> str:
        self.engine.close()  # release the previous example's connection
        self.n += 1
        return build_db(self.root / f"ex{self.n}.duckdb", sales)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(tmp_path_factory.mktemp("winprop"))


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GRAIN_DIMS = st.tuples(
    st.sampled_from(["day", "week", "month", "quarter", "year"]), st.sampled_from([(), ("region",)])
)


def group_by(grain: str, dims: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    return [f"sales.{d}" for d in dims] + [f"metric_time:{grain}"], (*dims, f"metric_time__{grain}")


OFFSETS = {  # metric -> (count, granularity, direction, grains it is aligned with)
    "m1": (1, "month", "back", ("day", "month")),
    "m2_fwd": (2, "month", "forward", ("day", "month")),
    "y1": (1, "year", "back", ("day", "month", "quarter", "year")),
    "q1_delta": (1, "quarter", "back", ("day", "month", "quarter")),
    "w1": (1, "week", "back", ("day", "week")),
    "d3": (3, "day", "back", ("day",)),
}


@SETTINGS
@given(sales=sales_st(), gd=GRAIN_DIMS)
def test_prop_offset_is_value_at_shifted_key_or_null(
    runner: Runner, sales: list[Sale], gd: tuple[str, tuple[str, ...]]
) -> None:
    """WIN-OFF-06/09 / WIN-OFF-04: an offset equals the base value at exactly the shifted
    calendar key of the same partition, or NULL when that bucket does not exist or the partition
    value is NULL."""
    grain, dims = gd
    metrics = [m for m, spec in OFFSETS.items() if grain in spec[3]]
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    rows = run(runner.engine, db, ["revenue", *metrics], grp)
    base = series(grain, dims, rows=sales)
    assert_series(keyed(rows, keys, "revenue"), base, "revenue")
    for m in metrics:
        count, gran, direction, _ = OFFSETS[m]
        got = keyed(rows, keys, m)
        for k, cur in base.items():
            target = (
                *k[:-1],
                ts(shift(key_date(k), count if direction == "forward" else -count, gran)),
            )
            prev = None if any(x is None for x in k[:-1]) else base.get(target)
            want = (
                (None if cur is None or prev is None else cur - prev) if m == "q1_delta" else prev
            )
            assert close(got[k], want), (m, k, got[k], want)


RESETS = {"ytd": "year", "qtd": "quarter", "mtd": "month", "wtd": "week"}
RANK = {"day": 0, "week": 1, "month": 2, "quarter": 3, "year": 4}


@SETTINGS
@given(sales=sales_st(), gd=GRAIN_DIMS)
def test_prop_cumulative_reset_is_period_to_date_sum(
    runner: Runner, sales: list[Sale], gd: tuple[str, tuple[str, ...]]
) -> None:
    """WIN-CUM-02 / WIN-FRM-17: a cumulative sum with reset r is the sum of the partition's
    buckets in the same r-period up to and including the current bucket."""
    grain, dims = gd
    metrics = [
        m
        for m, r in RESETS.items()
        if RANK[r] >= RANK[grain] and not (r == "week" and grain not in ("day", "week"))
    ]
    if not metrics:
        return
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    rows = run(runner.engine, db, metrics, grp)
    base = series(grain, dims, rows=sales)
    for m in metrics:
        r = RESETS[m]
        got = keyed(rows, keys, m)
        for k in base:
            d = key_date(k)
            period = [
                v
                for kk, v in base.items()
                if kk[:-1] == k[:-1]
                and bucket(key_date(kk), r) == bucket(d, r)
                and key_date(kk) <= d
            ]
            assert close(got[k], sql_sum(period)), (m, k)


@SETTINGS
@given(sales=sales_st(), gd=GRAIN_DIMS)
def test_prop_rolling_is_sum_of_previous_existing_buckets(
    runner: Runner, sales: list[Sale], gd: tuple[str, tuple[str, ...]]
) -> None:
    """WIN-ROL-02 / WIN-FRM-15: a rolling sum over N periods is the sum of the current bucket and
    the N-1 previous EXISTING buckets of its partition (no densification); periods 1 is the
    identity."""
    grain, dims = gd
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    rows = run(runner.engine, db, ["r1", "r2", "r4"], grp)
    base = series(grain, dims, rows=sales)
    for m, n in (("r1", 1), ("r2", 2), ("r4", 4)):
        got = keyed(rows, keys, m)
        for k in base:
            earlier = sorted(
                (kk for kk in base if kk[:-1] == k[:-1] and key_date(kk) <= key_date(k)),
                key=key_date,
            )
            assert close(got[k], sql_sum([base[x] for x in earlier[-n:]])), (m, k)


@SETTINGS
@given(
    sales=sales_st(),
    dims=st.sampled_from([(), ("region",)]),
    grain=st.sampled_from(["day", "week", "month"]),
    start=st.one_of(st.none(), day_st),
    span=st.integers(1, 500),
)
def test_prop_trim_never_changes_in_range_values(
    runner: Runner,
    sales: list[Sale],
    dims: tuple[str, ...],
    grain: str,
    start: dt.date | None,
    span: int,
) -> None:
    """WIN-QRY-04: for offset (back and forward) and reset metrics, the rows a time_range keeps
    carry exactly the values of the unbounded query (the scan expansion restores every lookback
    and lookahead, and the trim runs after the window stage). Bounds are bucket-aligned; week
    buckets under month / quarter / year resets belong to the period of their Monday."""
    metrics = {
        "day": ["m1", "m2_fwd", "y1", "w1", "d3", "ytd", "mtd", "wtd"],
        "week": ["w1", "wtd", "mtd", "qtd", "ytd"],
        "month": ["m1", "m2_fwd", "y1", "q1_delta", "ytd", "qtd", "mtd"],
    }[grain]
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    full = keyed_all(run(runner.engine, db, metrics, grp), keys, metrics)
    # bucket-aligned bounds: a mid-bucket end would make the last bucket's base partial,
    # which is the time_range filter, not the trim
    lo = bucket(start, grain) if start is not None else None
    hi = bucket((lo or FIRST) + dt.timedelta(days=span), grain)
    if lo is not None and hi <= lo:
        hi = bucket(lo + dt.timedelta(days=32), grain)
    tr: dict[str, str] = {"end": hi.isoformat()}
    if lo is not None:
        tr["start"] = lo.isoformat()
    part = keyed_all(run(runner.engine, db, metrics, grp, time_range=tr), keys, metrics)
    for m in metrics:
        want = {
            k: v
            for k, v in full[m].items()
            if (lo is None or key_date(k) >= lo) and key_date(k) < hi
        }
        assert_series(part[m], want, m)


def keyed_all(
    rows: list[dict[str, Any]], keys: tuple[str, ...], metrics: list[str]
) -> dict[str, dict[Key, Any]]:
    return {m: keyed(rows, keys, m) for m in metrics}


def test_prop_engine_fixture_is_datus_mode(runner: Runner) -> None:
    """Sanity: the property engine derives windows (datus mode)."""
    assert isinstance(runner.engine, dosi.Engine) and runner.engine.mode == "datus"
