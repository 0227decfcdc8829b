"""A running total over the whole history (DATUS 1.15 `window.frame.history`, issue 22 item 7:
MetricFlow's cumulative metrics accumulate from the beginning of time): under a time_range
start, `history: "all"` accumulates every row before the range (the scan reads them, the trim
drops their buckets); the default (`"range"`) starts at the range start. Expected values from
hand-written SQL over the same DuckDB table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from densekit import build
from enginekit import dataset, field, metric, model_doc, result_rows, to_yaml

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError


def _w(window: dict[str, Any], v: str = "1.15") -> dict[str, Any]:
    return {"v": v, "window": window}


RUN_ALL = {"type": "cumulative", "function": "sum", "history": "all"}
METRICS = [
    metric("revenue", "SUM(sales.amount)"),
    metric("rev_run", "SUM(sales.amount)", _w({"type": "cumulative", "function": "sum"})),
    metric("rev_all", "SUM(sales.amount)", _w(RUN_ALL)),
    metric(
        "rev_all_frame",
        "SUM(sales.amount)",
        _w({"frame": {"function": "sum", "preceding": "unbounded", "history": "all"}}),
    ),
    metric(
        "rev_mom",
        "SUM(sales.amount)",
        _w({"type": "pop", "offset": "1 month", "calculation": "value"}),
    ),
]


def _model(metrics: list[dict[str, Any]]) -> str:
    sales = dataset(
        "sales",
        [
            field("sale_id", datatype="Integer"),
            field("sale_date", datatype="Date", is_time=True),
            field("region", datatype="String"),
            field("amount", datatype="Decimal"),
        ],
        primary_key=["sale_id"],
    )
    return to_yaml(model_doc([sales], metrics=metrics))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("history") / "h.duckdb")


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model(METRICS))
    yield eng
    eng.close()


def _hand(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    return [tuple(v.isoformat() if isinstance(v, dt.date) else v for v in r) for r in rows]


# the running total over every month, kept from March on (January's 15 counted)
_ALL_FROM_MARCH = """
WITH m AS (SELECT DATE_TRUNC('month', sale_date)::DATE AS m, SUM(amount) AS s FROM sales GROUP BY 1),
r AS (SELECT m, s, SUM(s) OVER (ORDER BY m) AS run FROM m)
SELECT m, {cols} FROM r WHERE m >= DATE '2024-03-01' AND m < DATE '2024-07-01' ORDER BY m
"""


def test_history_all_accumulates_the_rows_before_the_range(engine: Engine, db: Path) -> None:
    """March's running total counts January: 7 + 15; the default starts at March."""
    rng = {"start": "2024-03-01", "end": "2024-07-01"}
    q = {"metrics": ["rev_all", "rev_all_frame"], "group_by": ["metric_time:month"]}
    got = result_rows(engine.execute({**q, "time_range": rng}, db_path=db))
    assert got == _hand(db, _ALL_FROM_MARCH.format(cols="run, run"))
    assert [r[1] for r in got] == [22, 26]
    plain = {"metrics": ["rev_run"], "group_by": ["metric_time:month"], "time_range": rng}
    in_range = _hand(
        db,
        "SELECT m, SUM(s) OVER (ORDER BY m) FROM (SELECT DATE_TRUNC('month', sale_date)::DATE "
        "AS m, SUM(amount) AS s FROM sales WHERE sale_date >= DATE '2024-03-01' AND sale_date "
        "< DATE '2024-07-01' GROUP BY 1) ORDER BY m",
    )
    assert (
        result_rows(engine.execute(plain, db_path=db))
        == in_range
        == [
            ("2024-03-01", 7),
            ("2024-06-01", 11),
        ]
    )
    plan = engine.explain({**q, "time_range": rng})
    assert "history=all" in plan and "Trim metric_time__month in [2024-03-01" in plan


def test_a_range_bound_running_total_beside_it_is_refused(engine: Engine) -> None:
    """WIN-RES-04 unchanged: the range-bound running total would accumulate the rows the
    whole-history one loads."""
    q = {
        "metrics": ["rev_run", "rev_all"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    }
    with pytest.raises(QueryError) as info:
        engine.compile(q)
    assert info.value.code == "not_implemented" and "rev_run" in info.value.message


def test_history_beside_a_scan_widening_offset(engine: Engine, db: Path) -> None:
    """The whole-history running total needs no refusal beside an offset that widens the
    scan's start (a range-bound running total does: WIN-RES-04)."""
    q = {
        "metrics": ["revenue", "rev_all", "rev_mom"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    }
    got = result_rows(engine.execute(q, db_path=db))
    want = _hand(
        db,
        _ALL_FROM_MARCH.format(
            cols="s, run, (SELECT s FROM r r2 WHERE r2.m = r.m - INTERVAL 1 MONTH)"
        ),
    )
    assert got == want


def test_history_all_over_a_densified_series(engine: Engine, db: Path) -> None:
    """Densified, every month of the range carries the total so far (April and May: 22)."""
    q = {
        "metrics": ["rev_all"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
        "densify": "time",
    }
    got = result_rows(engine.execute(q, db_path=db))
    assert got == [("2024-03-01", 22), ("2024-04-01", 22), ("2024-05-01", 22), ("2024-06-01", 26)]


def test_version_gate() -> None:
    """history is a 1.15 shape: a payload declaring 1.14 gets the newer-key warning (and the
    shape is honoured, ENV-V-08)."""
    eng = Engine(model_text=_model([metric("m", "SUM(sales.amount)", _w(RUN_ALL, "1.14"))]))
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes


@pytest.mark.parametrize(
    ("window", "version", "fragment"),
    [
        ({"type": "cumulative", "function": "sum", "history": "always"}, "1.15", "history"),
        ({"type": "cumulative", "function": "sum", "reset": "year", "history": "all"}, "1.15",
         "running total"),
        ({"frame": {"function": "sum", "preceding": 2, "history": "all"}}, "1.15",
         "running total"),
    ],
)  # fmt: skip
def test_bad_history_fails_the_model(window: dict[str, Any], version: str, fragment: str) -> None:
    with pytest.raises(ModelError) as info:
        Engine(model_text=_model([metric("bad", "SUM(sales.amount)", _w(window, version))]))
    assert fragment in str(info.value)
