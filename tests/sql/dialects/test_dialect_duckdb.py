"""DuckDB (dosi.sql.dialects.duckdb): the base builders as they are, executed on DuckDB."""

from __future__ import annotations

import datetime as dt

import duckdb
from sqlglot import exp

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
