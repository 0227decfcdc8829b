"""`time_ranges` (CORE-Q-11): tagged ranges give `<metric>__<tag>` columns through per-tag
conditional aggregation, the gates OR-ed into the scan. Expected numbers from hand-written
DuckDB SQL over the test_params table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from enginekit import SHOP_MODEL, build_shop
from test_params import HEAD, METRICS, approx, db, sql_rows, values  # noqa: F401

from dosi import Engine
from dosi.errors import QueryError

EXTRA = """      - name: cnt
        expression: {dialects: [{dialect: ANSI_SQL, expression: "COUNT(*)"}]}
      - name: per_region
        expression: {dialects: [{dialect: ANSI_SQL, expression: "SUM(sales.amount) / COUNT(DISTINCT sales.region)"}]}
"""
H1 = {"tag": "h1", "start": "2024-01-01", "end": "2024-07-01"}
H2 = {"tag": "h2", "start": "2024-07-01", "end": "2025-01-01"}


@pytest.fixture(scope="module")
def eng() -> Engine:
    return Engine(model_text=HEAD + METRICS + EXTRA)


def gate(col: str, start: str, end: str) -> str:
    return f"{col} >= DATE '{start}' AND {col} < DATE '{end}'"


def test_core_q_11_tagged_columns_by_region(eng: Engine, db: Path) -> None:  # noqa: F811
    g1, g2 = (
        gate("sale_date", "2024-01-01", "2024-07-01"),
        gate("sale_date", "2024-07-01", "2025-01-01"),
    )
    want = sql_rows(
        db,
        f"SELECT region, SUM(CASE WHEN {g1} THEN amount END), SUM(CASE WHEN {g2} THEN amount END), "
        f"COUNT(CASE WHEN {g1} THEN 1 END), COUNT(CASE WHEN {g2} THEN 1 END), "
        f"SUM(CASE WHEN {g1} THEN amount END) / COUNT(DISTINCT CASE WHEN {g1} THEN region END) "
        f"FROM sales WHERE ({g1}) OR ({g2}) GROUP BY region ORDER BY region",
    )
    q = {
        "metrics": ["revenue", "cnt", "per_region"],
        "group_by": ["sales.region"],
        "time_ranges": [H1, H2],
    }
    res = eng.execute(q, db_path=db)
    assert res["columns"] == [
        "region",
        "revenue__h1",
        "revenue__h2",
        "cnt__h1",
        "cnt__h2",
        "per_region__h1",
        "per_region__h2",
    ]
    assert [r[:6] for r in values(res)] == approx(want)
    assert res["outputs"][0] == {"column": "revenue__h1", "metric": "revenue"}


def test_core_q_11_rows_outside_every_range_are_not_scanned(eng: Engine, db: Path) -> None:  # noqa: F811
    """The OR of the gates filters the scan: months in no range produce no row."""
    q = {
        "metrics": ["revenue"],
        "group_by": ["metric_time:month"],
        "time_ranges": [
            {"tag": "q1", "start": "2024-01-01", "end": "2024-04-01"},
            {"tag": "q4", "start": "2024-10-01", "end": "2025-01-01"},
        ],
    }
    res = eng.execute(q, db_path=db)
    months = [r[0].month for r in values(res)]
    assert months == [1, 2, 3, 10, 11, 12]
    want = sql_rows(
        db,
        "SELECT date_trunc('month', sale_date)::DATE, SUM(amount) FROM sales "
        "WHERE month(sale_date) IN (1,2,3,10,11,12) GROUP BY 1 ORDER BY 1",
    )
    got = [(m, a if a is not None else b) for m, a, b in values(res)]
    assert got == approx(want)


def test_core_q_11_with_row_filter(eng: Engine, db: Path) -> None:  # noqa: F811
    """A where_sql row filter ANDs with the OR of the gates."""
    q = {"metrics": ["revenue"], "time_ranges": [H1, H2], "where_sql": "sales.region = 'east'"}
    g1, g2 = (
        gate("sale_date", "2024-01-01", "2024-07-01"),
        gate("sale_date", "2024-07-01", "2025-01-01"),
    )
    want = sql_rows(
        db,
        f"SELECT SUM(CASE WHEN {g1} THEN amount END), SUM(CASE WHEN {g2} THEN amount END) "
        "FROM sales WHERE region = 'east'",
    )
    assert values(eng.execute(q, db_path=db)) == approx(want)


@pytest.mark.parametrize(
    ("q", "code"),
    [
        ({"time_ranges": [H1], "time_range": {"start": "2024-01-01"}}, "unsupported_filter"),
        ({"time_ranges": [H1, H1]}, "unsupported_filter"),
        ({"time_ranges": [{"tag": "H-1", "start": "2024-01-01"}]}, "unsupported_filter"),
        ({"time_ranges": [{"tag": "h1"}]}, "unsupported_filter"),
        (
            {"time_ranges": [{**H1, "dimension": "sales.sale_date"}, H2]},
            "time_range_needs_dimension",
        ),
        ({"time_ranges": [H1], "where_sql": "revenue > 3"}, "unsupported_filter"),
        ({"time_ranges": [H1], "order_by": ["revenue"]}, "unknown_order_key"),
        (
            {"time_ranges": [H1], "metrics": ["moving_avg"], "group_by": ["metric_time:month"]},
            "not_implemented",
        ),
    ],
)
def test_core_q_11_rejections(eng: Engine, q: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], **q})
    assert info.value.code == code


def test_core_q_11_two_fact_datasets_each_on_its_own_axis(tmp_path: Path) -> None:
    """Without `dimension`, each fact dataset's tags gate its own date (orders by order_date,
    refunds by refund_date), the OR on each branch's scan, merged by month."""
    shop_db = build_shop(tmp_path / "shop.duckdb")
    eng = Engine(model_path=SHOP_MODEL)
    q = {
        "metrics": ["revenue", "refund_total"],
        "group_by": ["metric_time:month"],
        "time_ranges": [H1, H2],
    }
    res = eng.execute(q, db_path=shop_db)
    assert res["columns"] == [
        "metric_time__month",
        "revenue__h1",
        "revenue__h2",
        "refund_total__h1",
        "refund_total__h2",
    ]
    o1, o2 = (
        gate("order_date", "2024-01-01", "2024-07-01"),
        gate("order_date", "2024-07-01", "2025-01-01"),
    )
    r1, r2 = (
        gate("refund_date", "2024-01-01", "2024-07-01"),
        gate("refund_date", "2024-07-01", "2025-01-01"),
    )
    want = sql_rows(
        shop_db,
        "WITH o AS (SELECT date_trunc('month', order_date)::DATE m, "
        f"SUM(CASE WHEN {o1} THEN amount END) a1, SUM(CASE WHEN {o2} THEN amount END) a2 "
        f"FROM orders WHERE ({o1}) OR ({o2}) GROUP BY 1), "
        "r AS (SELECT date_trunc('month', refund_date)::DATE m, "
        f"SUM(CASE WHEN {r1} THEN refund_amount END) b1, "
        f"SUM(CASE WHEN {r2} THEN refund_amount END) b2 "
        f"FROM refunds WHERE ({r1}) OR ({r2}) GROUP BY 1) "
        "SELECT COALESCE(o.m, r.m) m, o.a1, o.a2, COALESCE(r.b1, 0), COALESCE(r.b2, 0) "
        "FROM o FULL JOIN r ON o.m = r.m ORDER BY m",
    )
    got = [
        tuple(float(v) if v is not None and not isinstance(v, dt.date) else v for v in r)
        for r in values(res)
    ]
    assert got == approx(
        [
            tuple(float(v) if v is not None and not isinstance(v, dt.date) else v for v in r)
            for r in want
        ]
    )
    assert len(got) == 12
