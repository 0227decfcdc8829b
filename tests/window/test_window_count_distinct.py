"""Running and trailing distinct counts (DATUS 1.15 frame function `count_distinct`, issue 22
bed leftover `cumulative_distinct`): the value of bucket `t` is COUNT(DISTINCT customer) over
the fact rows in the frame ending at `t`, never a sum of per-bucket distinct counts. Expected
values from plain Python over the hand-written rows (a customer in several buckets, gaps, a
month reset, a time_range), on DuckDB and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import dataset, field, make_db, metric, model_doc, result_rows, to_yaml

from dosi.engine import Engine
from dosi.errors import OsiError

D = dt.date
#: (sale_id, day, region, customer): `a` buys in January and February, gaps of days
SALES: tuple[tuple[int, dt.date, str, str | None], ...] = (
    (1, D(2024, 1, 30), "east", "a"),
    (2, D(2024, 1, 31), "east", "a"),
    (3, D(2024, 1, 31), "west", "b"),
    (4, D(2024, 2, 2), "east", "a"),
    (5, D(2024, 2, 3), "west", "c"),
    (6, D(2024, 2, 3), "east", None),
    (7, D(2024, 2, 6), "west", "b"),
    (8, D(2024, 3, 1), "east", "d"),
)
BASE = "COUNT(DISTINCT sales.customer)"


def _w(window: dict[str, Any]) -> dict[str, Any]:
    return {"v": "1.15", "window": window}


METRICS = [
    metric("buyers", BASE),
    metric("revenue_rows", "COUNT(sales.sale_id)"),
    metric("buyers_run", BASE, _w({"type": "cumulative", "function": "count_distinct"})),
    metric(
        "buyers_all",
        BASE,
        _w({"type": "cumulative", "function": "count_distinct", "history": "all"}),
    ),
    metric(
        "buyers_mtd",
        BASE,
        _w({"type": "cumulative", "function": "count_distinct", "reset": "month"}),
    ),
    metric(
        "buyers_3d", BASE, _w({"type": "rolling", "function": "count_distinct", "span": "3 day"})
    ),
    metric("buyers_sum_run", BASE, _w({"type": "cumulative", "function": "sum"})),
    metric(
        "rows_run", "COUNT(sales.sale_id)", _w({"type": "cumulative", "function": "count_distinct"})
    ),
    metric(
        "buyers_3rows", BASE, _w({"type": "rolling", "function": "count_distinct", "periods": 3})
    ),
]


def _model() -> str:
    sales = dataset(
        "sales",
        [
            field("sale_id", datatype="Integer"),
            field("sale_date", datatype="Date", is_time=True),
            field("region", datatype="String"),
            field("customer", datatype="String"),
        ],
        primary_key=["sale_id"],
    )
    return to_yaml(model_doc([sales], metrics=METRICS))


def _statements() -> list[str]:
    values = ", ".join(
        f"({i}, DATE '{d.isoformat()}', '{r}', {'NULL' if c is None else repr(c)})"
        for i, d, r, c in SALES
    )
    return [
        "CREATE TABLE sales (sale_id INTEGER, sale_date DATE, region VARCHAR, customer VARCHAR)",
        f"INSERT INTO sales VALUES {values}",
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("cdist") / "s.duckdb", _statements())


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model())
    yield eng
    eng.close()


# -- the reference: plain Python over SALES --------------------------------------------------
def _distinct(lo: dt.date | None, t: dt.date, region: str | None = None) -> int | None:
    """Distinct non-NULL customers of the rows in [lo, t]; None when there are none."""
    got = {
        c
        for _, d, r, c in SALES
        if (lo is None or d >= lo) and d <= t and c is not None and region in (None, r)
    }
    return len(got) or None


def _days(start: dt.date | None = None) -> list[dt.date]:
    return sorted({d for _, d, _, _ in SALES if start is None or d >= start})


def _run(q: dict[str, Any], engine: Engine, db: Path) -> list[tuple]:
    return result_rows(engine.execute(q, db_path=db))


def test_running_reset_and_span_distinct_counts(engine: Engine, db: Path) -> None:
    """issue 22 cumulative_distinct: `a` (Jan 30, Jan 31, Feb 2) counts once in the running
    value; the month reset starts again on Feb 2; the 3-day span on Feb 6 reads Feb 4..6."""
    q = {
        "metrics": ["buyers", "buyers_run", "buyers_mtd", "buyers_3d"],
        "group_by": ["metric_time:day"],
    }
    want = [
        (
            t.isoformat(),
            _distinct(t, t),
            _distinct(None, t),
            _distinct(t.replace(day=1), t),
            _distinct(t - dt.timedelta(days=2), t),
        )
        for t in _days()
    ]
    got = _run(q, engine, db)
    assert got == want
    assert [r[2] for r in got] == [1, 2, 2, 3, 3, 4]  # not the running sum 1, 3, 4, 5, 6, 7


def test_a_sum_frame_still_sums_the_per_bucket_counts(engine: Engine, db: Path) -> None:
    """`function: sum` keeps its D-WINDOW meaning beside the distinct frame."""
    q = {"metrics": ["buyers_run", "buyers_sum_run"], "group_by": ["metric_time:day"]}
    got = _run(q, engine, db)
    sums, acc = [], 0
    for t in _days():
        acc += _distinct(t, t) or 0
        sums.append(acc)
    assert [r[2] for r in got] == sums
    assert [r[1] for r in got] == [_distinct(None, t) for t in _days()]


def test_partitioned_by_the_other_dimensions(engine: Engine, db: Path) -> None:
    q = {"metrics": ["buyers_run", "buyers_3d"], "group_by": ["metric_time:day", "sales.region"]}
    pairs = sorted({(d, r) for _, d, r, _ in SALES})
    want = [
        (d.isoformat(), r, _distinct(None, d, r), _distinct(d - dt.timedelta(days=2), d, r))
        for d, r in pairs
    ]
    assert _run(q, engine, db) == want


def test_month_grain_running_distinct(engine: Engine, db: Path) -> None:
    q = {"metrics": ["buyers", "buyers_run"], "group_by": ["metric_time:month"]}
    months = [D(2024, 1, 1), D(2024, 2, 1), D(2024, 3, 1)]
    ends = [D(2024, 1, 31), D(2024, 2, 29), D(2024, 3, 31)]
    want = [
        (m.isoformat(), _distinct(m, e), _distinct(None, e))
        for m, e in zip(months, ends, strict=True)
    ]
    assert _run(q, engine, db) == want
    assert [r[2] for r in want] == [2, 3, 4]


def test_a_time_range_widens_the_span_and_history_and_trims(engine: Engine, db: Path) -> None:
    """From Feb 3: the span reads back 2 days before the start, `history: all` every row
    before it, the default running frame only the in-range rows; the trim keeps Feb 3 on."""
    start = D(2024, 2, 3)
    q = {
        "metrics": ["buyers_3d", "buyers_all", "revenue_rows"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": start.isoformat(), "end": "2024-04-01"},
    }
    want = [
        (
            t.isoformat(),
            _distinct(t - dt.timedelta(days=2), t),
            _distinct(None, t),
            sum(1 for _, d, _, _ in SALES if d == t),
        )
        for t in _days(start)
    ]
    assert _run(q, engine, db) == want
    q2 = {
        "metrics": ["buyers_run"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": start.isoformat(), "end": "2024-04-01"},
    }
    assert _run(q2, engine, db) == [(t.isoformat(), _distinct(start, t)) for t in _days(start)]


def test_a_dense_series_carries_the_frame_over_empty_days(engine: Engine, db: Path) -> None:
    q = {
        "metrics": ["buyers_3d"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2024-02-02", "end": "2024-02-10"},
        "densify": "time",
    }
    days = [D(2024, 2, 2) + dt.timedelta(days=i) for i in range(8)]
    want = [
        (t.isoformat(), _distinct(max(t - dt.timedelta(days=2), D(2024, 1, 31)), t)) for t in days
    ]
    assert _run(q, engine, db) == want


def test_refusals_are_structured(engine: Engine) -> None:
    """A non-distinct base and a bucket-count frame are refused before any SQL; engines the
    correlated count is not checked on are gated."""
    day = ["metric_time:day"]
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": ["rows_run"], "group_by": day})
    assert err.value.code == "invalid_query"
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": ["buyers_3rows"], "group_by": day})
    assert err.value.code == "not_implemented"
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": ["buyers_run"], "group_by": day}, dialect="sqlite")
    assert err.value.code == "dialect_unsupported_window_function"


def test_count_distinct_is_newer_than_1_14() -> None:
    payload = {"v": "1.14", "window": {"type": "cumulative", "function": "count_distinct"}}
    sales_model = to_yaml(
        model_doc(
            [
                dataset(
                    "sales",
                    [field("sale_date", datatype="Date", is_time=True), field("customer")],
                )
            ],
            metrics=[metric("m", BASE, payload)],
        )
    )
    eng = Engine(model_text=sales_model)
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes


def test_postgres_answers_as_python(engine: Engine) -> None:
    """The same distinct frames compiled for PostgreSQL and run there (own schema)."""
    dsn = os.environ.get("DOSI_TEST_POSTGRES")
    if not dsn:
        pytest.skip("DOSI_TEST_POSTGRES is not set")
    import psycopg

    q = {"metrics": ["buyers_run", "buyers_mtd", "buyers_3d"], "group_by": ["metric_time:day"]}
    sql = engine.compile(q, dialect="postgres")["sql"]
    schema = f"s6cdist_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
        try:
            con.execute(f"SET search_path TO {schema}")
            for s in _statements():
                con.execute(s)
            got = [(r[0].isoformat(), *r[1:]) for r in con.execute(sql).fetchall()]
        finally:
            con.execute(f"DROP SCHEMA {schema} CASCADE")
    want = [
        (
            t.isoformat(),
            _distinct(None, t),
            _distinct(t.replace(day=1), t),
            _distinct(t - dt.timedelta(days=2), t),
        )
        for t in _days()
    ]
    assert got == want
