"""DuckDB (dosi.sql.dialects.duckdb): the base builders as they are, executed on DuckDB."""

from __future__ import annotations

import datetime as dt

import duckdb
from enginekit import SHOP_MODEL
from sqlglot import exp

from dosi.engine import Engine
from dosi.sql.dialects import get_dialect

DUCK = get_dialect("duckdb")


def test_base_builders_run_on_duckdb() -> None:
    con = duckdb.connect()
    try:
        day = DUCK.time_literal(dt.date(2024, 3, 31), "Date")
        shifted = DUCK.shift(day, -1, "month").sql("duckdb")
        assert con.sql(f"SELECT {shifted}").fetchall()[0][0] == dt.datetime(2024, 2, 29)
        week = DUCK.bucket(day.copy(), "week").sql("duckdb")
        assert con.sql(f"SELECT {week}").fetchall()[0][0] == dt.datetime(2024, 3, 25)
        assert DUCK.finalize(exp.select("1")).sql("duckdb") == "SELECT 1"
    finally:
        con.close()


def test_day_pre_aggregation_keeps_a_count_beside_a_lone_sum() -> None:
    """docs/performance.md, rule 4: DuckDB's pre-aggregation by the raw date alone carries a no-op
    HAVING COUNT(*) > 0 (a perfect-hash GROUP BY on a DATE key with a lone SUM ran 2x slower
    without it); it keeps every group, so the rows equal a hand-written monthly sum. Other
    dialects, and pre-aggregations grouped by more than the date, do without it."""
    eng = Engine(model_path=SHOP_MODEL)
    month = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
    sql = eng.compile(month)["sql"]
    assert "GROUP BY orders.order_date HAVING COUNT(*) > 0) AS pre" in sql
    assert "HAVING" not in eng.compile(month, dialect="postgres")["sql"]
    by_channel = {"metrics": ["revenue"], "group_by": ["orders.channel", "metric_time:month"]}
    assert "HAVING" not in eng.compile(by_channel)["sql"]
    con = duckdb.connect()
    try:
        con.execute(
            "CREATE TABLE orders AS SELECT * FROM (VALUES "
            "(DATE '2024-01-03', 10.50::DECIMAL(12,2)), (DATE '2024-01-03', 2.00), "
            "(DATE '2024-01-20', 1.25), (DATE '2024-03-01', 7.00)) t(order_date, amount)"
        )
        got = con.sql(sql).fetchall()
    finally:
        con.close()
    assert [(str(m), float(v)) for m, v in got] == [("2024-01-01", 13.75), ("2024-03-01", 7.0)]
