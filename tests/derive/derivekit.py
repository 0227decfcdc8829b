"""A tiny three-fact model (orders, refunds, visits: no relationships, so only metric_time is
shared) with gaps, NULLs and ties, built into DuckDB; expected values come from hand-written
SQL over the same tables, never from dosi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

TABLES = {
    "orders": (
        "order_id INT, order_date DATE, region VARCHAR, status VARCHAR, amount DOUBLE, "
        "customer_id INT",
        [
            (1, "2024-01-05", "east", "completed", 100, 1),
            (2, "2024-01-20", "west", "cancelled", 50, 2),
            (3, "2024-01-25", "east", "completed", None, 1),
            (4, "2024-03-03", "west", "completed", 70, 3),
            (5, "2024-03-15", "east", "pending", 30, 2),
            (6, "2024-04-01", "east", "completed", 100, 1),
            (7, "2024-04-09", "west", "completed", 100, 3),
            (8, "2024-06-10", "west", "cancelled", 20, 2),
            (9, "2024-06-11", "east", "completed", 40, None),
        ],
    ),
    "refunds": (
        "refund_id INT, refund_date DATE, region VARCHAR, ref_amount DOUBLE",
        [
            (1, "2024-01-22", "east", 10),
            (2, "2024-02-02", "west", 5),
            (3, "2024-04-10", "east", None),
            (4, "2024-04-11", "west", 30),
            (5, "2024-07-01", "east", 7),
        ],
    ),
    "visits": (
        "visit_id INT, visit_date DATE, region VARCHAR, converted INT",
        [
            (1, "2024-01-01", "east", 1),
            (2, "2024-01-02", "east", 0),
            (3, "2024-01-03", "west", 1),
            (4, "2024-03-01", "west", 0),
            (5, "2024-03-02", "west", 0),
            (6, "2024-04-01", "east", 1),
            (7, "2024-04-02", "west", 1),
            (8, "2024-06-02", "east", 0),
            (9, "2024-06-03", "west", 1),
            (10, "2024-06-04", "west", 1),
        ],
    ),
}


def build_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    for name, (cols, rows) in TABLES.items():
        con.execute(f"CREATE TABLE {name} ({cols})")
        marks = ", ".join("?" for _ in rows[0])
        con.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
    con.close()
    return path


def _field(name: str, dim: bool, is_time: bool = False) -> dict[str, Any]:
    f: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": name}]},
    }
    if dim:
        f["dimension"] = {"is_time": is_time}
    return f


def metric(name: str, expression: str, ext: dict[str, Any] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expression}]},
    }
    if ext is not None:
        m["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(ext)}]
    return m


BASE_METRICS = [
    metric("revenue", "SUM(orders.amount)"),
    metric("order_count", "COUNT(orders.order_id)"),
    metric("customers", "COUNT(DISTINCT orders.customer_id)"),
    metric("total_refunds", "SUM(refunds.ref_amount)"),
    metric("visit_count", "COUNT(visits.visit_id)"),
    metric("conversions", "SUM(visits.converted)"),
    metric("close_rate", "SUM(visits.converted) / COUNT(visits.visit_id)"),
    metric("avg_amount", "AVG(orders.amount)"),
]


def model(extra: list[dict[str, Any]]) -> str:
    def ds(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
        return {"name": name, "source": name, "primary_key": [fields[0]["name"]], "fields": fields}

    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "derive_mini",
                "datasets": [
                    ds(
                        "orders",
                        [
                            _field("order_id", False),
                            _field("order_date", True, True),
                            _field("region", True),
                            _field("status", True),
                            _field("amount", False),
                            _field("customer_id", True),
                        ],
                    ),
                    ds(
                        "refunds",
                        [
                            _field("refund_id", False),
                            _field("refund_date", True, True),
                            _field("region", True),
                            _field("ref_amount", False),
                        ],
                    ),
                    ds(
                        "visits",
                        [
                            _field("visit_id", False),
                            _field("visit_date", True, True),
                            _field("region", True),
                            _field("converted", False),
                        ],
                    ),
                ],
                "metrics": [*BASE_METRICS, *extra],
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)
