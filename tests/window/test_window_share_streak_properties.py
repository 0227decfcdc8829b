"""Property tests for the share and streak families (DATUS 1.13) over small random series with
calendar gaps, NULL values, negative and zero amounts and a NULL region, each example in its
own DuckDB file: a share column sums to 1 in every partition whose total is not 0 (and is the
plain-Python share everywhere); a streak equals the independent Python run-length definition
(`test_window_streak.streaked`) for random conditions at every grain."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_window_share import shared
from test_window_streak import OPS, streaked
from wm_common import Sale, assert_series, build_db, keyed, make_engine, run, series

WINDOWS: dict[str, Any] = {
    "sh": {"share": {}},
    "sh_none": {"share": {"partition": {"mode": "none"}}},
}
CONDITIONS = [
    (compare, op, target) for compare in ("value", "change") for op in OPS for target in (-3, 0, 7)
]
for i, (compare, op, target) in enumerate(CONDITIONS):
    WINDOWS[f"st{i}"] = {"streak": {"compare": compare, "op": op, "target": target}}

FIRST = dt.date(2023, 12, 20)
DAYS = 120
day_st = st.integers(0, DAYS)
# dense clusters of days (long runs) separated by gaps
cluster_st = st.tuples(day_st, st.lists(st.integers(0, 12), min_size=1, max_size=10))
sale_st = st.tuples(
    st.sampled_from(["a", "b", None]),
    st.one_of(st.none(), st.integers(-10, 10), st.integers(-10, 10)),
)


@st.composite
def sales_st(draw: st.DrawFn) -> list[Sale]:
    clusters = draw(st.lists(cluster_st, min_size=1, max_size=5))
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
        self.engine.close()
        self.n += 1
        return build_db(self.root / f"ex{self.n}.duckdb", sales)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(tmp_path_factory.mktemp("sharestreak"))


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GRAINS = st.sampled_from(["day", "week", "month"])


@SETTINGS
@given(sales=sales_st(), grain=GRAINS)
def test_prop_share_sums_to_one_per_partition(
    runner: Runner, sales: list[Sale], grain: str
) -> None:
    """Each time bucket's shares sum to 1 when its total is not 0 (NULL shares are NULL
    values, which the total skips); the grand-total shares sum to 1 likewise; a zero total
    gives NULL shares."""
    db = runner.load(sales)
    keys = ("region", f"metric_time__{grain}")
    rows = run(
        runner.engine, db, ["revenue", "sh", "sh_none"], ["sales.region", f"metric_time:{grain}"]
    )
    base = series(grain, ("region",), rows=sales)
    assert_series(keyed(rows, keys, "sh"), shared(base, lambda k: k[-1]), "sh")
    assert_series(keyed(rows, keys, "sh_none"), shared(base, lambda k: ()), "sh_none")
    sums: dict[Any, float] = {}
    totals: dict[Any, float] = {}
    for r in rows:
        b = r[keys[1]]
        if r["revenue"] is not None:
            totals[b] = totals.get(b, 0) + r["revenue"]
        if r["sh"] is not None:
            sums[b] = sums.get(b, 0.0) + r["sh"]
    for b, total in totals.items():
        if total != 0:
            assert math.isclose(sums[b], 1.0, rel_tol=1e-9), (b, sums[b])
        else:
            assert b not in sums
    grand = sum(totals.values())
    if grand != 0:
        assert math.isclose(sum(r["sh_none"] for r in rows if r["sh_none"] is not None), 1.0)


@SETTINGS
@given(sales=sales_st(), grain=GRAINS, by_region=st.booleans())
def test_prop_streak_equals_the_python_run_length(
    runner: Runner, sales: list[Sale], grain: str, by_region: bool
) -> None:
    """Every condition (value or change, each operator, three targets) equals the run length
    of calendar-adjacent buckets meeting it, per partition."""
    db = runner.load(sales)
    dims = ("region",) if by_region else ()
    grp = [*(f"sales.{d}" for d in dims), f"metric_time:{grain}"]
    keys = (*dims, f"metric_time__{grain}")
    names = [f"st{i}" for i in range(len(CONDITIONS))]
    rows = run(runner.engine, db, names, grp)
    base = series(grain, dims, rows=sales)
    for name, (compare, op, target) in zip(names, CONDITIONS, strict=True):
        want = streaked(base, grain, op, target, compare)
        assert_series(keyed(rows, keys, name), want, f"{name} {compare} {op} {target}")
