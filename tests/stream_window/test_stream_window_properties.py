"""Property tests over random event lists (hypothesis), run on an in-memory DuckDB:

* tumble windows partition the rows (UDF-TUM-02/03);
* each hop window holds exactly the rows in [window_start, window_end), and every window of the
  slide grid that holds a row is returned (UDF-HOP-02/04);
* no session contains an inner gap larger than `gap`, and consecutive sessions of one partition
  are more than `gap` apart (UDF-SES-02: sessions are computed by the engine);
* cumulate windows of an epoch are nested and each holds the epoch's rows before its end;
* every window type equals the independent plain-Python windowing (stream_ref).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
import stream_ref as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_ref import SECOND, Event, Win, to_us
from streamkit import assert_rows

import dosi

BASE = dt.datetime(2025, 3, 1)
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect(":memory:")
    yield c
    c.close()


@pytest.fixture(scope="module")
def eng() -> dosi.Engine:
    return dosi.Engine(model_text=ref.model_yaml())


def _run(
    eng: dosi.Engine, con: duckdb.DuckDBPyConnection, events: list[Event], query: dict[str, Any]
) -> list[dict[str, Any]]:
    ref.write_tables(con, events, purchases=())
    cursor = con.execute(eng.compile(query)["sql"])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# offsets in milliseconds over ~3 hours: bursts (ties, ms apart) and gaps
_OFFSETS = st.one_of(
    st.integers(0, 10_000_000),
    st.integers(0, 50).map(lambda k: k * 1000),
    st.sampled_from([0, 1, 999, 1000, 59_999, 60_000, 3_599_999, 3_600_000]),
)


@st.composite
def event_lists(draw: st.DrawFn, min_size: int = 1) -> list[Event]:
    n = draw(st.integers(min_size, 40))
    out = []
    for i in range(n):
        ms = draw(_OFFSETS)
        user = draw(st.sampled_from([1, 2, 3, None]))
        kind = draw(st.sampled_from(["a", "b", None]))
        value = draw(st.sampled_from([None, 0.0, 0.25, 1.5, 10.0]))
        out.append(Event(i + 1, BASE + dt.timedelta(milliseconds=ms), user, kind, value))
    return out


_SIZES_S = st.sampled_from([1, 7, 30, 60, 90, 600, 3600])


def _in(events: list[Event], start: dt.datetime, end: dt.datetime) -> list[Event]:
    return [e for e in events if e.ts is not None and start <= e.ts < end]


@SETTINGS
@given(events=event_lists(), size=_SIZES_S, offset=st.integers(-3600, 3600))
def test_tumble_windows_partition_the_rows(
    eng: dosi.Engine, con: Any, events: list[Event], size: int, offset: int
) -> None:
    rows = _run(
        eng,
        con,
        events,
        {
            "metrics": ["event_count", "active_users"],
            "group_by": [f"metric_time:tumble({size} seconds, {offset} seconds)"],
        },
    )
    assert sum(r["event_count"] for r in rows) == len(events)
    spans = sorted((r["window_start"], r["window_end"]) for r in rows)
    for (_, end), (next_start, _) in itertools.pairwise(spans):
        assert end <= next_start  # disjoint
    for r in rows:
        assert r["window_end"] - r["window_start"] == dt.timedelta(seconds=size)
        assert (to_us(r["window_start"]) - offset * SECOND) % (size * SECOND) == 0
        inside = _in(events, r["window_start"], r["window_end"])
        assert r["event_count"] == len(inside) > 0
        assert r["active_users"] == len({e.user_id for e in inside if e.user_id is not None})


@SETTINGS
@given(
    events=event_lists(),
    slide=_SIZES_S,
    factor=st.integers(1, 6),
    extra=st.integers(0, 59),
    offset=st.integers(-600, 600),
)
def test_each_hop_window_holds_exactly_its_rows(
    eng: dosi.Engine,
    con: Any,
    events: list[Event],
    slide: int,
    factor: int,
    extra: int,
    offset: int,
) -> None:
    size = slide * factor + min(extra, slide - 1)
    rows = _run(
        eng,
        con,
        events,
        {
            "metrics": ["event_count", "active_users", "total_value"],
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {
                        "type": "hop",
                        "size": size * 1000,
                        "slide": slide * 1000,
                        "offset": offset * 1000,
                    },
                }
            ],
        },
    )
    got = set()
    for r in rows:
        assert r["window_end"] - r["window_start"] == dt.timedelta(seconds=size)
        assert (to_us(r["window_start"]) - offset * SECOND) % (slide * SECOND) == 0
        inside = _in(events, r["window_start"], r["window_end"])
        assert r["event_count"] == len(inside) > 0
        assert r["active_users"] == len({e.user_id for e in inside if e.user_id is not None})
        got.add((to_us(r["window_start"]), to_us(r["window_end"])))
    want = {
        w
        for e in events
        for w in ref.windows_containing(
            to_us(e.ts),
            Win("hop", size=size * SECOND, slide=slide * SECOND, offset=offset * SECOND),
        )
    }
    assert got == want


@SETTINGS
@given(events=event_lists(), gap=_SIZES_S, by_user=st.booleans())
def test_no_session_contains_an_inner_gap_larger_than_gap(
    eng: dosi.Engine, con: Any, events: list[Event], gap: int, by_user: bool
) -> None:
    dims = ["events.user_id"] if by_user else []
    rows = _run(
        eng,
        con,
        events,
        {"metrics": ["event_count"], "group_by": [*dims, f"metric_time:session({gap} seconds)"]},
    )
    gap_td = dt.timedelta(seconds=gap)
    assert sum(r["event_count"] for r in rows) == len(events)
    partitions: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        partitions.setdefault(r.get("user_id"), []).append(r)
    for user, sessions in partitions.items():
        mine = [e for e in events if not by_user or e.user_id == user]
        sessions.sort(key=lambda r: r["window_start"])
        for r in sessions:
            last = r["window_end"] - gap_td
            inside = sorted(e.ts for e in mine if r["window_start"] <= e.ts <= last)
            assert inside[0] == r["window_start"] and inside[-1] == last
            assert len(inside) == r["event_count"]
            assert all(b - a <= gap_td for a, b in itertools.pairwise(inside))
        for a, b in itertools.pairwise(sessions):
            assert b["window_start"] - (a["window_end"] - gap_td) > gap_td  # maximal


@SETTINGS
@given(events=event_lists(), step=st.sampled_from([1, 10, 60, 600]), n=st.integers(1, 12))
def test_cumulate_windows_grow_inside_their_epoch(
    eng: dosi.Engine, con: Any, events: list[Event], step: int, n: int
) -> None:
    size = step * n
    rows = _run(
        eng,
        con,
        events,
        {"metrics": ["event_count"], "group_by": [f"metric_time:cumulate({size} s, {step} s)"]},
    )
    for r in rows:
        start_us = to_us(r["window_start"])
        assert start_us % (size * SECOND) == 0
        length = to_us(r["window_end"]) - start_us
        assert 0 < length <= size * SECOND and length % (step * SECOND) == 0
        assert r["event_count"] == len(_in(events, r["window_start"], r["window_end"])) > 0
    # the full-epoch windows partition the rows
    full = [r for r in rows if r["window_end"] - r["window_start"] == dt.timedelta(seconds=size)]
    assert sum(r["event_count"] for r in full) == len(events)


_WINDOWS = st.sampled_from(
    [
        ("tumble(90 seconds, 10 seconds)", Win("tumble", size=90 * SECOND, offset=10 * SECOND)),
        ("hop(1 minute, 20 seconds)", Win("hop", size=60 * SECOND, slide=20 * SECOND)),
        (
            "hop(50 seconds, 20 seconds, -5 seconds)",
            Win("hop", size=50 * SECOND, slide=20 * SECOND, offset=-5 * SECOND),
        ),
        ("cumulate(1 hour, 10 minutes)", Win("cumulate", size=3600 * SECOND, step=600 * SECOND)),
        ("session(45 seconds)", Win("session", gap=45 * SECOND)),
    ]
)


@SETTINGS
@given(
    events=event_lists(min_size=0),
    window=_WINDOWS,
    dims=st.sampled_from([[], ["events.kind"], ["events.user_id", "events.kind"]]),
)
def test_matches_reference(
    eng: dosi.Engine, con: Any, events: list[Event], window: tuple[str, Win], dims: list[str]
) -> None:
    text, win = window
    metrics = ["event_count", "active_users", "total_value", "value_per_event", "kinds"]
    rows = _run(eng, con, events, {"metrics": metrics, "group_by": [*dims, f"metric_time:{text}"]})
    expected = ref.reference(win, metrics, dims, events=events, purchases=())
    assert_rows(
        rows,
        expected,
        [ref.output_name(d) for d in dims] + ["window_start", "window_end", *metrics],
    )


def test_rows_without_event_time_are_in_no_window(eng: dosi.Engine, con: Any) -> None:
    events = [Event(1, None, 1, "a", 1.0), Event(2, BASE, 1, "a", 2.0)]
    for item in (
        "tumble(1 hour)",
        "hop(1 hour, 30 minutes)",
        "cumulate(1 hour, 30 minutes)",
        "session(1 hour)",
    ):
        rows = _run(
            eng,
            con,
            events,
            {"metrics": ["event_count", "total_value"], "group_by": [f"metric_time:{item}"]},
        )
        assert rows, item
        for r in rows:
            assert r["event_count"] == 1 and r["total_value"] == 2.0, item
            assert r["window_start"] <= BASE < r["window_end"], item
