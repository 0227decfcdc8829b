"""Hypothesis properties of densify (issue 22, Deliver items 1 and 8) over random sales rows
on DuckDB: the densified result restricted to the buckets with data equals the undensified
result (densifying never changes a non-empty bucket nor adds a row to it); its time buckets
are exactly the calendar's (Python's `datetime`) from the range start's bucket to the end;
a dense rolling 3-bucket sum equals the sum of the three calendar buckets it spans."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from densekit import bucket_sums, build, calendar_buckets, model_text, next_bucket
from enginekit import assert_rows_equal, result_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.engine import Engine

BASE = dt.date(2024, 1, 1)
_COUNTER = itertools.count()

_rows = st.lists(
    st.tuples(st.integers(0, 400), st.sampled_from(["east", "west", "north"]), st.integers(1, 50)),
    min_size=1,
    max_size=25,
)
_grain = st.sampled_from(["day", "week", "month", "quarter"])
_range = st.one_of(
    st.none(),
    st.tuples(st.integers(-40, 300), st.integers(1, 200)),
)


@pytest.fixture(scope="module")
def engine() -> Any:
    eng = Engine(model_text=model_text())
    yield eng
    eng.close()


def _db(tmp: Path, rows: list[tuple[int, str, int]]) -> tuple[Path, list[Any]]:
    sales = [
        (i, BASE + dt.timedelta(days=day), region, Decimal(amount))
        for i, (day, region, amount) in enumerate(rows)
    ]
    return build(tmp / f"p{next(_COUNTER)}.duckdb", sales), sales


def _window(span: tuple[int, int] | None) -> dict[str, Any]:
    if span is None:
        return {}
    lo = BASE + dt.timedelta(days=span[0])
    return {"time_range": {"start": lo.isoformat(), "end": (lo + dt.timedelta(days=span[1])).isoformat()}}


_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(rows=_rows, grain=_grain, span=_range, mode=st.sampled_from(["time", "all"]), by_region=st.booleans())
def test_rows_with_data_are_the_undensified_rows(
    engine: Any, tmp_path: Path, rows: list, grain: str, span: Any, mode: str, by_region: bool
) -> None:
    db, sales = _db(tmp_path, rows)
    group = [f"metric_time:{grain}", *(["sales.region"] if by_region else [])]
    q = {"metrics": ["revenue", "sales_count"], "group_by": group, **_window(span)}
    sparse = engine.execute(q, db_path=db)
    dense = engine.execute({**q, "densify": mode}, db_path=db)
    assert_rows_equal(
        [r for r in result_rows(dense) if r[-1] != 0], result_rows(sparse)
    )
    # the buckets are the calendar's: the range's (or the data's first to last)
    if span is not None:
        start = BASE + dt.timedelta(days=span[0])
        end = start + dt.timedelta(days=span[1])
    else:
        days = [d for _, d, _, _ in sales]
        start, end = min(days), next_bucket(max(days) if grain == "day" else _bucket(max(days), grain), grain)
    want = [b.isoformat() for b in calendar_buckets(start, end, grain)]
    key = f"metric_time__{grain}"
    got = sorted({r[key] for r in dense["rows"]})
    if sparse["rows"] or span is not None:
        assert got == want
    if mode == "all" and by_region and sparse["rows"]:
        regions = {r["region"] for r in sparse["rows"]}
        assert len(dense["rows"]) == len(want) * len(regions)


def _bucket(d: dt.date, grain: str) -> dt.date:
    return calendar_buckets(d, d + dt.timedelta(days=1), grain)[0]


@_SETTINGS
@given(rows=_rows, span=st.tuples(st.integers(0, 300), st.integers(20, 200)))
def test_dense_rolling_sum_spans_calendar_buckets(
    engine: Any, tmp_path: Path, rows: list, span: tuple[int, int]
) -> None:
    db, sales = _db(tmp_path, rows)
    q = {"metrics": ["count_roll3"], "group_by": ["metric_time:month"], "densify": "time", **_window(span)}
    res = engine.execute(q, db_path=db)
    end = BASE + dt.timedelta(days=span[0] + span[1])  # rows from the end on are not read
    counts = {b: n for b, (_, n) in bucket_sums(sales, "month", end=end).items()}
    for r in res["rows"]:
        b = dt.date.fromisoformat(r["metric_time__month"])
        months = [b]
        for _ in range(2):
            months.append(_bucket(months[-1] - dt.timedelta(days=1), "month"))
        assert r["count_roll3"] == sum(counts.get(m, 0) for m in months), (b, months)
