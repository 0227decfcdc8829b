"""Hypothesis properties of the 1.14 following bounds over small random series with calendar
gaps, NULL amounts and NULL regions (the strategies of test_window_properties): a centered
rolling sum is the sum of the buckets it spans (the neighbouring existing buckets, or the
neighbouring calendar buckets over a densified series), and trimming never changes an
in-range value (the scan's end widens for the frame's lookahead, the trim runs after the
window stage). CHECKLIST: WIN-FRM-15 (frames over existing buckets), WIN-QRY-04 / WIN-QRY-05
(scan expansion and trim)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_window_properties import FIRST, SETTINGS, day_st, group_by, keyed_all, sales_st
from wm_common import (
    Sale,
    assert_series,
    bucket,
    build_db,
    key_date,
    make_engine,
    run,
    series,
    sql_sum,
)
from wm_common import shift as shift_date

WINDOWS: dict[str, Any] = {
    "c1": {"frame": {"function": "sum", "preceding": 1, "following": 1}},
    "c2": {"frame": {"function": "sum", "preceding": 2, "following": 2}},
    "f2": {"frame": {"function": "sum", "preceding": 0, "following": 2}},
    "fu": {"frame": {"function": "sum", "preceding": 0, "following": "unbounded"}},
}
SPANS = {"c1": (1, 1), "c2": (2, 2), "f2": (0, 2), "fu": (0, None)}


class Runner:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.n = 0
        self.engine = make_engine(WINDOWS)

    def load(self, sales: list[Sale]) -> str:
        self.engine.close()
        self.n += 1
        return build_db(self.root / f"ex{self.n}.duckdb", sales)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(tmp_path_factory.mktemp("roadmap_prop"))


GRAIN = st.sampled_from(["day", "week", "month"])
DIMS = st.sampled_from([(), ("region",)])


@SETTINGS
@given(sales=sales_st(), grain=GRAIN, dims=DIMS)
def test_prop_centered_sum_is_the_sum_of_the_buckets_it_spans(
    runner: Runner, sales: list[Sale], grain: str, dims: tuple[str, ...]
) -> None:
    """Without densify the frame spans the p existing buckets before and the f after the
    current one in its partition; over the densified series it spans the calendar buckets
    within p grains before and f after."""
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    base = series(grain, dims, rows=sales)
    plain = keyed_all(run(runner.engine, db, list(SPANS), grp), keys, list(SPANS))
    dense = keyed_all(
        run(runner.engine, db, list(SPANS), grp, densify="windows"), keys, list(SPANS)
    )
    for m, (p, f) in SPANS.items():
        for k in base:
            same = sorted((kk for kk in base if kk[:-1] == k[:-1]), key=key_date)
            i = same.index(k)
            hi = len(same) if f is None else i + f + 1
            want = sql_sum([base[x] for x in same[max(0, i - p) : hi]])
            assert _close(plain[m][k], want), (m, k, plain[m][k], want)
            d = key_date(k)
            low = shift_date(d, -p, grain)
            top = None if f is None else shift_date(d, f, grain)
            near = [
                base[x]
                for x in same
                if low <= key_date(x) and (top is None or key_date(x) <= top)
            ]
            assert _close(dense[m][k], sql_sum(near)), (m, k, "dense", dense[m][k], near)


@SETTINGS
@given(
    sales=sales_st(),
    grain=GRAIN,
    dims=DIMS,
    start=st.one_of(st.none(), day_st),
    span=st.integers(1, 500),
)
def test_prop_trim_never_changes_in_range_values(
    runner: Runner,
    sales: list[Sale],
    grain: str,
    dims: tuple[str, ...],
    start: dt.date | None,
    span: int,
) -> None:
    """The rows a bucket-aligned time_range keeps carry exactly the values of the unbounded
    query: for frames that read ahead only (f2, fu) with or without densify, and for centered
    frames (c1, c2) over the densified series, whose scan widens on both sides."""
    db = runner.load(sales)
    grp, keys = group_by(grain, dims)
    lo = bucket(start, grain) if start is not None else None
    hi = bucket((lo or FIRST) + dt.timedelta(days=span), grain)
    if lo is not None and hi <= lo:
        hi = bucket(lo + dt.timedelta(days=32), grain)
    tr: dict[str, str] = {"end": hi.isoformat()}
    if lo is not None:
        tr["start"] = lo.isoformat()
    for densify, metrics in ((None, ["f2", "fu"]), ("windows", list(SPANS))):
        extra: dict[str, Any] = {"densify": densify} if densify else {}
        full = keyed_all(run(runner.engine, db, metrics, grp, **extra), keys, metrics)
        part = keyed_all(
            run(runner.engine, db, metrics, grp, time_range=tr, **extra), keys, metrics
        )
        for m in metrics:
            want = {
                k: v
                for k, v in full[m].items()
                if (lo is None or key_date(k) >= lo) and key_date(k) < hi
            }
            assert_series(part[m], want, f"{m} densify={densify}")


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
