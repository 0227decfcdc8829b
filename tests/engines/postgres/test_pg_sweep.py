"""Property-style sweep: every non-window metric (the shop's and the extra ratio / expression
metrics) × a set of dimensions and grains, compiled for postgres, runs on PostgreSQL and matches
DuckDB; a combination the engine rejects is rejected for postgres with the same error code.
Then random multi-metric, multi-dimension queries with filters, ranges and limits (hypothesis,
derandomized so a failure reproduces)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from portkit import EXTRA_METRICS, Portability

from dosi.errors import QueryError

SHOP_METRICS = (
    "revenue",
    "order_count",
    "customer_count",
    "avg_order_value",
    "net_revenue",
    "completed_revenue",
    "items_sold",
    "line_revenue",
    "order_line_count",
    "refund_total",
    "refund_count",
    "event_count",
    "event_value",
    "active_users",
)
EXTRA = tuple(m["name"] for m in EXTRA_METRICS if "ext" not in m)  # non-window extras
METRICS = SHOP_METRICS + EXTRA

DIMENSIONS = (
    "orders.channel",
    "orders.status",
    "customers.segment",
    "customers.signup_date:year",
    "regions.region_name",
    "regions.country",
    "products.category",
    "events.event_type",
    "metric_time:day",
    "metric_time:week",
    "metric_time:month",
    "metric_time:quarter",
    "metric_time:year",
    "orders.order_date:month",
    "refunds.refund_date:quarter",
    "events.event_ts:week",
)


def compare_or_same_error(port: Portability, query: dict[str, Any]) -> bool:
    """True when both engines ran and agreed; False when both dialects reject the query alike."""
    try:
        port.engine.compile(query, dialect="duckdb")
    except QueryError as duck_err:
        with pytest.raises(QueryError) as pg_err:
            port.engine.compile(query, dialect="postgres")
        assert pg_err.value.code == duck_err.code
        return False
    port.check(query, min_rows=0)
    return True


@pytest.mark.parametrize("dimension", DIMENSIONS)
@pytest.mark.parametrize("metric", METRICS)
def test_metric_by_dimension(port_ext: Portability, metric: str, dimension: str) -> None:
    compare_or_same_error(port_ext, {"metrics": [metric], "group_by": [dimension]})


@pytest.mark.parametrize("metric", METRICS)
def test_metric_total(port_ext: Portability, metric: str) -> None:
    port_ext.check({"metrics": [metric]})


def test_sweep_is_mostly_runnable(port_ext: Portability) -> None:
    """Guard against a vacuous sweep: most metric × dimension pairs compile."""
    ok = 0
    for metric in METRICS:
        for dimension in DIMENSIONS:
            try:
                port_ext.engine.compile({"metrics": [metric], "group_by": [dimension]}, "postgres")
                ok += 1
            except QueryError:
                pass
    assert ok >= 0.6 * len(METRICS) * len(DIMENSIONS)


# ------------------------------------------------------------------------------ random queries

WHERES = (
    None,
    "orders.status = 'completed'",
    "orders.channel IS NULL OR orders.channel = 'store'",
    "customers.segment IN ('consumer', 'corporate')",
    "regions.country <> 'US'",
    "events.event_type <> 'page_view'",
    "orders.amount BETWEEN 50 AND 500",
)
RANGES = (
    None,
    {"start": "2024-01-01", "end": "2025-01-01"},
    {"start": "2025-06-15"},
    {"end": "2023-04-01"},
    {"start": "2024-02-01", "end": "2024-03-01"},
)


@st.composite
def queries(draw: st.DrawFn) -> dict[str, Any]:
    metrics = draw(st.lists(st.sampled_from(METRICS), min_size=1, max_size=3, unique=True))
    dims = draw(st.lists(st.sampled_from(DIMENSIONS), min_size=0, max_size=2, unique=True))
    query: dict[str, Any] = {"metrics": metrics}
    if dims:
        query["group_by"] = dims
    where = draw(st.sampled_from(WHERES))
    if where is not None:
        query["where_sql"] = where
    time_range = draw(st.sampled_from(RANGES))
    if time_range is not None:
        query["time_range"] = time_range
    if draw(st.booleans()):
        # ascending: NULLs sort last on both engines (DESC follows each warehouse's default)
        query["order_by"] = [{"key": draw(st.sampled_from(metrics)), "desc": False}]
        query["limit"] = draw(st.integers(min_value=1, max_value=12))
    return query


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(query=queries())
def test_random_queries(port_ext: Portability, query: dict[str, Any]) -> None:
    ran = compare_or_same_error(port_ext, query)
    event("compared on both engines" if ran else "rejected alike by both dialects")
