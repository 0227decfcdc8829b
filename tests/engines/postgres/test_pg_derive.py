"""Portability of D-DERIVE metrics: filter / compose (flatten tier), window.base over filter,
ratio and cross-fact compose series, composes over window outputs (stage tier) and nested
windows (levels 2 and 3), run on PostgreSQL and compared with DuckDB.

Checklist: DRV-FIL-02/03, DRV-CMP-04/10, DRV-NEST-08, WIN-BASE-02/05/08/09, WIN-19-06/08.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from portkit import Portability, extended_model_text

import dosi

PART = {"mode": "query_dimensions"}
DERIVED: list[dict[str, Any]] = [
    {
        "name": "revenue_cum",
        "expression": "SUM(orders.amount)",
        "ext": {"window": {"type": "cumulative", "function": "sum"}},
    },
    {
        "name": "orders_cum",
        "expression": "COUNT(orders.order_id)",
        "ext": {"window": {"type": "cumulative", "function": "sum"}},
    },
    {
        "name": "cum_aov",
        "expression": "SUM(orders.amount) / COUNT(orders.order_id)",
        "ext": {"derive": {"type": "compose", "expr": "revenue_cum / orders_cum"}},
    },
    {
        "name": "cum_aov_avg2",
        "expression": "SUM(orders.amount)",
        "ext": {
            "v": "1.9",
            "window": {
                "base": "cum_aov",
                "frame": {"function": "avg", "preceding": 1, "partition": PART},
            },
        },
    },
    {
        "name": "cum_aov_gap",
        "expression": "SUM(orders.amount)",
        "ext": {"derive": {"type": "compose", "expr": "cum_aov_avg2 - cum_aov", "fill": 0}},
    },
    {
        "name": "cum_aov_gap_rank",
        "expression": "SUM(orders.amount)",
        "ext": {
            "v": "1.9",
            "window": {
                "base": "cum_aov_gap",
                "rank": {
                    "function": "dense_rank",
                    "order": {"by": "value", "direction": "desc", "nulls": "last"},
                    "partition": PART,
                },
            },
        },
    },
    {
        "name": "net_rank",
        "expression": "SUM(orders.amount)",
        "ext": {
            "v": "1.9",
            "window": {
                "base": "revenue_net_of_refunds",
                "rank": {"function": "rank", "order": {"by": "value", "direction": "desc"}},
            },
        },
    },
]

QUERIES: dict[str, dict[str, Any]] = {
    "flatten-month": {
        "metrics": [
            "revenue_net_of_refunds",
            "completed_revenue",
            "completed_orders",
            "close_rate",
        ],
        "group_by": ["metric_time:month"],
    },
    "filter-base-mom": {
        "metrics": ["completed_revenue", "completed_revenue_mom"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "end": "2025-07-01"},
    },
    "ratio-rank-channel": {
        "metrics": ["close_rate", "close_rate_rank"],
        "group_by": ["orders.channel"],
    },
    "ratio-rank-segment-month": {
        "metrics": ["close_rate_rank"],
        "group_by": ["customers.segment", "metric_time:quarter"],
    },
    "cross-fact-rank": {
        "metrics": ["revenue_net_of_refunds", "net_rank"],
        "group_by": ["metric_time:month"],
    },
    "stage-and-nested": {
        "metrics": ["cum_aov", "cum_aov_avg2", "cum_aov_gap", "cum_aov_gap_rank"],
        "group_by": ["orders.channel", "metric_time:month"],
    },
    "nested-range": {
        "metrics": ["cum_aov_avg2", "cum_aov_gap"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-06-01", "end": "2025-06-01"},
    },
}


@pytest.fixture(scope="module")
def port_derive(shop_db: Path, pg_dsn: str) -> Iterator[Portability]:
    e = dosi.Engine(model_text=extended_model_text(DERIVED))
    yield Portability(e, shop_db, pg_dsn)
    e.close()


@pytest.mark.parametrize("name", list(QUERIES), ids=list(QUERIES))
def test_derived_metrics_on_postgres(port_derive: Portability, name: str) -> None:
    port_derive.check(QUERIES[name])
