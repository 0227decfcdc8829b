"""The "Streaming windows" queries of examples/shop/README.md give the answers printed there,
and those answers equal the independent plain-Python windowing of the shop's events."""

from __future__ import annotations

from typing import Any

import pytest
import stream_ref as ref
from stream_ref import DAY, HOUR, MINUTE, SECOND, T, Win
from streamkit import REPO, assert_rows

M = ["event_count", "active_users", "event_value"]
SALE = {"start": "2025-11-28T12:00:00", "end": "2025-11-28T12:05:00"}
SALE_REF = {"start": T("2025-11-28 12:00:00"), "end": T("2025-11-28 12:05:00")}

CASES: list[tuple[str, dict[str, Any], Win, list[str], dict[str, Any], list[tuple]]] = [
    (
        "tumble",
        {"metrics": M, "group_by": ["metric_time:tumble(30 seconds)"], "time_range": SALE},
        Win("tumble", size=30 * SECOND),
        [],
        SALE_REF,
        [
            ("2025-11-28 12:00:00", "2025-11-28 12:00:30", 15, 8, 709.25),
            ("2025-11-28 12:00:30", "2025-11-28 12:01:00", 12, 8, 461.75),
            ("2025-11-28 12:01:00", "2025-11-28 12:01:30", 12, 8, 755.25),
            ("2025-11-28 12:01:30", "2025-11-28 12:02:00", 1, 1, 63.5),
        ],
    ),
    (
        "tumble-hour-boundary",
        {
            "metrics": ["event_count"],
            "group_by": ["metric_time:tumble(1 hour)"],
            "time_range": {"start": "2025-03-10", "end": "2025-03-11"},
        },
        Win("tumble", size=HOUR),
        [],
        {"start": T("2025-03-10"), "end": T("2025-03-11")},
        [
            ("2025-03-10 09:00:00", "2025-03-10 10:00:00", 1),
            ("2025-03-10 10:00:00", "2025-03-10 11:00:00", 3),
        ],
    ),
    (
        "hop",
        {"metrics": M, "group_by": ["metric_time:hop(1 minute, 30 seconds)"], "time_range": SALE},
        Win("hop", size=MINUTE, slide=30 * SECOND),
        [],
        SALE_REF,
        [
            ("2025-11-28 11:59:30", "2025-11-28 12:00:30", 15, 8, 709.25),
            ("2025-11-28 12:00:00", "2025-11-28 12:01:00", 27, 8, 1171.0),
            ("2025-11-28 12:00:30", "2025-11-28 12:01:30", 24, 8, 1217.0),
            ("2025-11-28 12:01:00", "2025-11-28 12:02:00", 13, 8, 818.75),
            ("2025-11-28 12:01:30", "2025-11-28 12:02:30", 1, 1, 63.5),
        ],
    ),
    (
        "cumulate",
        {
            "metrics": M,
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {"type": "cumulate", "size": "1 day", "step": "6 hours"},
                }
            ],
            "time_range": {"start": "2025-11-28", "end": "2025-11-29"},
        },
        Win("cumulate", size=DAY, step=6 * HOUR),
        [],
        {"start": T("2025-11-28"), "end": T("2025-11-29")},
        [
            ("2025-11-28 00:00:00", "2025-11-28 06:00:00", 6, 1, 1.0),
            ("2025-11-28 00:00:00", "2025-11-28 12:00:00", 6, 1, 1.0),
            ("2025-11-28 00:00:00", "2025-11-28 18:00:00", 46, 9, 1990.75),
            ("2025-11-28 00:00:00", "2025-11-29 00:00:00", 46, 9, 1990.75),
        ],
    ),
    (
        "session",
        {
            "metrics": ["event_count", "event_value"],
            "group_by": [
                "events.user_id",
                {"field": "metric_time", "window": {"type": "session", "gap": "1 day"}},
            ],
            "where_sql": "events.user_id = 60",
            "time_range": {"start": "2025-06-01", "end": "2025-06-10"},
        },
        Win("session", gap=DAY),
        ["events.user_id"],
        {"start": T("2025-06-01"), "end": T("2025-06-10"), "where": lambda r: r.user_id == 60},
        [(60, "2025-06-02 08:30:00", "2025-06-09 08:30:00", 7, 0.0)],
    ),
    (
        "session-23h",
        {
            "metrics": ["event_count"],
            "group_by": [
                "events.user_id",
                {"field": "metric_time", "window": {"type": "session", "gap": "23 hours"}},
            ],
            "where_sql": "events.user_id = 60",
            "time_range": {"start": "2025-06-01", "end": "2025-06-10"},
        },
        Win("session", gap=23 * HOUR),
        ["events.user_id"],
        {"start": T("2025-06-01"), "end": T("2025-06-10"), "where": lambda r: r.user_id == 60},
        [(60, f"2025-06-0{d} 08:30:00", f"2025-06-0{d + 1} 07:30:00", 1) for d in range(2, 9)],
    ),
    (
        "session-all-users",
        {
            "metrics": ["event_count", "active_users"],
            "group_by": ["metric_time:session(30 minutes)"],
            "time_range": {"start": "2025-11-28", "end": "2025-11-29"},
        },
        Win("session", gap=30 * MINUTE),
        [],
        {"start": T("2025-11-28"), "end": T("2025-11-29")},
        [
            ("2025-11-28 00:47:23", "2025-11-28 01:20:38", 6, 1),
            ("2025-11-28 12:00:00", "2025-11-28 12:31:31", 40, 8),
        ],
    ),
]


@pytest.mark.parametrize(
    ("query", "window", "dims", "filters", "readme"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_readme_answers(
    shop_engine: Any,
    shop_db: str,
    shop_events: tuple[ref.Event, ...],
    query: dict[str, Any],
    window: Win,
    dims: list[str],
    filters: dict[str, Any],
    readme: list[tuple],
) -> None:
    result = shop_engine.execute(query, db_path=shop_db)
    assert [tuple(r.values()) for r in result["rows"]] == readme
    expected = ref.reference(window, query["metrics"], dims, events=shop_events, **filters)
    assert_rows(result.arrow.to_pylist(), expected)


def test_readme_documents_every_window_type() -> None:
    text = (REPO / "examples" / "shop" / "README.md").read_text()
    assert "## Streaming windows" in text
    for form in (
        "tumble(30 seconds)",
        "hop(1 minute, 30 seconds)",
        '"type": "cumulate"',
        '"type": "session"',
    ):
        assert form in text


def test_monday_weeks_with_an_offset(shop_engine: Any, shop_db: str) -> None:
    """README: 1-week windows start on Thursdays (1970-01-01); an offset of -3 days gives
    Monday weeks."""
    for item, weekday in (("tumble(1 week)", 3), ("tumble(1 week, -3 days)", 0)):
        rows = shop_engine.execute(
            {"metrics": ["event_count"], "group_by": [f"metric_time:{item}"]}, db_path=shop_db
        ).arrow.to_pylist()
        assert {r["window_start"].weekday() for r in rows} == {weekday}
        assert sum(r["event_count"] for r in rows) == 3363
