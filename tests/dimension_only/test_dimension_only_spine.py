"""metric_time without metrics lists the model's time spine (issue 22 item 1, MetricFlow's
`metric_time` alone): a dimension-only query grouping by metric_time alone reads the buckets
of the declared time-spine table, within the time_range; without a spine, beside another
field, or finer than the spine's rows it is a structured error. Expected rows come from
hand-written SQL over the same DuckDB table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from densekit import build, model_text
from enginekit import result_rows

from dosi.engine import Engine
from dosi.errors import QueryError

SPINE = {"time_spine": {"dataset": "cal", "field": "d"}}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("dim_spine") / "s.duckdb")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=model_text(SPINE))
    yield eng
    eng.close()


def _hand(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [(r[0].isoformat(),) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def test_metric_time_alone_lists_the_spine_buckets(engine: Engine, db: Path) -> None:
    res = engine.execute(
        {"metrics": [], "group_by": ["metric_time:month"], "order_by": ["metric_time__month"]},
        db_path=db,
    )
    assert res["columns"] == ["metric_time__month"]
    want = _hand(db, "SELECT DISTINCT DATE_TRUNC('month', d)::DATE AS m FROM cal ORDER BY m")
    assert result_rows(res) == want
    assert len(want) == 36  # 2023-2025, every month once


def test_a_time_range_bounds_the_spine(engine: Engine, db: Path) -> None:
    """The time_range is on metric_time, the spine's date; the default grain is the spine's."""
    res = engine.execute(
        {
            "metrics": [],
            "group_by": ["metric_time"],
            "time_range": {"start": "2024-02-27", "end": "2024-03-02"},
            "order_by": ["metric_time__day"],
        },
        db_path=db,
    )
    want = _hand(
        db,
        "SELECT d FROM cal WHERE d >= DATE '2024-02-27' AND d < DATE '2024-03-02' ORDER BY d",
    )
    assert result_rows(res) == want
    assert [r[0] for r in want] == ["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"]


@pytest.mark.parametrize(
    ("settings", "group_by", "code"),
    [
        (None, ["metric_time:month"], "metric_time_needs_metric"),
        (SPINE, ["metric_time:month", "sales.region"], "metric_time_needs_metric"),
        (SPINE, ["metric_time:hour"], "grain_too_fine"),
    ],
)
def test_without_a_spine_or_beside_a_field_it_is_structured(
    settings: dict[str, Any] | None, group_by: list[str], code: str
) -> None:
    eng = Engine(model_text=model_text(settings))
    try:
        with pytest.raises(QueryError) as info:
            eng.compile({"metrics": [], "group_by": group_by})
        assert info.value.code == code
        assert info.value.hint
    finally:
        eng.close()


@pytest.mark.parametrize(
    ("part", "sql"),
    [
        ("day_of_week", "isodow(d)"),  # ISO: 1 = Monday (docs/calendar.md)
        ("month_of_year", "month(d)"),
        ("quarter_of_year", "quarter(d)"),
    ],
)
def test_metric_time_as_a_date_part_lists_the_spine_parts(
    engine: Engine, db: Path, part: str, sql: str
) -> None:
    """issue 22 item 3 (MetricFlow's `metric_time` with a date part alone): the distinct parts
    of the spine's days, as integers."""
    res = engine.execute(
        {"metrics": [], "group_by": [f"metric_time:{part}"], "order_by": [f"metric_time__{part}"]},
        db_path=db,
    )
    con = duckdb.connect(str(db), read_only=True)
    try:
        want = con.execute(f"SELECT DISTINCT {sql} AS p FROM cal ORDER BY p").fetchall()
    finally:
        con.close()
    assert [tuple(int(v) for v in r) for r in result_rows(res)] == [tuple(r) for r in want]


def test_a_stored_date_field_lists_its_date_parts(engine: Engine, db: Path) -> None:
    """The same for a stored date (a detail read of the distinct parts): the sales months."""
    res = engine.execute({"metrics": [], "group_by": ["sales.sale_date:month_of_year"]}, db_path=db)
    assert sorted(int(r[0]) for r in result_rows(res)) == [1, 3, 6]
