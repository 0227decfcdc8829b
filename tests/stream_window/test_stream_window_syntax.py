"""The streaming-window group-by syntax: string and object forms, the canonical spelling, and
every rejection as a structured QueryError naming the fix (CHECKLIST UDF-GAP-02/03/04 as decided:
positive, fixed-length, whole-millisecond lengths; slide <= size; size a multiple of step)."""

from __future__ import annotations

from typing import Any

import pytest
import stream_ref as ref
from hypothesis import given
from hypothesis import strategies as st

import dosi
from dosi.errors import QueryError, QueryShapeError
from dosi.query.spec import StreamWindow, parse_query, query_to_dict
from dosi.query.stream_window import (
    MAX_WINDOWS_PER_ROW,
    format_window,
    parse_window_object,
    parse_window_text,
)

MIN = 60_000
HOUR = 3_600_000
DAY = 86_400_000


def _window(item: Any) -> StreamWindow:
    q = parse_query({"metrics": ["event_count"], "group_by": [item]})
    window = q.group_by[0].window
    assert window is not None
    return window


@pytest.mark.parametrize(
    ("item", "want"),
    [
        ("metric_time:tumble(1 hour)", StreamWindow("tumble", size_ms=HOUR)),
        (
            "metric_time:TUMBLE( 1 hour , 15 minutes )",
            StreamWindow("tumble", size_ms=HOUR, offset_ms=15 * MIN),
        ),
        (
            "metric_time:tumble(1 hour, offset=-15 minutes)",
            StreamWindow("tumble", size_ms=HOUR, offset_ms=-15 * MIN),
        ),
        ("metric_time:tumble(INTERVAL '1' HOUR)", StreamWindow("tumble", size_ms=HOUR)),
        ("metric_time:tumble(PT1H30M)", StreamWindow("tumble", size_ms=90 * MIN)),
        ("metric_time:tumble(1 hour 30 minutes)", StreamWindow("tumble", size_ms=90 * MIN)),
        (
            "metric_time:hop(15 minutes, 5 minutes)",
            StreamWindow("hop", size_ms=15 * MIN, slide_ms=5 * MIN),
        ),
        (
            "metric_time:hop(15 minutes, 5 minutes, 1 minute)",
            StreamWindow("hop", size_ms=15 * MIN, slide_ms=5 * MIN, offset_ms=MIN),
        ),
        (
            "metric_time:hop(slide=5 minutes, size=15 minutes)",
            StreamWindow("hop", size_ms=15 * MIN, slide_ms=5 * MIN),
        ),
        (
            "events.event_ts:cumulate(1 day, 1 hour)",
            StreamWindow("cumulate", size_ms=DAY, step_ms=HOUR),
        ),
        ("metric_time:session(30 minutes)", StreamWindow("session", gap_ms=30 * MIN)),
        ("metric_time:session(gap=500 ms)", StreamWindow("session", gap_ms=500)),
        (
            {"field": "metric_time", "window": {"type": "tumble", "size": "1 hour"}},
            StreamWindow("tumble", size_ms=HOUR),
        ),
        (
            {
                "field": "metric_time",
                "window": {"type": "tumble", "size": 3_600_000, "offset": "15 minutes"},
            },
            StreamWindow("tumble", size_ms=HOUR, offset_ms=15 * MIN),
        ),
        (
            {
                "field": "metric_time",
                "window": {"type": "HOP", "Slide": "5 minutes", "size": "15 minutes"},
            },
            StreamWindow("hop", size_ms=15 * MIN, slide_ms=5 * MIN),
        ),
        (
            {
                "field": "metric_time",
                "window": {"type": "cumulate", "size": "1 day", "step": "1 hour"},
            },
            StreamWindow("cumulate", size_ms=DAY, step_ms=HOUR),
        ),
        (
            {"field": "events.event_ts", "window": {"type": "session", "gap": "PT30M"}},
            StreamWindow("session", gap_ms=30 * MIN),
        ),
        (
            {"field": "metric_time", "window": "hop(15 minutes, 5 minutes)"},
            StreamWindow("hop", size_ms=15 * MIN, slide_ms=5 * MIN),
        ),
    ],
)
def test_parses(item: Any, want: StreamWindow) -> None:
    assert _window(item) == want


def test_object_form_gets_the_canonical_spelling() -> None:
    q = parse_query(
        {
            "metrics": ["m"],
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {
                        "type": "hop",
                        "slide": "300 seconds",
                        "size": "PT15M",
                        "offset": -60000,
                    },
                }
            ],
        }
    )
    assert q.group_by[0].spelling == "metric_time:hop(15 minutes, 5 minutes, offset=-1 minute)"
    again = parse_query(query_to_dict(q))  # suggested_retry / plan-cache form round-trips
    assert again.group_by[0].window == q.group_by[0].window


def test_a_calendar_grain_is_still_a_grain() -> None:
    q = parse_query({"metrics": ["m"], "group_by": ["metric_time:month"]})
    assert q.group_by[0].window is None and q.group_by[0].grain == "month"


_LENGTHS = st.integers(1, 5).map(lambda n: n * 1000) | st.sampled_from(
    [1, 250, MIN, 90 * MIN, HOUR, DAY, 7 * DAY, 3 * DAY + 7]
)


@st.composite
def windows(draw: st.DrawFn) -> StreamWindow:
    kind = draw(st.sampled_from(["tumble", "hop", "cumulate", "session"]))
    if kind == "tumble":
        return StreamWindow(kind, size_ms=draw(_LENGTHS), offset_ms=draw(st.integers(-DAY, DAY)))
    if kind == "hop":
        slide = draw(_LENGTHS)
        size = slide * draw(st.integers(1, 20)) + draw(st.integers(0, slide - 1))
        return StreamWindow(
            kind, size_ms=size, slide_ms=slide, offset_ms=draw(st.integers(-HOUR, HOUR))
        )
    if kind == "cumulate":
        step = draw(_LENGTHS)
        return StreamWindow(kind, size_ms=step * draw(st.integers(1, 30)), step_ms=step)
    return StreamWindow(kind, gap_ms=draw(_LENGTHS))


@given(windows())
def test_canonical_text_round_trips(window: StreamWindow) -> None:
    text = format_window(window)
    assert parse_window_text(text, f"metric_time:{text}") == window
    fields = {
        "tumble": ("size", "offset"),
        "hop": ("size", "slide", "offset"),
        "cumulate": ("size", "step"),
        "session": ("gap",),
    }[window.type]
    obj: dict[str, Any] = {"type": window.type}
    for f in fields:
        value = getattr(window, f"{f}_ms")
        if value:
            obj[f] = value
    assert parse_window_object(obj, "metric_time") == window


# ------------------------------------------------------------------------------ rejections


@pytest.mark.parametrize(
    ("item", "code", "needle"),
    [
        ("metric_time:tumble", "invalid_window_argument", "needs its arguments"),
        ("metric_time:tumble()", "invalid_window_argument", "needs `size`"),
        ("metric_time:tumbel(1 hour)", "unknown_window_type", "tumbel"),
        ("metric_time:month(1)", "unknown_window_type", "month"),
        (
            "metric_time:hop(5 minutes, 15 minutes)",
            "invalid_window_argument",
            "'slide' must not be larger",
        ),
        ("metric_time:hop(15 minutes)", "invalid_window_argument", "needs `slide`"),
        ("metric_time:tumble(1 month)", "invalid_window_argument", "fixed-length"),
        ("metric_time:session(1 year)", "invalid_window_argument", "fixed-length"),
        (
            "metric_time:cumulate(1 hour, 7 minutes)",
            "invalid_window_argument",
            "multiple of argument 'step'",
        ),
        (
            "metric_time:cumulate(1 hour, 2 hours)",
            "invalid_window_argument",
            "'step' must not be larger",
        ),
        ("metric_time:session(0 seconds)", "invalid_window_argument", "positive"),
        ("metric_time:tumble(-1 hour)", "invalid_window_argument", "positive"),
        (
            "metric_time:tumble(1 hour, 2 hours, 3 hours)",
            "invalid_window_argument",
            "at most 2 arguments",
        ),
        ("metric_time:tumble(3600000)", "invalid_window_argument", "has no unit"),
        ("metric_time:tumble(1 fortnight)", "invalid_window_argument", "not an interval"),
        ("metric_time:tumble(0.5 ms)", "invalid_window_argument", "whole number"),
        ("metric_time:hop(size=1 hour, slid=5 minutes)", "unknown_query_key", "slid"),
        ("metric_time:hop(size=1 hour, 5 minutes)", "invalid_window_argument", "after a named one"),
        ("metric_time:tumble(1 hour, size=2 hours)", "invalid_window_argument", "given twice"),
        ("metric_time:cumulate(1 day, 1 day, 1 hour)", "invalid_window_argument", "at most 2"),
        ("metric_time:hop(1 day, 1 second)", "invalid_window_argument", str(MAX_WINDOWS_PER_ROW)),
        ("metric_time:tumble(1 hour,)", "invalid_window_argument", "empty argument"),
        (
            {"field": "metric_time", "window": {"type": "hop", "size": "1 hour"}},
            "invalid_window_argument",
            "needs `slide`",
        ),
        (
            {
                "field": "metric_time",
                "window": {"type": "tumble", "size": "1 hour", "gap": "5 minutes"},
            },
            "unknown_query_key",
            "`gap` is not an argument of a tumble window",
        ),
        (
            {
                "field": "metric_time",
                "window": {
                    "type": "cumulate",
                    "size": "1 day",
                    "step": "1 hour",
                    "offset": "1 hour",
                },
            },
            "unknown_query_key",
            "offset",
        ),
        (
            {"field": "metric_time", "window": {"size": "1 hour"}},
            "unknown_window_type",
            "needs a `type`",
        ),
        (
            {"field": "metric_time", "window": {"type": "sliding", "size": "1 hour"}},
            "unknown_window_type",
            "sliding",
        ),
        ({"field": "metric_time", "window": 5}, "invalid_query", "must be an object"),
        (
            {"field": "metric_time", "window": {"type": "tumble", "size": True}},
            "invalid_window_argument",
            "not an interval",
        ),
        (
            {"field": "metric_time", "window": {"type": "tumble", "size": 1.5}},
            "invalid_window_argument",
            "not an interval",
        ),
    ],
)
def test_rejected_at_parse(item: Any, code: str, needle: str) -> None:
    with pytest.raises(QueryError) as info:
        parse_query({"metrics": ["event_count"], "group_by": [item]})
    err = info.value
    assert err.code == code, err
    assert needle in str(err), str(err)
    assert err.hint  # every rejection names the fix


def test_swapped_hop_arguments_suggest_the_fix() -> None:
    with pytest.raises(QueryError) as info:
        parse_query({"metrics": ["m"], "group_by": ["metric_time:hop(5 minutes, 15 minutes)"]})
    assert info.value.hint == (
        "the string form is hop(size, slide): did you mean hop(15 minutes, 5 minutes)?"
    )
    assert info.value.detail == {"function": "hop", "argument": "slide"}


def test_unknown_type_has_candidates() -> None:
    with pytest.raises(QueryError) as info:
        parse_query({"metrics": ["m"], "group_by": ["metric_time:sesion(5 minutes)"]})
    assert info.value.candidates[0] == "session"


@pytest.fixture(scope="module")
def windowed_engine() -> dosi.Engine:
    extra = {
        "running_value": (
            "SUM(events.value)",
            {"window": {"type": "cumulative", "function": "sum"}},
        )
    }
    return dosi.Engine(model_text=ref.model_yaml(extra_metrics=extra))


@pytest.mark.parametrize(
    ("query", "code", "needle"),
    [
        (
            {
                "metrics": ["event_count"],
                "group_by": ["metric_time:tumble(1 hour)", "events.event_ts:hop(2 hours, 1 hour)"],
            },
            "not_implemented",
            "at most one streaming window",
        ),
        (
            {
                "metrics": ["event_count"],
                "group_by": [
                    {
                        "field": "metric_time",
                        "grain": "day",
                        "window": {"type": "tumble", "size": "1 hour"},
                    }
                ],
            },
            "invalid_query",
            "both a `grain` and a `window`",
        ),
        (
            {"metrics": ["event_count"], "group_by": ["events.kind:tumble(1 hour)"]},
            "grain_on_non_time_dimension",
            "not a time dimension",
        ),
        (
            {"metrics": ["running_value"], "group_by": ["metric_time:tumble(1 hour)"]},
            "not_implemented",
            "window metrics (running_value)",
        ),
        (
            {
                "metrics": ["event_count", "revenue"],
                "group_by": ["metric_time:session(30 minutes)"],
            },
            "not_implemented",
            "session windows",
        ),
        (
            {
                "metrics": ["event_count"],
                "group_by": ["metric_time:tumble(1 hour)"],
                "order_by": ["window_middle"],
            },
            "unknown_order_key",
            "window_middle",
        ),
        (
            {"metrics": ["event_count"], "group_by": ["evnts.event_ts:tumble(1 hour)"]},
            "unknown_dimension",
            "evnts.event_ts",
        ),
        (
            {
                "metrics": ["event_count"],
                "group_by": ["events.window_end", "metric_time:tumble(1 hour)"],
            },
            "duplicate_output_name",
            "window_end",
        ),
    ],
)
def test_rejected_at_compile(
    windowed_engine: dosi.Engine, query: dict[str, Any], code: str, needle: str
) -> None:
    with pytest.raises(QueryError) as info:
        windowed_engine.compile(query)
    assert info.value.code == code, info.value
    assert needle in str(info.value), str(info.value)


def test_order_by_window_columns_resolve(windowed_engine: dosi.Engine) -> None:
    sql = windowed_engine.compile(
        {
            "metrics": ["event_count"],
            "group_by": ["metric_time:hop(1 hour, 30 minutes)"],
            "order_by": ["-window_end", "window_start"],
        }
    )["sql"]
    assert sql.endswith("ORDER BY window_end DESC, window_start ASC")


def test_unsupported_dialect_is_structured(windowed_engine: dosi.Engine) -> None:
    with pytest.raises(QueryError) as info:
        windowed_engine.compile(
            {"metrics": ["event_count"], "group_by": ["metric_time:tumble(1 hour)"]},
            dialect="snowflake",
        )
    assert info.value.code == "dialect_unsupported_streaming_window"
    assert "postgres" in info.value.candidates


def test_shape_errors_are_value_errors() -> None:
    with pytest.raises(QueryShapeError):
        parse_query({"metrics": ["m"], "group_by": [{"field": "metric_time", "window": []}]})
