"""Streaming-window queries against the independent plain-Python windowing (stream_ref).

Each case runs through `Engine.execute` on DuckDB and is compared with `stream_ref.reference`,
which enumerates the windows of every row from their definitions and recomputes every metric
from the rows of each window (so COUNT DISTINCT and ratios are checked per window).
CHECKLIST: UDF-TUM-02/03 (tumble bounds), UDF-HOP-02/04 (hop: every window, not only the
earliest), UDF-CUM-01/02 (cumulate epochs), UDF-SES-01/02 (sessions computed by the engine),
UDF-GEN-03 (timestamps without time zone), UDF-GAP-04/05 (decided semantics).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import stream_ref as ref
from stream_ref import DAY, HOUR, MINUTE, SECOND, T, Win
from streamkit import Runner, assert_rows

ALL = ["event_count", "active_users", "total_value", "value_per_event", "events_per_user"]


def _query(item: Any, metrics: list[str], dims: list[str], **extra: Any) -> dict[str, Any]:
    group_by = [*dims, item] if extra.pop("window_first", False) is False else [item, *dims]
    return {"metrics": metrics, "group_by": group_by, **extra}


# (id, group-by item, reference window, metrics, dims, query extras, reference extras)
CASES: list[tuple[str, Any, Win, list[str], list[str], dict[str, Any], dict[str, Any]]] = [
    # ---------------------------------------------------------------- tumble
    ("tumble-1m", "metric_time:tumble(1 minute)", Win("tumble", size=MINUTE), ALL, [], {}, {}),
    (
        "tumble-1h-offset-by-kind",
        "metric_time:tumble(1 hour, 15 minutes)",
        Win("tumble", size=HOUR, offset=15 * MINUTE),
        ALL,
        ["events.kind"],
        {},
        {},
    ),
    (
        "tumble-1h-country-time-range",
        "metric_time:tumble(1 hour)",
        Win("tumble", size=HOUR),
        ["event_count", "active_users", "kinds", "events_per_user"],
        ["users.country"],
        {"time_range": {"start": "2025-01-01T00:00:30", "end": "2025-01-02"}},
        {"start": T("2025-01-01 00:00:30"), "end": T("2025-01-02")},
    ),
    (
        "tumble-negative-offset-where",
        "metric_time:tumble(1 hour, offset=-15 minutes)",
        Win("tumble", size=HOUR, offset=-15 * MINUTE),
        ALL,
        [],
        {"where_sql": "events.kind <> 'view'"},
        {"where": lambda r: r.kind is not None and r.kind != "view"},
    ),
    (
        "tumble-500ms",
        "metric_time:tumble(500 milliseconds)",
        Win("tumble", size=SECOND // 2),
        ["event_count", "active_users", "value_per_event"],
        [],
        {"time_range": {"start": "2025-01-01", "end": "2025-01-01T00:02:00"}},
        {"start": T("2025-01-01"), "end": T("2025-01-01 00:02:00")},
    ),
    (
        "tumble-field-form",
        "events.event_ts:tumble(10 minutes)",
        Win("tumble", size=10 * MINUTE),
        ["event_count", "total_value"],
        ["events.user_id"],
        {},
        {},
    ),
    (
        "tumble-object-form-two-datasets",
        {"field": "metric_time", "window": {"type": "tumble", "size": "1 day"}},
        Win("tumble", size=DAY),
        ["event_count", "active_users", "revenue", "purchase_count"],
        [],
        {},
        {},
    ),
    (
        "tumble-1h-two-datasets",
        "metric_time:tumble(1 hour)",
        Win("tumble", size=HOUR),
        ["event_count", "revenue"],
        [],
        {},
        {},
    ),
    # ---------------------------------------------------------------- hop
    (
        "hop-1m-30s",
        "metric_time:hop(1 minute, 30 seconds)",
        Win("hop", size=MINUTE, slide=30 * SECOND),
        ALL,
        [],
        {},
        {},
    ),
    (
        "hop-offset-by-kind",
        "metric_time:hop(1 hour, 20 minutes, 5 minutes)",
        Win("hop", size=HOUR, slide=20 * MINUTE, offset=5 * MINUTE),
        ALL,
        ["events.kind"],
        {},
        {},
    ),
    (
        "hop-size-not-multiple-country-time-range",
        "metric_time:hop(10 seconds, 3 seconds)",
        Win("hop", size=10 * SECOND, slide=3 * SECOND),
        ["event_count", "active_users", "kinds", "value_per_event"],
        ["users.country"],
        {"time_range": {"start": "2025-01-01", "end": "2025-01-01T01:00:00"}},
        {"start": T("2025-01-01"), "end": T("2025-01-01 01:00:00")},
    ),
    (
        "hop-slide-equals-size",
        "metric_time:hop(2 hours, 2 hours)",
        Win("hop", size=2 * HOUR, slide=2 * HOUR),
        ALL,
        [],
        {},
        {},
    ),
    (
        "hop-object-form-two-datasets",
        {
            "field": "metric_time",
            "window": {"type": "hop", "slide": "30 minutes", "size": "1 hour"},
        },
        Win("hop", size=HOUR, slide=30 * MINUTE),
        ["event_count", "active_users", "revenue", "purchase_count"],
        [],
        {},
        {},
    ),
    (
        "hop-named-arguments-where",
        "metric_time:hop(slide=1 day, size=3 days)",
        Win("hop", size=3 * DAY, slide=DAY),
        ALL,
        ["events.user_id"],
        {"where_sql": "events.value > 0"},
        {"where": lambda r: r.value is not None and r.value > 0},
    ),
    # ---------------------------------------------------------------- cumulate
    (
        "cumulate-1d-6h",
        "metric_time:cumulate(1 day, 6 hours)",
        Win("cumulate", size=DAY, step=6 * HOUR),
        ALL,
        [],
        {},
        {},
    ),
    (
        "cumulate-1h-15m-by-kind-time-range",
        "metric_time:cumulate(1 hour, 15 minutes)",
        Win("cumulate", size=HOUR, step=15 * MINUTE),
        ALL,
        ["events.kind"],
        {"time_range": {"start": "2025-01-01T00:00:01", "end": "2025-01-03"}},
        {"start": T("2025-01-01 00:00:01"), "end": T("2025-01-03")},
    ),
    (
        "cumulate-step-equals-size",
        "metric_time:cumulate(1 day, 1 day)",
        Win("cumulate", size=DAY, step=DAY),
        ALL,
        [],
        {},
        {},
    ),
    (
        "cumulate-2h-1m-country",
        "metric_time:cumulate(2 hours, 1 minute)",
        Win("cumulate", size=2 * HOUR, step=MINUTE),
        ["event_count", "active_users", "kinds"],
        ["users.country"],
        {},
        {},
    ),
    (
        "cumulate-object-form-two-datasets",
        {
            "field": "metric_time",
            "window": {"type": "cumulate", "size": "1 day", "step": "12 hours"},
        },
        Win("cumulate", size=DAY, step=12 * HOUR),
        ["event_count", "value_per_event", "revenue"],
        [],
        {},
        {},
    ),
    # ---------------------------------------------------------------- session
    (
        "session-30m-by-user",
        "metric_time:session(30 minutes)",
        Win("session", gap=30 * MINUTE),
        ALL,
        ["events.user_id"],
        {},
        {},
    ),
    (
        "session-30m-global",
        "metric_time:session(30 minutes)",
        Win("session", gap=30 * MINUTE),
        ALL,
        [],
        {},
        {},
    ),
    (
        "session-1m-by-kind-and-country",
        "metric_time:session(1 minute)",
        Win("session", gap=MINUTE),
        ["event_count", "active_users", "kinds", "events_per_user"],
        ["events.kind", "users.country"],
        {},
        {},
    ),
    (
        "session-10m-time-range-where",
        {"field": "events.event_ts", "window": {"type": "session", "gap": "10 minutes"}},
        Win("session", gap=10 * MINUTE),
        ALL,
        ["events.user_id"],
        {
            "time_range": {"start": "2025-01-01T00:00:02", "end": "2025-01-05T08:10:00"},
            "where_sql": "events.kind IS NOT NULL",
        },
        {
            "start": T("2025-01-01 00:00:02"),
            "end": T("2025-01-05 08:10:00"),
            "where": lambda r: r.kind is not None,
        },
    ),
    (
        "session-1d-by-user",
        "metric_time:session(1 day)",
        Win("session", gap=DAY),
        ALL,
        ["events.user_id"],
        {},
        {},
    ),
    (
        "session-window-first",
        "metric_time:session(2 minutes)",
        Win("session", gap=2 * MINUTE),
        ["event_count", "active_users"],
        ["events.kind"],
        {"window_first": True},
        {},
    ),
]


@pytest.mark.parametrize(
    ("item", "window", "metrics", "dims", "extra", "ref_extra"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_matches_reference(
    run: Runner,
    item: Any,
    window: Win,
    metrics: list[str],
    dims: list[str],
    extra: dict[str, Any],
    ref_extra: dict[str, Any],
) -> None:
    query = _query(item, metrics, dims, **dict(extra))
    rows = run(query)
    expected = ref.reference(window, metrics, dims, **ref_extra)
    assert expected, "the case should produce rows"
    assert_rows(rows, expected)
    # output columns: the time item becomes window_start, window_end in its place
    dim_cols = [ref.output_name(d) for d in dims]
    window_cols = ["window_start", "window_end"]
    want = [*window_cols, *dim_cols] if extra.get("window_first") else [*dim_cols, *window_cols]
    assert list(rows[0]) == [*want, *metrics]
    # default order: window_start, the other group-by values, window_end
    keys = [
        (r["window_start"], *((r[c] is None, r[c] or 0) for c in dim_cols), r["window_end"])
        for r in rows
    ]
    assert keys == sorted(keys)
    assert all(isinstance(r["window_start"], dt.datetime) for r in rows)
    assert all(r["window_start"].tzinfo is None for r in rows)  # UDF-GEN-03


def test_hop_counts_a_row_in_every_window(run: Runner) -> None:
    """UDF-HOP-04: the two 00:00:03 rows are in all six windows starting 23:59:10 .. 00:00:00."""
    rows = run(
        {
            "metrics": ["event_count"],
            "group_by": ["metric_time:hop(1 minute, 10 seconds)"],
            "time_range": {"start": "2025-01-01T00:00:03", "end": "2025-01-01T00:00:04"},
        }
    )
    assert [(r["window_start"], r["window_end"], r["event_count"]) for r in rows] == [
        (
            T("2024-12-31 23:59:10") + dt.timedelta(seconds=10 * k),
            T("2025-01-01 00:00:10") + dt.timedelta(seconds=10 * k),
            2,
        )
        for k in range(6)
    ]


def test_session_gap_of_exactly_gap_continues(run: Runner) -> None:
    """User 1: 01:00:00 -> 01:30:00 is exactly the gap (same session); 01:30:00 ->
    02:00:00.001 is larger (new session). window_end = last event + gap."""
    rows = run(
        {
            "metrics": ["event_count"],
            "group_by": ["metric_time:session(30 minutes)"],
            "where_sql": "events.user_id = 1",
            "time_range": {"start": "2025-01-01T00:30:00", "end": "2025-01-02"},
        }
    )
    assert [(r["window_start"], r["window_end"], r["event_count"]) for r in rows] == [
        (T("2025-01-01 00:59:59.999999"), T("2025-01-01 02:00:00"), 3),
        (T("2025-01-01 02:00:00.001"), T("2025-01-01 02:30:00.001"), 1),
    ]


def test_cumulate_windows_grow_inside_the_epoch(run: Runner) -> None:
    rows = run(
        {
            "metrics": ["event_count", "active_users"],
            "group_by": ["metric_time:cumulate(1 day, 6 hours)"],
            "time_range": {"start": "2025-01-01", "end": "2025-01-02"},
        }
    )
    assert [(r["window_end"].hour, r["event_count"], r["active_users"]) for r in rows] == [
        (6, 16, 5),
        (12, 16, 5),
        (18, 17, 6),
        (0, 18, 6),
    ]
    assert {r["window_start"] for r in rows} == {T("2025-01-01")}


def test_order_by_and_limit(run: Runner) -> None:
    query = {
        "metrics": ["event_count"],
        "group_by": ["metric_time:tumble(1 hour)"],
        "order_by": [{"key": "window_end", "desc": True}],
        "limit": 2,
    }
    rows = run(query)
    assert [r["window_end"] for r in rows] == [T("2025-01-05 10:00"), T("2025-01-05 09:00")]
    query["order_by"] = ["-event_count", "window_start"]
    rows = run(query)
    assert [(r["window_start"], r["event_count"]) for r in rows] == [
        (T("2025-01-01 00:00"), 10),
        (T("2025-01-01 01:00"), 3),
    ]
    # the spelling of the item is accepted as an order key too
    query["order_by"] = ["metric_time:tumble(1 hour)"]
    assert run(query)[0]["window_start"] == T("2025-01-01 00:00")


def test_compile_reports_columns(engine: Any) -> None:
    out = engine.compile(
        {
            "metrics": ["event_count"],
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {"type": "hop", "size": "15 minutes", "slide": "5 minutes"},
                }
            ],
        }
    )
    assert out["requested_columns"] == [
        {"requested": "metric_time:hop(15 minutes, 5 minutes)", "column": "window_start"}
    ]


def test_explain_lists_window_columns(engine: Any) -> None:
    text = engine.explain(
        {"metrics": ["event_count"], "group_by": ["events.kind", "metric_time:session(5 minutes)"]}
    )
    assert "by=[kind, window_start]" in text
    assert "Order window_start ASC, kind ASC, window_end ASC" in text


# ------------------------------------------------------------------------------ shop example


SHOP_CASES = [
    (
        "metric_time:tumble(1 day)",
        Win("tumble", size=DAY),
        ["event_count", "active_users", "event_value"],
        [],
    ),
    (
        "metric_time:hop(1 day, 6 hours)",
        Win("hop", size=DAY, slide=6 * HOUR),
        ["event_count", "active_users"],
        ["events.event_type"],
    ),
    (
        "metric_time:cumulate(1 week, 1 day)",
        Win("cumulate", size=7 * DAY, step=DAY),
        ["event_count", "active_users", "event_value"],
        [],
    ),
    (
        "metric_time:session(30 minutes)",
        Win("session", gap=30 * MINUTE),
        ["event_count", "event_value"],
        ["events.user_id"],
    ),
    ("metric_time:session(1 day)", Win("session", gap=DAY), ["event_count", "active_users"], []),
]


@pytest.mark.parametrize(
    ("item", "window", "metrics", "dims"), SHOP_CASES, ids=[c[0].split(":")[1] for c in SHOP_CASES]
)
def test_shop_events_match_reference(
    shop_engine: Any,
    shop_db: str,
    shop_events: tuple[ref.Event, ...],
    item: str,
    window: Win,
    metrics: list[str],
    dims: list[str],
) -> None:
    """A year of events (seconds to days apart) through the shop model."""
    rows = shop_engine.execute(
        {"metrics": metrics, "group_by": [*dims, item]}, db_path=shop_db
    ).arrow.to_pylist()
    expected = ref.reference(window, metrics, dims, events=shop_events)
    assert_rows(rows, expected)
