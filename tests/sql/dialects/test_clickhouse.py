"""ClickHouse (dosi.sql.dialects.clickhouse): the statement carries join_use_nulls = 1, window
statistics read DOUBLE arguments and NaN as NULL, cume_dist keeps ClickHouse's spelling, and
the epoch conversions run on embedded chDB (when installed) as Python computes them."""

from __future__ import annotations

import datetime as dt
import importlib.util

import pytest
from sqlglot import exp, parse_one

from dosi.sql.dialects import get_dialect

CH = get_dialect("clickhouse")


def test_join_use_nulls_is_set_on_the_statement() -> None:
    tree = CH.finalize(parse_one("SELECT a FROM t LEFT JOIN u ON t.k = u.k"))
    assert tree.sql("clickhouse").endswith("SETTINGS join_use_nulls = 1")


def test_window_statistics_and_cume_dist() -> None:
    tree = parse_one(
        "SELECT CORR(a, b) OVER (ORDER BY t), CUME_DIST() OVER (ORDER BY t) FROM x",
        read="duckdb",
    )
    sql = CH.finalize(tree).sql("clickhouse")
    assert "isNaN(" in sql and "cume_dist()" in sql
    assert "CAST(a AS Float64)" in sql or "CAST(a AS Nullable(Float64))" in sql


@pytest.mark.skipif(importlib.util.find_spec("chdb") is None, reason="chdb is not installed")
def test_epochs_on_chdb() -> None:
    import chdb.session

    s = chdb.session.Session()
    try:
        moment = dt.datetime(2025, 11, 28, 12, 0, 30, 250000)
        lit = exp.Cast(
            this=exp.Literal.string(moment.isoformat(sep=" ")),
            to=exp.DataType.build("DateTime64(6)", dialect="clickhouse"),
        )
        sql = f"SELECT {CH.epoch_us(lit).sql('clickhouse')} AS e"
        got = int(s.query(sql, "CSV").data().strip())
        want = int((moment - dt.datetime(1970, 1, 1)).total_seconds() * 1_000_000)
        assert got == want
        day = exp.Cast(this=exp.Literal.string("2024-03-01"), to=exp.DataType.build("DATE"))
        got_day = int(s.query(f"SELECT {CH.epoch_us(day).sql('clickhouse')}", "CSV").data())
        assert got_day == (dt.date(2024, 3, 1) - dt.date(1970, 1, 1)).days * 86_400_000_000
    finally:
        s.close()
