"""D-SEMI and D-CONVERSION on every engine (issue 23 item 7): snapshot choice (last / first /
min / max, window groupings, whole range, time_range, joined dimensions, windows and derives
over a balance) and conversion attribution (windows, constant properties, rates) on SQLite,
chDB, DataFusion, Spark, PostgreSQL (and MariaDB when enabled), value by value against DuckDB.
DuckDB itself is checked against hand-written SQL and plain Python in tests/semi_additive and
tests/conversion. A feature an engine lacks must be a structured `dialect_unsupported_*` error
raised before any SQL runs."""

from __future__ import annotations

from typing import Any

import pytest
from conformkit import compare

import dosi
from dosi.errors import QueryError

MONTH = ["metric_time:month"]
SEMI_QUERIES: dict[str, dict[str, Any]] = {
    "last_per_account": {"metrics": ["balance_by_account", "balance"], "group_by": MONTH},
    "by_region": {"metrics": ["balance_by_account"], "group_by": [*MONTH, "accounts.region"]},
    "first_min_max": {
        "metrics": ["opening_balance", "lowest_balance", "peak_balance", "lowest_by_account"],
        "group_by": MONTH,
    },
    "whole_range": {"metrics": ["balance_by_account", "balance"]},
    "time_range": {
        "metrics": ["balance_by_account"],
        "time_range": {"start": "2024-01-01", "end": "2024-02-29"},
    },
    "window_and_derive": {
        "metrics": ["balance_mom", "balance_without_2", "avg_balance_per_account"],
        "group_by": MONTH,
    },
    "intraday": {"metrics": ["stock", "stock_all"], "group_by": ["metric_time:day"]},
}
CONV_QUERIES: dict[str, dict[str, Any]] = {
    "totals": {
        "metrics": [
            "visit_to_buy_rate_7d",
            "visit_to_buy_rate",
            "buyers_7d",
            "buys_7d",
            "spend_7d",
            "spend_same_session",
        ]
    },
    "by_referrer": {
        "metrics": ["visit_to_buy_rate_7d", "buys_7d", "spend_same_session"],
        "group_by": ["visits.referrer"],
    },
    "by_day": {"metrics": ["buys_7d", "visit_to_buy_rate_7d"], "group_by": ["metric_time:day"]},
    # a conversions metric alone keeps the days whose visits converted nothing (NULL sum)
    "conversions_alone": {"metrics": ["spend_7d"], "group_by": ["metric_time:day"]},
}


def _check(
    target: tuple[str, dosi.Engine], reference: dosi.Engine, query: dict[str, Any], name: str
) -> None:
    kind, eng = target
    want = reference.execute(query, connection="duck")
    try:
        got = eng.execute(query, connection=kind)
    except QueryError as err:
        assert err.code.startswith("dialect_unsupported"), f"{kind} {name}: {err.code} {err}"
        pytest.xfail(f"{kind} refuses {name}: {err.code}")
    assert got["columns"] == want["columns"]
    compare(got["rows"], want["rows"], list(want["columns"]), f"{kind} {name}")


@pytest.mark.parametrize("name", list(SEMI_QUERIES))
def test_semi_additive_matches_duckdb(semi_target, semi_reference, name: str) -> None:
    _check(semi_target, semi_reference, SEMI_QUERIES[name], name)


@pytest.mark.parametrize("name", list(CONV_QUERIES))
def test_conversion_matches_duckdb(conv_target, conv_reference, name: str) -> None:
    _check(conv_target, conv_reference, CONV_QUERIES[name], name)
