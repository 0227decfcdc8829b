"""A declared time-spine table with `bounds: "table"` (issue 22 item 1, MetricFlow's time
spine): a densified query without a time_range spans every row of the table, not the data's
first to last bucket; a time_range still bounds it. Expected buckets from Python's calendar
(densekit.calendar_buckets), sums from the hand-written rows (densekit.bucket_sums)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from densekit import SALES, bucket_sums, build, calendar_buckets, model_text

from dosi.engine import Engine
from dosi.errors import OsiError

D = dt.date
SPINE = {"dataset": "cal", "field": "d"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("spine_bounds") / "s.duckdb")


def _months(engine: Engine, db: Path, **kw: Any) -> dict[str, Any]:
    q = {"metrics": ["revenue_or_zero"], "group_by": ["metric_time:month"], "densify": "time", **kw}
    return {
        r["metric_time__month"]: r["revenue_or_zero"] for r in engine.execute(q, db_path=db)["rows"]
    }


def test_table_bounds_span_the_whole_spine(db: Path) -> None:
    """The spine table holds 2023-2025: every month of it, empty ones filled with 0."""
    eng = Engine(model_text=model_text({"time_spine": {**SPINE, "bounds": "table"}}))
    try:
        got = _months(eng, db)
        want = [b.isoformat() for b in calendar_buckets(D(2023, 1, 1), D(2026, 1, 1), "month")]
        assert sorted(got) == want
        sums = {b.isoformat(): s for b, (s, _) in bucket_sums(SALES, "month").items()}
        for month, value in got.items():
            assert float(value) == float(sums.get(month, 0)), month
        # a time_range bounds it as before
        ranged = _months(eng, db, time_range={"start": "2024-02-01", "end": "2024-05-01"})
        assert sorted(ranged) == ["2024-02-01", "2024-03-01", "2024-04-01"]
        assert "first row of cal.d" in eng.explain(
            {"metrics": ["revenue_or_zero"], "group_by": ["metric_time:month"], "densify": "time"}
        )
    finally:
        eng.close()


def test_data_bounds_are_the_default(db: Path) -> None:
    """Without `bounds` the spine runs from the data's first month (January) to its last
    (June), reading the table's rows."""
    eng = Engine(model_text=model_text({"time_spine": SPINE}))
    try:
        assert sorted(_months(eng, db)) == [f"2024-0{m}-01" for m in range(1, 7)]
    finally:
        eng.close()


def test_a_bad_bounds_value_fails_the_model() -> None:
    with pytest.raises(OsiError) as err:
        Engine(model_text=model_text({"time_spine": {**SPINE, "bounds": "all"}}))
    assert "time_spine.bounds" in str(err.value)
