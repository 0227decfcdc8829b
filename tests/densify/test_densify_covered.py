"""Densify `covered` (issue 22 item 1, MetricFlow's offset and cumulative metrics over its
time spine): window metrics are computed over the dense series, and the result holds the rows
with data plus the empty buckets in which a window metric the result reads has a value (a
month-over-month in the month after a sale, a rolling frame still holding one). Expected rows
come from hand-written SQL over the same table (a FULL OUTER JOIN of the monthly sums with the
same sums a month later) or from the hand-written rows (densekit).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from densekit import SALES, bucket_sums, build, calendar_buckets, model_text
from enginekit import assert_rows_equal, result_rows

from dosi.engine import Engine
from dosi.errors import QueryShapeError

D = dt.date
H1 = {"start": "2024-01-01", "end": "2024-07-01"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("covered") / "sales.duckdb")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=model_text())
    yield eng
    eng.close()


def _run(engine: Engine, db: Path, metrics: list[str], **kw: Any) -> list[tuple[Any, ...]]:
    q = {"metrics": metrics, "group_by": ["metric_time:month"], "densify": "covered", **kw}
    return result_rows(engine.execute(q, db_path=db))


def _hand(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    return [tuple(v.isoformat() if isinstance(v, dt.date) else v for v in r) for r in sorted(rows)]


_MONTHS = "SELECT DATE_TRUNC('month', sale_date) AS m, SUM(amount) AS s FROM sales GROUP BY 1"


def test_offset_beside_its_base_keeps_the_rows_either_side_has(engine: Engine, db: Path) -> None:
    """issue 22 item 1 (covered): a month with sales, and the month after one (the offset's
    value, its own revenue NULL), each a row; the range bounds both."""
    got = _run(engine, db, ["revenue", "rev_mom"], time_range=H1)
    want = _hand(
        db,
        f"""
        WITH m AS ({_MONTHS})
        SELECT COALESCE(a.m, b.m + INTERVAL 1 MONTH)::DATE AS month, a.s, b.s
        FROM m a FULL OUTER JOIN m b ON a.m = b.m + INTERVAL 1 MONTH
        WHERE COALESCE(a.m, b.m + INTERVAL 1 MONTH) >= DATE '2024-01-01'
          AND COALESCE(a.m, b.m + INTERVAL 1 MONTH) < DATE '2024-07-01'
        """,
    )
    assert_rows_equal(got, want)
    assert [r[0] for r in got] == [
        "2024-01-01",
        "2024-02-01",
        "2024-03-01",
        "2024-04-01",
        "2024-06-01",
    ]


def test_an_offset_alone_covers_the_buckets_it_has_a_value_in(engine: Engine, db: Path) -> None:
    """Without a metric read outside the window the rows with data are not kept for their
    own sake: a month-over-month alone is a row where the month before had sales."""
    got = _run(engine, db, ["rev_mom"], time_range=H1)
    want = _hand(
        db,
        f"""
        WITH m AS ({_MONTHS})
        SELECT (m + INTERVAL 1 MONTH)::DATE, s FROM m
        WHERE m + INTERVAL 1 MONTH >= DATE '2024-01-01' AND m + INTERVAL 1 MONTH < DATE '2024-07-01'
        """,
    )
    assert_rows_equal(got, want)
    assert want == [("2024-02-01", 15), ("2024-04-01", 7)]


def test_a_rolling_frame_covers_the_months_it_still_holds_a_sale(engine: Engine, db: Path) -> None:
    """A rolling 3-month sum after the last sale (June): July and August still hold June in
    their frame, September on holds nothing and is no row."""
    rng = {"start": "2024-07-01", "end": "2025-01-01"}
    got = _run(engine, db, ["rev_roll3"], time_range=rng)
    sums = bucket_sums(SALES, "month")
    months = calendar_buckets(D(2024, 5, 1), D(2025, 1, 1), "month")
    want = []
    for i, b in enumerate(months[2:], start=2):
        frame = [sums[m][0] for m in months[i - 2 : i + 1] if m in sums]
        if frame:
            want.append((b.isoformat(), sum(frame)))
    assert_rows_equal(got, want)
    assert [r[0] for r in got] == ["2024-07-01", "2024-08-01"]


def test_a_running_total_covers_the_empty_months_it_carries(engine: Engine, db: Path) -> None:
    """A running total over the range: every month from the first sale on carries a value
    (February, April and May included); the months before it hold none."""
    got = _run(engine, db, ["rev_run"], time_range={"start": "2023-11-01", "end": "2024-07-01"})
    sums = bucket_sums(SALES, "month")
    want, total = [], 0.0
    for b in calendar_buckets(D(2024, 1, 1), D(2024, 7, 1), "month"):
        total += sums.get(b, (0.0, 0))[0]
        want.append((b.isoformat(), total))
    assert_rows_equal(got, want)


def test_without_a_window_covered_returns_the_rows_with_data(engine: Engine, db: Path) -> None:
    """No window metric: nothing to cover, the rows with data as they are."""
    got = _run(engine, db, ["revenue"], time_range=H1)
    assert got == [("2024-01-01", 15.0), ("2024-03-01", 7.0), ("2024-06-01", 4.0)]


def test_explain_names_the_covering_columns(engine: Engine) -> None:
    text = engine.explain(
        {
            "metrics": ["revenue", "rev_mom"],
            "group_by": ["metric_time:month"],
            "time_range": H1,
            "densify": "covered",
        }
    )
    assert "keep rows with data or with a value in [rev_mom]" in text


def test_a_misspelt_mode_names_covered(engine: Engine) -> None:
    with pytest.raises(QueryShapeError) as info:
        engine.compile(
            {"metrics": ["revenue"], "group_by": ["metric_time:month"], "densify": "coverd"}
        )
    assert info.value.code == "invalid_query"
    assert "covered" in info.value.candidates


def test_without_a_range_an_offset_reaches_past_the_last_data_month(
    engine: Engine, db: Path
) -> None:
    """The data's bounds are extended by the back offset: June's sales are July's
    month-over-month value, a row after the data's last month."""
    got = _run(engine, db, ["rev_mom"])
    want = _hand(db, f"WITH m AS ({_MONTHS}) SELECT (m + INTERVAL 1 MONTH)::DATE, s FROM m")
    assert_rows_equal(got, want)
    assert [r[0] for r in got] == ["2024-02-01", "2024-04-01", "2024-07-01"]
