"""The postgres SQL must not depend on the PostgreSQL session's TimeZone: date columns are
DATE and event times are `timestamp without time zone`, so every result is the same under UTC,
a DST zone and an odd-offset zone. (On PostgreSQL DATE_TRUNC of a DATE yields a `timestamptz`
in the session zone, and epoch arithmetic on a `timestamptz` would shift windows by the offset:
these tests pin both down.)"""

from __future__ import annotations

from typing import Any

import pytest
from portkit import SHOP_MODEL, Portability, psql

import dosi

ZONES = ["UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham", "America/Santiago"]

QUERIES = {
    "orders-week": {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:week"]},
    "orders-day-dst": {
        "metrics": ["revenue"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2025-03-07", "end": "2025-03-12"},
    },
    "orders-day-midnight-dst": {
        "metrics": ["revenue", "order_count"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2025-09-05", "end": "2025-09-10"},
    },
    "orders-month-range": {
        "metrics": ["revenue", "refund_total"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-10-01", "end": "2025-04-01"},
    },
    "events-hour-dst": {
        "metrics": ["event_count"],
        "group_by": ["events.event_ts:day"],
        "time_range": {"start": "2025-03-08T00:00:00", "end": "2025-03-11T00:00:00"},
    },
    "windows-on-dates": {
        "metrics": ["revenue", "revenue_mom", "revenue_yoy", "revenue_ytd", "revenue_next_month"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-11-01", "end": "2025-05-01"},
    },
    "weekly-windows": {
        "metrics": ["revenue", "w_wow_value", "w_roll3_sum", "w_qtd"],
        "group_by": ["metric_time:week"],
        "time_range": {"start": "2025-02-03", "end": "2025-04-28"},  # Mondays
    },
    "daily-offsets": {
        "metrics": ["revenue", "w_dod_value", "w_d7_value"],
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2025-03-01", "end": "2025-04-10"},
    },
    "tumble-events": {"metrics": ["event_count"], "group_by": ["metric_time:tumble(1 hour)"]},
    "tumble-orders-date": {
        "metrics": ["revenue"],
        "group_by": ["metric_time:tumble(1 day)"],
        "time_range": {"start": "2025-03-01", "end": "2025-04-15"},
    },
    "hop-orders-date": {"metrics": ["order_count"], "group_by": ["metric_time:hop(2 days, 1 day)"]},
    "session-events": {
        "metrics": ["event_count"],
        "group_by": ["metric_time:session(30 minutes)"],
        "time_range": {"start": "2025-11-01", "end": "2025-11-03"},
    },
}


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("query", list(QUERIES.values()), ids=list(QUERIES))
def test_session_time_zone_does_not_matter(
    port_ext: Portability, query: dict[str, Any], zone: str
) -> None:
    port_ext.check(query, timezone=zone)


@pytest.mark.parametrize("grain", ["day", "week", "month", "quarter", "year"])
def test_date_buckets_are_dates(port: Portability, grain: str) -> None:
    """Issue 8 item 7: a grain bucket of a DATE axis is a `date` on PostgreSQL (as on DuckDB),
    never a `timestamptz` that carries the session's offset nor a timestamp."""
    sql = port.pg_sql({"metrics": ["revenue"], "group_by": [f"metric_time:{grain}"]})
    out = psql(port.dsn, f"SELECT DISTINCT pg_typeof(metric_time__{grain})::text FROM ({sql}) q;\n")
    assert out.strip() == "date"


@pytest.mark.parametrize("grain", ["day", "month"])
def test_timestamp_buckets_stay_timestamps(port: Portability, grain: str) -> None:
    """Issue 8 item 7: a TIMESTAMP axis keeps `timestamp without time zone` buckets."""
    sql = port.pg_sql({"metrics": ["event_count"], "group_by": [f"metric_time:{grain}"]})
    out = psql(port.dsn, f"SELECT DISTINCT pg_typeof(metric_time__{grain})::text FROM ({sql}) q;\n")
    assert out.strip() == "timestamp without time zone"


def test_postgres_buckets_truncate_a_timestamp() -> None:
    """Rendering check (no server needed), issue 8 item 7: a DATE axis bucket never passes
    through TIMESTAMP on PostgreSQL (MAKE_DATE of its parts); a reset over the bucket still
    truncates a plain TIMESTAMP, so the timestamptz overload is never picked; DuckDB's SQL is
    unchanged."""
    eng = dosi.Engine(model_path=SHOP_MODEL)
    query = {"metrics": ["revenue", "revenue_ytd"], "group_by": ["metric_time:month"]}
    pg = eng.compile(query, dialect="postgres")["sql"]
    assert "CAST(pre.__t0 AS TIMESTAMP)" not in pg
    assert "MAKE_DATE(CAST(EXTRACT(YEAR FROM CAST(pre.__t0 AS DATE)) AS INT)" in pg
    assert "DATE_TRUNC('YEAR', CAST(c.metric_time__month AS TIMESTAMP))" in pg
    assert "CAST(pre.__t0 AS TIMESTAMP)" not in eng.compile(query, dialect="duckdb")["sql"]
