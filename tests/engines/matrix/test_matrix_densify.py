"""Densify on every engine (issue 22, Deliver items 1 and 8): the time spine generated in each
engine's SQL (DuckDB / DataFusion generate_series, PostgreSQL's set-returning form, Spark's
SEQUENCE, ClickHouse's arrayJoin, a recursive WITH on SQLite and MariaDB) returns, value by
value, what it returns on DuckDB; DuckDB itself is checked against plain Python in
tests/densify/. A filter on large orders leaves days, weeks and months empty. On each engine
the densified rows that hold data are exactly the undensified rows (densify never changes a
non-empty bucket, never multiplies a row)."""

from __future__ import annotations

from typing import Any

import pytest
from conformkit import compare

import dosi
from dosi.errors import QueryError

_BIG = "orders.amount > 900"
_BIGGER = "orders.amount > 1500"
Y2024 = {"start": "2024-01-01", "end": "2025-01-01"}


def _q(metrics: list[str], *group_by: str, **kw: Any) -> dict[str, Any]:
    return {"metrics": metrics, "group_by": list(group_by), **kw}


DENSE_QUERIES: dict[str, dict[str, Any]] = {
    "day": _q(
        ["revenue", "order_count"],
        "metric_time:day",
        where_sql=_BIG,
        time_range={"start": "2025-01-01", "end": "2025-03-01"},
    ),
    "week": _q(["revenue", "order_count"], "metric_time:week", where_sql=_BIGGER, time_range=Y2024),
    "month-no-range": _q(["order_count"], "metric_time:month", where_sql="orders.amount > 1900"),
    "quarter": _q(["revenue", "order_count"], "metric_time:quarter", where_sql="orders.amount > 2500"),
    "month-channel-all": _q(
        ["revenue", "order_count"],
        "metric_time:month",
        "orders.channel",
        where_sql=_BIGGER,
        time_range=Y2024,
        densify="all",
    ),
    "all-no-data": _q(  # no combination observed: each bucket once, its channel NULL
        ["order_count"],
        "metric_time:month",
        "orders.channel",
        time_range={"start": "2030-01-01", "end": "2030-04-01"},
        densify="all",
    ),
    "month-channel-time": _q(
        ["order_count"], "metric_time:month", "orders.channel", where_sql=_BIGGER, time_range=Y2024
    ),
    "month-windows": _q(
        ["revenue", "revenue_mom", "revenue_rolling_3m", "w_roll3_count"],
        "metric_time:month",
        where_sql=_BIGGER,
        time_range={"start": "2024-03-01", "end": "2025-01-01"},
    ),
    "month-running": _q(["revenue_running"], "metric_time:month", where_sql=_BIGGER, time_range=Y2024),
    "day-dod": _q(
        ["revenue", "w_dod_ratio"],
        "metric_time:day",
        where_sql=_BIG,
        time_range={"start": "2025-01-01", "end": "2025-02-01"},
    ),
}
for _q_ in DENSE_QUERIES.values():
    _q_.setdefault("densify", "time")

_REFERENCE: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}


def _expected(reference: dosi.Engine, name: str) -> tuple[list[str], list[dict[str, Any]]]:
    if name not in _REFERENCE:
        res = reference.execute(DENSE_QUERIES[name], connection="duck")
        _REFERENCE[name] = (list(res["columns"]), list(res["rows"]))
    return _REFERENCE[name]


@pytest.mark.parametrize("name", list(DENSE_QUERIES))
def test_densified_query_matches_duckdb(
    target: tuple[str, dosi.Engine], reference: dosi.Engine, name: str
) -> None:
    kind, eng = target
    columns, want = _expected(reference, name)
    try:
        got = eng.execute(DENSE_QUERIES[name], connection=kind)
    except QueryError as err:  # a gate: structured, before any SQL
        assert err.code.startswith("dialect_unsupported"), f"{kind} {name}: {err.code} {err}"
        pytest.xfail(f"{kind} refuses {name}: {err.code}")
    assert got["columns"] == columns
    compare(got["rows"], want, columns, f"{kind} {name}")


@pytest.mark.parametrize("name", ["day", "week", "month-channel-all", "month-channel-time"])
def test_densified_rows_with_data_are_the_undensified_rows(
    target: tuple[str, dosi.Engine], name: str
) -> None:
    kind, eng = target
    query = DENSE_QUERIES[name]
    dense = eng.execute(query, connection=kind)
    sparse = eng.execute({**query, "densify": False}, connection=kind)
    columns = list(sparse["columns"])
    with_data = [r for r in dense["rows"] if r["order_count"] != 0]
    compare(with_data, sparse["rows"], columns, f"{kind} {name}")
    assert len(dense["rows"]) > len(sparse["rows"])


def test_the_dense_matrix_has_empty_buckets(reference: dosi.Engine) -> None:
    """Guard: every flat query's DuckDB result has empty buckets, so it tests the spine."""
    for name in ("day", "week", "month-no-range", "quarter", "month-channel-all"):
        _, rows = _expected(reference, name)
        assert any(r["order_count"] == 0 for r in rows), name
    _, rows = _expected(reference, "all-no-data")
    assert [(r["metric_time__month"], r["channel"], r["order_count"]) for r in rows] == [
        ("2030-01-01", None, 0),
        ("2030-02-01", None, 0),
        ("2030-03-01", None, 0),
    ]
