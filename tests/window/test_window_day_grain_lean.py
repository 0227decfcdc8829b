"""Issue 27 item 4: a day-grain query of one aggregate (the running total at day grain, the
10M-row benchmark's slowest) groups by the day alone with DuckDB's no-op `HAVING COUNT(*) > 0`
beside it (Dialect.pre_aggregate_count_guard), and its rows stay exactly the hand-written
SQL's and plain Python's: gaps between days, NULL dates, NULL amounts, a day whose amounts
are all NULL, negative amounts, and ties (several orders on a day, equal daily totals).
Requirement IDs: WIN-CUM-01 (running total), WIN-FRM-19 (frames over the grouped buckets).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import dataset, field, make_db, metric, model_doc, to_yaml

from dosi.engine import Engine

D = dt.date
# (order_id, order_date, channel, amount)
ORDERS: tuple[tuple[int, dt.date | None, str, Decimal | None], ...] = (
    (1, D(2024, 1, 1), "web", Decimal("10.50")),
    (2, D(2024, 1, 1), "shop", Decimal("4.50")),  # ties: two orders on a day
    (3, D(2024, 1, 3), "web", Decimal("15.00")),  # a gap (Jan 2), equal to Jan 1's total
    (4, D(2024, 1, 4), "web", None),  # a day whose amounts are all NULL
    (5, D(2024, 1, 9), "shop", Decimal("-2.25")),  # a refund-like negative, after a gap
    (6, None, "web", Decimal("100.00")),  # no date: its own NULL bucket
    (7, D(2024, 1, 9), "web", None),
    (8, D(2024, 2, 1), "web", Decimal("7.00")),
    (9, D(2024, 2, 1), "shop", Decimal("7.00")),
)


def _statements() -> list[str]:
    def lit(v: Any) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, dt.date):
            return f"DATE '{v.isoformat()}'"
        if isinstance(v, str):
            return f"'{v}'"
        return str(v)

    values = ", ".join("(" + ", ".join(lit(v) for v in row) + ")" for row in ORDERS)
    return [
        "CREATE TABLE orders (order_id INTEGER, order_date DATE, channel VARCHAR, "
        "amount DECIMAL(12,2))",
        f"INSERT INTO orders VALUES {values}",
    ]


def _model() -> str:
    run = {"v": "1.3", "window": {"type": "cumulative", "function": "sum"}}
    return to_yaml(
        model_doc(
            [
                dataset(
                    "orders",
                    [
                        field("order_id", datatype="Integer"),
                        field("order_date", datatype="Date", is_time=True),
                        field("channel", datatype="String"),
                        field("amount", datatype="Decimal"),
                    ],
                    primary_key=["order_id"],
                )
            ],
            metrics=[
                metric("revenue", "SUM(orders.amount)"),
                metric("order_count", "COUNT(orders.order_id)"),
                metric("revenue_running", "SUM(orders.amount)", run),
                metric("count_running", "COUNT(orders.order_id)", run),
            ],
        )
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("lean") / "o.duckdb", _statements())


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model())
    yield eng
    eng.close()


def _iso(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Dates as the engine's rows carry them (ISO text)."""
    return [tuple(v.isoformat() if isinstance(v, dt.date) else v for v in r) for r in rows]


def _hand(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return _iso(con.sql(sql).fetchall())
    finally:
        con.close()


def _rows(
    engine: Engine, db: Path, query: dict[str, Any], cols: list[str]
) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in cols) for r in engine.execute(query, db_path=str(db))["rows"]]


def _running_python(
    start: dt.date | None = None, end: dt.date | None = None
) -> list[tuple[Any, ...]]:
    """(day, running SUM) in day order, NULL day last, computed from ORDERS by hand."""
    days: dict[dt.date | None, Decimal | None] = {}
    for _, d, _, a in ORDERS:
        if start is not None and (d is None or d < start):
            continue
        if end is not None and (d is None or d >= end):
            continue
        prev = days.get(d)
        days[d] = a if prev is None else (prev if a is None else prev + a)
    out, total = [], None
    for d in sorted(days, key=lambda x: (x is None, x or D(1, 1, 1))):
        v = days[d]
        if v is not None:
            total = v if total is None else total + v
        out.append((d, total))
    return _iso(out)


RUNNING_HAND = """
    WITH d AS (SELECT order_date AS t, SUM(amount) AS v FROM orders {where} GROUP BY 1)
    SELECT t, SUM(v) OVER (ORDER BY t ASC NULLS LAST
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    FROM d ORDER BY t ASC NULLS LAST
"""


def test_issue27_day_running_total_rows(engine: Engine, db: Path) -> None:
    got = _rows(
        engine,
        db,
        {"metrics": ["revenue_running"], "group_by": ["metric_time:day"]},
        ["metric_time__day", "revenue_running"],
    )
    assert got == _hand(db, RUNNING_HAND.format(where=""))
    assert got == _running_python()


def test_issue27_day_running_total_in_a_range(engine: Engine, db: Path) -> None:
    q = {
        "metrics": ["revenue_running"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2024-01-02", "end": "2024-02-01"},
    }
    got = _rows(engine, db, q, ["metric_time__day", "revenue_running"])
    where = "WHERE order_date >= DATE '2024-01-02' AND order_date < DATE '2024-02-01'"
    assert got == _hand(db, RUNNING_HAND.format(where=where))
    assert got == _running_python(D(2024, 1, 2), D(2024, 2, 1))


def test_issue27_day_sum_and_count_rows(engine: Engine, db: Path) -> None:
    """A lone SUM and a lone COUNT by day (the guard's shape), and both together (no guard)."""
    for metrics, hand in [
        (["revenue"], "SUM(amount)"),
        (["order_count"], "COUNT(order_id)"),
        (["revenue", "order_count"], "SUM(amount), COUNT(order_id)"),
    ]:
        got = _rows(
            engine,
            db,
            {"metrics": metrics, "group_by": ["metric_time:day"]},
            ["metric_time__day", *metrics],
        )
        want = _hand(
            db, f"SELECT order_date, {hand} FROM orders GROUP BY 1 ORDER BY 1 ASC NULLS LAST"
        )
        assert got == want, metrics


def test_issue27_day_running_count_and_by_channel(engine: Engine, db: Path) -> None:
    got = _rows(
        engine,
        db,
        {"metrics": ["count_running"], "group_by": ["metric_time:day"]},
        ["metric_time__day", "count_running"],
    )
    assert got == _hand(
        db,
        "WITH d AS (SELECT order_date AS t, COUNT(order_id) AS v FROM orders GROUP BY 1) "
        "SELECT t, SUM(v) OVER (ORDER BY t ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING "
        "AND CURRENT ROW) FROM d ORDER BY t ASC NULLS LAST",
    )
    by = _rows(
        engine,
        db,
        {"metrics": ["revenue_running"], "group_by": ["orders.channel", "metric_time:day"]},
        ["channel", "metric_time__day", "revenue_running"],
    )
    assert by == _hand(
        db,
        "WITH d AS (SELECT channel, order_date AS t, SUM(amount) AS v FROM orders GROUP BY 1, 2) "
        "SELECT channel, t, SUM(v) OVER (PARTITION BY channel ORDER BY t ASC NULLS LAST ROWS "
        "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM d "
        "ORDER BY channel ASC NULLS LAST, t ASC NULLS LAST",
    )


def test_issue27_guard_only_where_it_pays(engine: Engine) -> None:
    """An addition to the row checks: the no-op count sits beside one aggregate grouped by
    the day alone, not beside two aggregates or another key (measured slower there)."""

    def sql(q: dict[str, Any]) -> str:
        return str(engine.compile(q)["sql"])

    day = ["metric_time:day"]
    assert "HAVING COUNT(*) > 0" in sql({"metrics": ["revenue_running"], "group_by": day})
    assert "HAVING COUNT(*) > 0" in sql({"metrics": ["revenue"], "group_by": day})
    assert "HAVING" not in sql({"metrics": ["revenue", "order_count"], "group_by": day})
    assert "HAVING" not in sql({"metrics": ["revenue"], "group_by": ["orders.channel"]})
    assert "HAVING" not in sql(
        {"metrics": ["revenue"], "group_by": ["orders.channel", "metric_time:day"]}
    )
