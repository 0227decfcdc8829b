"""Issue 27 item 3: the day pre-aggregation is chosen by a cost rule (a fact table the
connection's statistics know to be small is read in one GROUP BY) and never changes a result.

Every query runs on DuckDB twice on the same database: pre-aggregated always
(`pre_aggregate_min_rows = 0`) and with the rule (the shop's ~4,000 orders are small); the rows
must be identical, and the revenue series also equals sums computed in plain Python.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import SHOP_MODEL
from sqlglot import exp

from dosi import Engine
from dosi.plan.scan_sizes import UNKNOWN_SIZES, scan_sizes, table_name

T = "metric_time"
PRE = "AS pre"  # the pre-aggregation's derived table

QUERIES: list[dict[str, Any]] = [
    {"metrics": ["revenue"], "group_by": [f"{T}:month"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{T}:quarter"]},
    {"metrics": ["revenue"], "group_by": ["orders.channel", f"{T}:year"]},
    {"metrics": ["avg_order_value"], "group_by": ["customers.segment", f"{T}:quarter"]},
    {"metrics": ["revenue", "refund_total"], "group_by": [f"{T}:month"]},
    {
        "metrics": ["revenue", "revenue_mom"],
        "group_by": [f"{T}:month"],
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
    },
    {"metrics": ["revenue_rolling_3m"], "group_by": [f"{T}:month"]},
    {"metrics": ["revenue"], "group_by": ["regions.region_name", f"{T}:year"]},
    {
        "metrics": ["completed_revenue", "revenue"],
        "group_by": ["orders.status", f"{T}:quarter"],
        "where_sql": "orders.channel IN ('web', 'mobile')",
    },
    {"metrics": ["refund_total", "refund_count"], "group_by": [f"{T}:quarter"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{T}:week"], "limit": 10},
]


def _engines() -> tuple[Engine, Engine]:
    always, ruled = Engine(str(SHOP_MODEL)), Engine(str(SHOP_MODEL))
    always.pre_aggregate_min_rows = 0  # nothing is below 0 rows: pre-aggregate everywhere
    return always, ruled


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in result["rows"]]


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
def test_issue27_item3_rows_identical_with_and_without_pre_aggregation(
    shop_db: Path, query: dict[str, Any]
) -> None:
    always, ruled = _engines()
    try:
        a = always.execute(query, db_path=shop_db, cache=False)
        b = ruled.execute(query, db_path=shop_db, cache=False)
    finally:
        always.close()
        ruled.close()
    assert a["columns"] == b["columns"]
    assert _rows(a) == _rows(b)
    assert b["row_count"] > 0
    assert PRE not in b["sql"]  # the small table is read in one GROUP BY


def test_issue27_item3_both_plans_really_differ(shop_db: Path) -> None:
    """The comparison above is not vacuous: a month series is pre-aggregated when asked to be."""
    always, ruled = _engines()
    q = QUERIES[0]
    try:
        assert PRE in always.execute(q, db_path=shop_db, cache=False)["sql"]
        assert PRE not in ruled.execute(q, db_path=shop_db, cache=False)["sql"]
        assert PRE in ruled.compile(q)["sql"]  # no connection: sizes unknown, planned as large
    finally:
        always.close()
        ruled.close()


def test_issue27_item3_month_revenue_equals_hand_sums(shop_db: Path) -> None:
    """Both plans against sums computed in plain Python from the orders rows."""
    con = duckdb.connect(str(shop_db), read_only=True)
    try:
        orders = con.execute("SELECT order_date, amount FROM orders").fetchall()
    finally:
        con.close()
    expected: dict[str, Decimal] = defaultdict(Decimal)  # rows carry ISO dates
    for day, amount in orders:
        if day is not None and amount is not None:
            expected[day.replace(day=1).isoformat()] += amount
    always, ruled = _engines()
    try:
        for eng in (always, ruled):
            got = eng.execute(QUERIES[0], db_path=shop_db, cache=False)["rows"]
            rows = {r["metric_time__month"]: r["revenue"] for r in got}
            assert {k: v for k, v in rows.items() if k is not None} == dict(expected)
    finally:
        always.close()
        ruled.close()


def test_issue27_item3_plans_of_other_sizes_are_cached_apart(shop_db: Path) -> None:
    """One engine, the rule's threshold moved between calls: the exact and the literal-variant
    plan caches never answer with the other size's plan."""
    eng = Engine(str(SHOP_MODEL))
    base = {"metrics": ["revenue"], "group_by": [f"{T}:month"]}
    try:
        for i, limit in enumerate((5, 6, 7, 8, 9, 10)):
            q = {**base, "limit": limit}
            eng.pre_aggregate_min_rows = 0 if i % 2 else 5_000
            out = eng.execute(q, db_path=shop_db, cache=False)
            assert (PRE in out["sql"]) == bool(i % 2), (limit, out["sql"])
            assert f"LIMIT {limit}" in out["sql"]
            assert out["row_count"] == limit
    finally:
        eng.close()


def test_issue27_item3_sizes_from_table_statistics() -> None:
    eng = Engine(str(SHOP_MODEL))
    model = eng.model
    assert table_name(model.datasets["orders"].source) == "main.orders"
    small = scan_sizes(model, {"main.orders": 3_980, "main.refunds": 318}, 50_000)
    assert {"orders", "refunds"} <= small.small
    assert "events" not in small.small  # not in the statistics: unknown, planned as large
    large = scan_sizes(model, {"main.orders": 1_000_000}, 50_000)
    assert "orders" not in large.small
    assert scan_sizes(model, {}, 50_000) is UNKNOWN_SIZES
    # a SQL source has no table statistics
    assert table_name(exp.select("*").from_("orders").subquery()) is None
