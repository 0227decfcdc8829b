"""Portability of D-LOD fixed fields (the shop cohort fields): the `dialect="postgres"` SQL of
two-stage rollups, broadcasts (NULL-safe joins) and grids run on PostgreSQL returns the rows
DuckDB returns (CHECKLIST LOD-PLAN-01..10, CORE-Q-10)."""

from __future__ import annotations

from typing import Any

import pytest
from portkit import Portability

QUERIES: dict[str, dict[str, Any]] = {
    "two-stage": {"metrics": ["customer_count"], "group_by": ["orders.cohort_month"]},
    "broadcast": {"metrics": ["revenue"], "group_by": ["orders.cohort_month", "metric_time:year"]},
    "row-level": {"metrics": ["revenue", "order_count"], "group_by": ["orders.order_kind"]},
    "cohort-where": {
        "metrics": ["revenue"],
        "group_by": ["orders.channel"],
        "where_sql": "orders.first_order_day < DATE '2024-01-01'",
    },
    "context": {
        "metrics": ["customer_count"],
        "group_by": ["orders.order_kind"],
        "context_filter": "orders.channel = 'web'",
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
    },
}


@pytest.mark.parametrize("query", list(QUERIES.values()), ids=list(QUERIES))
def test_lod_fields_on_postgres(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)
