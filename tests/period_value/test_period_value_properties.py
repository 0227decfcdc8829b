"""Hypothesis property of D-WINDOW `period_value` (issue 22 items 7 and 8) over random gappy
sales on DuckDB: a densified running sum accumulated per day and sampled `last` per month
equals the running total of the month sums (computed here in plain Python), for every month
of the range, empty months included. Requirement IDs: WIN-CUM-01, WIN-CUM-02."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from densekit import bucket, build, calendar_buckets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from periodkit import model_text

from dosi.engine import Engine

BASE = dt.date(2024, 1, 1)
_COUNTER = itertools.count()
_rows = st.lists(
    st.tuples(st.integers(0, 500), st.sampled_from(["east", "west"]), st.integers(1, 50)),
    min_size=1,
    max_size=20,
)


@pytest.fixture(scope="module")
def engine() -> Any:
    eng = Engine(model_text=model_text())
    yield eng
    eng.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=_rows, span=st.tuples(st.integers(0, 300), st.integers(30, 300)))
def test_last_sample_is_the_running_total_of_month_sums(
    engine: Any, tmp_path: Path, rows: list[tuple[int, str, int]], span: tuple[int, int]
) -> None:
    sales = [
        (i, BASE + dt.timedelta(days=day), region, Decimal(amount))
        for i, (day, region, amount) in enumerate(rows)
    ]
    db = build(tmp_path / f"p{next(_COUNTER)}.duckdb", sales)
    start = bucket(BASE + dt.timedelta(days=span[0]), "month")
    end = bucket(start + dt.timedelta(days=span[1]), "month")
    if end <= start:
        return
    q = {
        "metrics": ["run_last"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": start.isoformat(), "end": end.isoformat()},
        "densify": "time",
    }
    got = {r["metric_time__month"]: r["run_last"] for r in engine.execute(q, db_path=db)["rows"]}
    months = calendar_buckets(start, end, "month")
    assert sorted(got) == [m.isoformat() for m in months]
    total: Decimal | None = None
    for m in months:
        month_sum = [a for _, d, _, a in sales if bucket(d, "month") == m]
        if month_sum:
            total = (total or Decimal(0)) + sum(month_sum)
        value = got[m.isoformat()]
        assert (value is None and total is None) or Decimal(str(value)) == total, (m, value, total)
