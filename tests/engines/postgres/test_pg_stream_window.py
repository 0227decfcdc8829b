"""Portability of streaming windows (group_by `metric_time:tumble(...)`, `hop`, `cumulate`,
`session`) on the shop's events (timestamps) and orders (dates): the postgres SQL is plain epoch
arithmetic (UDF-GEN-01/04) and returns on PostgreSQL the rows DuckDB returns, including the
shop README's reference answers (UDF-TUM-02/03, UDF-HOP-02/03, UDF-CUM-01/02, UDF-SES-01)."""

from __future__ import annotations

from typing import Any

import pytest
from portkit import Portability, psql

FLASH = {"start": "2025-11-28T12:00:00", "end": "2025-11-28T12:05:00"}
EVENTS3 = ["event_count", "active_users", "event_value"]


def stream(metrics: list[str], *group_by: Any, **kw: Any) -> dict[str, Any]:
    return {"metrics": metrics, "group_by": list(group_by), **kw}


QUERIES = {
    # examples/shop/README.md, "Streaming windows", 1-4
    "readme-tumble-30s": stream(EVENTS3, "metric_time:tumble(30 seconds)", time_range=FLASH),
    "readme-hop-1m-30s": stream(EVENTS3, "metric_time:hop(1 minute, 30 seconds)", time_range=FLASH),
    "readme-cumulate-object": stream(
        EVENTS3,
        {
            "field": "metric_time",
            "window": {"type": "cumulate", "size": "1 day", "step": "6 hours"},
        },
        time_range={"start": "2025-11-28", "end": "2025-11-29"},
    ),
    "readme-session-user-60": stream(
        ["event_count", "event_value"],
        "events.user_id",
        {"field": "metric_time", "window": {"type": "session", "gap": "1 day"}},
        where_sql="events.user_id = 60",
        time_range={"start": "2025-06-01", "end": "2025-06-10"},
    ),
    "readme-session-23h": stream(
        ["event_count", "event_value"],
        "events.user_id",
        {"field": "metric_time", "window": {"type": "session", "gap": "23 hours"}},
        where_sql="events.user_id = 60",
        time_range={"start": "2025-06-01", "end": "2025-06-10"},
    ),
    "readme-session-global": stream(
        EVENTS3,
        "metric_time:session(30 minutes)",
        time_range={"start": "2025-11-28", "end": "2025-11-29"},
    ),
    # tumble
    "tumble-1h-whole-year": stream(EVENTS3, "metric_time:tumble(1 hour)"),
    "tumble-1h-by-type": stream(
        ["event_count", "active_users"],
        "events.event_type",
        "metric_time:tumble(1 hour)",
        time_range={"start": "2025-03-01", "end": "2025-04-01"},
    ),
    "tumble-offset": stream(
        ["event_count"], "metric_time:tumble(1 hour, 15 minutes)", where_sql="events.value > 0"
    ),
    "tumble-1-week-monday": stream(
        ["event_count", "active_users"], "metric_time:tumble(1 week, -3 days)"
    ),
    "tumble-event-ts-field": stream(["event_count"], "events.event_ts:tumble(6 hours)"),
    "tumble-iso-interval": stream(
        ["event_count"],
        {"field": "metric_time", "window": {"type": "tumble", "size": "PT1H30M"}},
        time_range={"start": "2025-11-01", "end": "2025-12-01"},
    ),
    "tumble-milliseconds": stream(
        ["event_count"],
        {"field": "metric_time", "window": {"type": "tumble", "size": 90_000, "offset": 250}},
        time_range=FLASH,
    ),
    # hop
    "hop-15m-5m": stream(EVENTS3, "metric_time:hop(15 minutes, 5 minutes)"),
    "hop-named-args-by-type": stream(
        ["event_count", "active_users"],
        "events.event_type",
        "metric_time:hop(slide=5 minutes, size=15 minutes)",
        time_range={"start": "2025-11-20", "end": "2025-12-01"},
    ),
    "hop-offset": stream(
        ["event_count"],
        "metric_time:hop(1 hour, 20 minutes, 7 minutes)",
        where_sql="events.user_id < 40",
    ),
    "hop-2d-1d": stream(["event_count", "active_users"], "metric_time:hop(2 days, 1 day)"),
    # cumulate
    "cumulate-1d-1h": stream(
        ["event_count", "active_users"],
        "metric_time:cumulate(1 day, 1 hour)",
        time_range={"start": "2025-11-25", "end": "2025-12-02"},
    ),
    "cumulate-by-type": stream(
        ["event_value"], "events.event_type", "metric_time:cumulate(1 week, 1 day)"
    ),
    # session
    "session-30m-per-user": stream(
        ["event_count", "active_users", "event_value"],
        "events.user_id",
        "metric_time:session(30 minutes)",
    ),
    "session-5m-global": stream(["event_count"], "metric_time:session(5 minutes)"),
    "session-by-type-range": stream(
        ["event_count"],
        "events.event_type",
        "metric_time:session(2 hours)",
        time_range={"start": "2025-05-01", "end": "2025-09-01"},
    ),
    # date-typed time axis (orders) and several datasets merged on the window
    "orders-tumble-1d": stream(
        ["revenue", "order_count"],
        "metric_time:tumble(1 day)",
        time_range={"start": "2025-01-01", "end": "2025-04-01"},
    ),
    "orders-tumble-7d-by-channel": stream(
        ["revenue"], "orders.channel", "metric_time:tumble(7 days)"
    ),
    "orders-hop-30d-10d": stream(
        ["revenue", "customer_count", "avg_order_value"], "metric_time:hop(30 days, 10 days)"
    ),
    "orders-session-3d": stream(["order_count"], "metric_time:session(3 days)"),
    "merge-orders-events-tumble": stream(
        ["revenue", "event_count"],
        "metric_time:tumble(1 day)",
        time_range={"start": "2025-06-20", "end": "2025-08-15"},
    ),
    "merge-orders-refunds-hop": stream(
        ["revenue", "refund_total", "refund_count"],
        "metric_time:hop(14 days, 7 days)",
        time_range={"start": "2024-01-01", "end": "2024-07-01"},
    ),
    "merge-orders-refunds-cumulate": stream(
        ["order_count", "refund_count"],
        "metric_time:cumulate(28 days, 7 days)",
        time_range={"start": "2023-01-01", "end": "2023-07-01"},
    ),
    # ordering and limits
    "order-window-start-desc": stream(
        ["event_count"],
        "metric_time:tumble(1 day)",
        order_by=[{"key": "window_start", "desc": True}],
        limit=10,
    ),
    "order-metric-limit": stream(
        ["event_count", "active_users"],
        "metric_time:hop(1 hour, 30 minutes)",
        order_by=[{"key": "event_count", "desc": True}, {"key": "window_start", "desc": False}],
        limit=8,
    ),
}


@pytest.mark.parametrize("query", list(QUERIES.values()), ids=list(QUERIES))
def test_streaming_windows(port: Portability, query: dict[str, Any]) -> None:
    port.check(query)


def _span(row: dict[str, Any]) -> tuple[str, str]:
    return (row["window_start"].replace("T", " ")[:19], row["window_end"].replace("T", " ")[:19])


def test_readme_streaming_answers_on_postgres(port: Portability) -> None:
    """The shop README's reference answers hold on PostgreSQL itself."""
    tumble = port.on_postgres(QUERIES["readme-tumble-30s"])
    assert [(_span(r), r["event_count"], r["active_users"]) for r in tumble] == [
        (("2025-11-28 12:00:00", "2025-11-28 12:00:30"), 15, 8),
        (("2025-11-28 12:00:30", "2025-11-28 12:01:00"), 12, 8),
        (("2025-11-28 12:01:00", "2025-11-28 12:01:30"), 12, 8),
        (("2025-11-28 12:01:30", "2025-11-28 12:02:00"), 1, 1),
    ]
    hop = port.on_postgres(QUERIES["readme-hop-1m-30s"])
    assert sum(r["event_count"] for r in hop) == 80
    assert _span(hop[0]) == ("2025-11-28 11:59:30", "2025-11-28 12:00:30")
    session = port.on_postgres(QUERIES["readme-session-user-60"])
    assert [(_span(r), r["event_count"]) for r in session] == [
        (("2025-06-02 08:30:00", "2025-06-09 08:30:00"), 7)
    ]
    assert len(port.on_postgres(QUERIES["readme-session-23h"])) == 7
    sessions = {
        _span(r): r["event_count"] for r in port.on_postgres(QUERIES["readme-session-global"])
    }
    assert sessions[("2025-11-28 00:47:23", "2025-11-28 01:20:38")] == 6
    assert sessions[("2025-11-28 12:00:00", "2025-11-28 12:31:31")] == 40


def test_window_bounds_are_plain_timestamps(port: Portability) -> None:
    """window_start / window_end are timestamps without time zone on PostgreSQL too."""
    sql = port.pg_sql(QUERIES["orders-tumble-1d"])
    out = psql(
        port.dsn,
        f"SELECT pg_typeof(window_start)::text, pg_typeof(window_end)::text FROM ({sql}) AS q "
        "LIMIT 1;\n",
    )
    assert out.strip() == "timestamp without time zone|timestamp without time zone"
