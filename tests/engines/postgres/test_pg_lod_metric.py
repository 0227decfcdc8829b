"""Portability of D-LOD metrics (datus-extensions §3 D-LOD): the include / attach stages
compiled for PostgreSQL return the rows DuckDB returns, over examples/shop/lod_model.yaml
(NULL-safe attach joins on a NULL channel, the include's inner grouping by month, the
fixed side before dimension filters; CHECKLIST LOD-REL-02/08/10, LOD-FXM-02/04)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from portkit import Portability

import dosi

LOD_MODEL = Path(__file__).resolve().parents[3] / "examples" / "shop" / "lod_model.yaml"


@pytest.fixture(scope="module")
def port_lod(shop_db: Path, pg_dsn: str) -> Iterator[Portability]:
    e = dosi.Engine(model_path=str(LOD_MODEL))
    yield Portability(e, shop_db, pg_dsn)
    e.close()


QUERIES: dict[str, dict[str, Any]] = {
    "share-of-region": {
        "metrics": ["revenue", "revenue_region_total", "channel_share_of_region"],
        "group_by": ["regions.region_name", "orders.channel"],
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
    },
    "fixed-before-filters": {
        "metrics": ["revenue", "revenue_all_time"],
        "group_by": ["orders.channel"],
        "where_sql": "orders.status = 'completed'",
    },
    "include-by-month": {
        "metrics": ["revenue_per_customer"],
        "group_by": ["metric_time:month"],
        "where_sql": "orders.channel IS NOT NULL",
    },
    "share-by-year": {
        "metrics": ["channel_share_of_region"],
        "group_by": ["metric_time:year", "regions.region_name", "orders.channel"],
    },
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_lod_metrics_on_postgres(port_lod: Portability, name: str) -> None:
    port_lod.check(QUERIES[name])
