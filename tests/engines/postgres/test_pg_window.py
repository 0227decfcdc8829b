"""Portability of D-WINDOW metrics: every family (offset incl. forward, frame: rolling and
cumulative with and without reset, rank, value), every frame / rank / value function and the
shared modifiers (order incl. 1.9 `nulls`, partition modes, `units: range`, 1.9 `scope`), with
and without `time_range`, run on PostgreSQL and compared with DuckDB.

Checklist: WIN-OFF-*, WIN-ENUM-02..06 (calculations, NULLIF division), WIN-FRM-*, WIN-ROL-*,
WIN-CUM-*, WIN-RNK-*, WIN-VAL-*, WIN-19-01..04, WIN-RES-01..05 (offsets and resets widen the
scan under a time_range and trim the output; restrictions are rejected alike on every dialect).
"""

from __future__ import annotations

from typing import Any

import pytest
from portkit import EXTRA_METRICS, WINDOW_METRICS, Portability, extended_model_text

import dosi
from dosi.errors import QueryError

SHOP_WINDOWS = (
    "revenue_mom",
    "revenue_yoy",
    "revenue_rolling_3m",
    "revenue_ytd",
    "revenue_running",
    "revenue_rank",
    "first_month_revenue",
    "revenue_next_month",
)

# group_by and time_range shapes each window metric is queried with
SHAPES: dict[str, dict[str, Any]] = {
    "month": {"group_by": ["metric_time:month"]},
    "month-range": {
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2025-09-01"},
    },
    "channel-quarter": {"group_by": ["orders.channel", "metric_time:quarter"]},
    "segment-month-range": {
        "group_by": ["customers.segment", "metric_time:month"],
        "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
    },
    "week-range": {
        "group_by": ["metric_time:week"],
        "time_range": {"start": "2025-05-01", "end": "2025-09-01"},
    },
    "day-range": {
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2025-06-20", "end": "2025-08-10"},
    },
    "year": {"group_by": ["metric_time:year"]},
    "order-date-month-where": {
        "group_by": ["orders.order_date:month"],
        "where_sql": "orders.status <> 'cancelled'",
        "time_range": {"end": "2025-01-01"},
    },
}


def run_or_same_error(port: Portability, query: dict[str, Any]) -> None:
    """Compare both engines; a query the engine rejects must be rejected for postgres too
    (same error code), since restrictions never depend on the dialect."""
    try:
        port.engine.compile(query, dialect="duckdb")
    except QueryError as duck_err:
        with pytest.raises(QueryError) as pg_err:
            port.engine.compile(query, dialect="postgres")
        assert pg_err.value.code == duck_err.code
        return
    port.check(query)


@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("metric", SHOP_WINDOWS)
def test_shop_window_metrics(port: Portability, metric: str, shape: str) -> None:
    run_or_same_error(port, {"metrics": ["revenue", metric], **SHAPES[shape]})


# Cases that differ between warehouses by design would be marked here; none remain since CORR
# without variance is NULL everywhere and ROWS frames break ties on the other dimensions.
KNOWN: dict[tuple[str, str], pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    ("metric", "shape"),
    [
        pytest.param(m, s, id=f"{m}-{s}", marks=[KNOWN[(m, s)]] if (m, s) in KNOWN else [])
        for m in WINDOW_METRICS
        for s in SHAPES
    ],
)
def test_window_functions_and_modifiers(port_ext: Portability, metric: str, shape: str) -> None:
    run_or_same_error(port_ext, {"metrics": ["revenue", metric], **SHAPES[shape]})


def test_most_window_shapes_compile() -> None:
    """Guard for the two sweeps above: rejected combinations are a minority."""
    eng = dosi.Engine(model_text=extended_model_text(EXTRA_METRICS))
    ok = total = 0
    for metric in (*SHOP_WINDOWS, *WINDOW_METRICS):
        for shape in SHAPES.values():
            total += 1
            try:
                eng.compile({"metrics": ["revenue", metric], **shape}, dialect="postgres")
                ok += 1
            except QueryError:
                pass
    assert ok >= 0.75 * total, f"only {ok} of {total} window queries compile"


# ------------------------------------------------ examples/shop/README.md examples

README = {
    "3-pop-across-gap": {
        "metrics": ["revenue", "revenue_mom", "revenue_yoy"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "end": "2026-01-01"},
    },
    "4-ytd-mid-year": {
        "metrics": ["revenue", "revenue_ytd"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-06-01", "end": "2025-03-01"},
    },
    "8-rank-segments": {
        "metrics": ["revenue", "revenue_rank"],
        "group_by": ["customers.segment"],
        "order_by": [{"key": "revenue_rank", "desc": False}],
        "limit": 10,
    },
    "9-rolling-forward": {
        "metrics": ["revenue", "revenue_rolling_3m", "revenue_next_month"],
        "group_by": ["orders.channel", "metric_time:month"],
        "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
    },
    "9-first-value-alone": {
        "metrics": ["revenue", "first_month_revenue"],
        "group_by": ["orders.channel", "metric_time:month"],
        "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
    },
}


@pytest.mark.parametrize("query", list(README.values()), ids=list(README))
def test_readme_window_examples(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)


def test_readme_example_9_as_written(port: Portability) -> None:
    """Shop README example 9: rolling, first value and a forward offset per channel
    under a start-only range (an end bound would widen the scan for the forward offset, which
    WIN-RES-05 forbids beside the partition-global first value)."""
    port.check(
        {
            "metrics": [
                "revenue",
                "revenue_rolling_3m",
                "first_month_revenue",
                "revenue_next_month",
            ],
            "group_by": ["orders.channel", "metric_time:month"],
            "time_range": {"start": "2025-01-01"},
        }
    )


def test_readme_window_values_on_postgres(port: Portability) -> None:
    rows = {r["metric_time__month"][:7]: r for r in port.on_postgres(README["3-pop-across-gap"])}
    assert rows["2024-03"]["revenue_mom"] is None
    assert float(rows["2024-03"]["revenue_yoy"]) == pytest.approx(2_919.24)
    assert float(rows["2025-01"]["revenue_mom"]) == pytest.approx(-0.27724, abs=1e-5)
    assert float(rows["2024-01"]["revenue_mom"]) == pytest.approx(-0.45371, abs=1e-5)
    ytd = {r["metric_time__month"][:7]: r for r in port.on_postgres(README["4-ytd-mid-year"])}
    assert float(ytd["2024-06"]["revenue_ytd"]) == pytest.approx(390_239.25)
    assert float(ytd["2025-02"]["revenue_ytd"]) == pytest.approx(187_727.59)


# ------------------------------------------------------------------------------ combinations

COMBOS = {
    "scan-expanding-with-range": {
        "metrics": [
            "revenue",
            "revenue_mom",
            "revenue_yoy",
            "revenue_rolling_3m",
            "revenue_ytd",
            "revenue_next_month",
        ],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "end": "2025-07-01"},
    },
    "partition-global-with-range": {
        "metrics": ["revenue", "revenue_rank", "first_month_revenue", "revenue_rolling_3m"],
        "group_by": ["orders.channel", "metric_time:month"],
        "time_range": {"start": "2024-04-01", "end": "2025-04-01"},
    },
    "all-no-range": {"metrics": ["revenue", *SHOP_WINDOWS], "group_by": ["metric_time:month"]},
    "running-end-only": {
        "metrics": ["revenue_running", "revenue_mom"],
        "group_by": ["orders.channel", "metric_time:month"],
        "time_range": {"end": "2024-07-01"},
    },
    "running-alone-with-start": {
        "metrics": ["revenue_running"],
        "group_by": ["metric_time:quarter"],
        "time_range": {"start": "2024-04-01"},
    },
    "windows-with-plain-metrics": {
        "metrics": [
            "revenue",
            "revenue_mom",
            "order_count",
            "customer_count",
            "avg_order_value",
            "revenue_ytd",
        ],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "end": "2025-12-01"},
    },
    "windows-where-two-hops": {
        "metrics": ["revenue", "revenue_yoy", "revenue_rolling_3m", "revenue_rank"],
        "group_by": ["regions.region_name", "metric_time:year"],
        "where_sql": "orders.status = 'completed'",
    },
    "windows-null-partition": {
        "metrics": ["revenue", "first_month_revenue", "revenue_next_month", "revenue_mom"],
        "group_by": ["customers.segment", "metric_time:month"],
    },
    "windows-null-partition-range": {
        "metrics": ["revenue", "revenue_next_month", "revenue_mom", "revenue_ytd"],
        "group_by": ["customers.segment", "metric_time:month"],
        "time_range": {"start": "2023-07-01", "end": "2025-07-01"},
    },
    "windows-order-limit": {
        "metrics": ["revenue", "revenue_mom", "revenue_rank"],
        "group_by": ["metric_time:month"],
        "order_by": [{"key": "revenue_rank", "desc": False}],
        "limit": 5,
    },
    "rank-axis-free-where": {
        "metrics": ["revenue", "revenue_rank"],
        "group_by": ["customers.customer_name"],
        "where_sql": "regions.country IN ('US', 'DE')",
        "order_by": [{"key": "revenue_rank", "desc": False}],
        "limit": 15,
    },
    "order-date-axis": {
        "metrics": ["revenue", "revenue_mom", "revenue_rolling_3m"],
        "group_by": ["orders.order_date:month"],
        "time_range": {"start": "2025-02-01", "end": "2025-11-01"},
    },
    "ext-mixed-families": {
        "metrics": ["revenue", "w_fwd_delta", "w_qtd", "w_sd_samp", "w_ntile3", "w_nth2"],
        "group_by": ["orders.channel", "metric_time:month"],
    },
    "ext-mixed-families-range": {
        "metrics": ["revenue", "w_fwd_delta", "w_qtd", "w_sd_samp", "w_dod_value", "w_roll3_full"],
        "group_by": ["orders.channel", "metric_time:day"],
        "time_range": {"start": "2025-03-01", "end": "2025-05-01"},
    },
}


@pytest.mark.parametrize("query", list(COMBOS.values()), ids=list(COMBOS))
def test_window_combinations(port_ext: Portability, query: dict[str, Any]) -> None:
    run_or_same_error(port_ext, query)


def test_window_beside_a_second_fact_on_postgres_too(port: Portability) -> None:
    """WIN-RES-03 relaxed (issue 10): a window metric beside another fact dataset's metric
    gives the same rows on PostgreSQL (merge through the UNION of keys) as on DuckDB."""
    port.check({"metrics": ["revenue_mom", "refund_total"], "group_by": ["metric_time:month"]})


def test_combinations_compile(port_ext: Portability) -> None:
    """The combinations above are all valid queries (none is silently skipped)."""
    for query in COMBOS.values():
        port_ext.engine.compile(query, dialect="postgres")
