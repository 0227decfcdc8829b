"""Issue 28 item 1 (COUNT DISTINCT only where an exact state is stored): a rollup holding
`customer_count` stores the distinct key (orders.customer_id) as one more group column, so a
month, a year or the total counts each customer once, exactly as the fact table does. The
expected rows are hand-written SQL over the DuckDB file, not another dosi query."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import SHOP_MODEL

from dosi import Engine

DECL: dict[str, Any] = {
    "rollups": [
        {
            "name": "customers_daily",
            "dataset": "orders",
            "time": "order_date",
            "grain": "day",
            "dimensions": ["channel"],
            "measures": ["customer_count", "revenue"],
        }
    ]
}


@pytest.fixture(scope="module")
def setup(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("rollup_distinct")
    db = folder / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    engine = Engine(SHOP_MODEL, rollups=DECL, rollup_store=folder / "s.duckdb", result_cache=False)
    engine.rollups_build(db_path=db)
    yield engine, db
    engine.close()


def _hand(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def _got(engine: Engine, db: Path, q: dict[str, Any]) -> list[tuple[Any, ...]]:
    res = engine.execute(q, db_path=db)
    assert "dosi_rollups" in res["sql"], res["sql"]  # served by the rollup
    return sorted(tuple(r[c] for c in res["columns"]) for r in res["rows"])


def test_issue28_1_count_distinct_month_is_exact(setup: Any) -> None:
    engine, db = setup
    want = _hand(
        db,
        "SELECT date_trunc('month', order_date)::DATE, count(DISTINCT customer_id) "
        "FROM orders GROUP BY 1 ORDER BY 1",
    )
    got = _got(engine, db, {"metrics": ["customer_count"], "group_by": ["metric_time:month"]})
    assert [(r[0], r[1]) for r in got] == [(w[0].isoformat(), w[1]) for w in want]
    # a customer who ordered on several days of a month counts once (the check is not vacuous)
    daily = _hand(
        db,
        "SELECT sum(n) FROM (SELECT count(DISTINCT customer_id) AS n FROM orders "
        "GROUP BY order_date)",
    )[0][0]
    assert daily > sum(w[1] for w in want)


def test_issue28_1_count_distinct_total_and_channel(setup: Any) -> None:
    engine, db = setup
    total = _hand(db, "SELECT count(DISTINCT customer_id) FROM orders")[0][0]
    assert _got(engine, db, {"metrics": ["customer_count"]}) == [(total,)]
    want = _hand(
        db,
        "SELECT channel, count(DISTINCT customer_id), sum(amount) FROM orders "
        "WHERE channel <> 'store' GROUP BY 1 ORDER BY 1",
    )
    got = _got(
        engine,
        db,
        {
            "metrics": ["customer_count", "revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.channel <> 'store'",
        },
    )
    assert [(g[0], g[1], float(g[2])) for g in got] == [(w[0], w[1], float(w[2])) for w in want]


def test_issue28_1_count_distinct_year_bounds(setup: Any) -> None:
    engine, db = setup
    want = _hand(
        db,
        "SELECT year(order_date), count(DISTINCT customer_id) FROM orders "
        "WHERE order_date >= DATE '2024-02-01' AND order_date < DATE '2025-01-01' GROUP BY 1",
    )
    got = _got(
        engine,
        db,
        {
            "metrics": ["customer_count"],
            "group_by": ["metric_time:year"],
            "time_range": {"start": "2024-02-01", "end": "2025-01-01"},
        },
    )
    assert [(int(g[0][:4]), g[1]) for g in got] == want
