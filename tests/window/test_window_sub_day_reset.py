"""Hour and minute resets (DATUS 1.15, issue 22 item 2: MetricFlow's `grain_to_date: hour`):
an hour-to-date running total on a timestamp axis, queried by minute or by hour. Expected
values from plain Python over hand-written events (gaps, two events in one minute, a NULL),
never from dosi; a reset finer than the query grain stays `window_reset_too_fine`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import dataset, field, make_db, metric, model_doc, result_rows, to_yaml

from dosi.engine import Engine
from dosi.errors import OsiError

T = dt.datetime
#: (event_id, at, amount)
EVENTS: tuple[tuple[int, dt.datetime, int | None], ...] = (
    (1, T(2024, 1, 1, 9, 5), 1),
    (2, T(2024, 1, 1, 9, 5, 30), 2),
    (3, T(2024, 1, 1, 9, 40), None),
    (4, T(2024, 1, 1, 9, 59, 59), 4),
    (5, T(2024, 1, 1, 10, 0), 8),
    (6, T(2024, 1, 1, 12, 30), 16),
    (7, T(2024, 1, 1, 12, 31), 32),
)


def _w(window: dict[str, Any], v: str = "1.15") -> dict[str, Any]:
    return {"v": v, "window": window}


HTD = {"type": "cumulative", "function": "sum", "reset": "hour"}
METRICS = [
    metric("amount", "SUM(events.amount)"),
    metric("htd", "SUM(events.amount)", _w(HTD)),
    metric("mtd_minute", "SUM(events.amount)", _w({**HTD, "reset": "minute"})),
]


def _model(metrics: list[dict[str, Any]]) -> str:
    events = dataset(
        "events",
        [
            field("event_id", datatype="Integer"),
            field("event_at", datatype="DateTime", is_time=True),
            field("amount", datatype="Integer"),
        ],
        primary_key=["event_id"],
    )
    return to_yaml(model_doc([events], metrics=metrics))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    values = ", ".join(
        f"({i}, TIMESTAMP '{t.isoformat(sep=' ')}', {'NULL' if a is None else a})"
        for i, t, a in EVENTS
    )
    return make_db(
        tmp_path_factory.mktemp("subday_reset") / "e.duckdb",
        [
            "CREATE TABLE events (event_id INTEGER, event_at TIMESTAMP, amount INTEGER)",
            f"INSERT INTO events VALUES {values}",
        ],
    )


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    eng = Engine(model_text=_model(METRICS))
    yield eng
    eng.close()


def _to_date(minutes: list[dt.datetime], reset: str) -> list[tuple[str, int | None]]:
    """The running sum per minute with events, restarted each hour / minute (plain Python)."""
    out = []
    for m in minutes:
        start = m.replace(minute=0) if reset == "hour" else m
        vals = [a for _, t, a in EVENTS if start <= t < m + dt.timedelta(minutes=1)]
        vals = [a for a in vals if a is not None]
        out.append((m.isoformat(), sum(vals) if vals else None))
    return out


def _minutes() -> list[dt.datetime]:
    return sorted({t.replace(second=0) for _, t, _ in EVENTS})


def _iso(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(r[0].replace(" ", "T") if isinstance(r[0], str) else r[0], *r[1:]) for r in rows]


def test_an_hour_to_date_total_by_minute(engine: Engine, db: Path) -> None:
    """9:05 holds 1 + 2, 9:40 (a NULL amount) still 3, 9:59 7; 10:00 restarts at 8."""
    q = {"metrics": ["htd"], "group_by": ["metric_time:minute"]}
    got = _iso(result_rows(engine.execute(q, db_path=db)))
    want = _to_date(_minutes(), "hour")
    assert [(g[0][:16], g[1]) for g in got] == [(w[0][:16], w[1]) for w in want]
    assert [g[1] for g in got] == [3, 3, 7, 8, 16, 48]


def test_a_reset_at_the_query_grain_is_the_bucket_itself(engine: Engine, db: Path) -> None:
    """Reset by hour, grouped by hour: each hour's own sum (MetricFlow's hour grain_to_date)."""
    res = engine.execute(
        {"metrics": ["htd", "amount"], "group_by": ["metric_time:hour"]}, db_path=db
    )
    rows = result_rows(res)
    assert [(r[1], r[2]) for r in rows] == [(7, 7), (8, 8), (48, 48)]
    minute = engine.execute(
        {"metrics": ["mtd_minute", "amount"], "group_by": ["metric_time:minute"]}, db_path=db
    )
    assert all(r[1] == r[2] for r in result_rows(minute))


def test_a_time_range_start_aligns_the_scan_to_the_hour(engine: Engine, db: Path) -> None:
    """From 9:30 on, 9:40's hour-to-date still counts 9:05's events (the scan starts at 9:00)."""
    q = {
        "metrics": ["htd"],
        "group_by": ["metric_time:minute"],
        "time_range": {"start": "2024-01-01T09:30:00", "end": "2024-01-01T11:00:00"},
    }
    got = [(g[0][:16], g[1]) for g in _iso(result_rows(engine.execute(q, db_path=db)))]
    want = [(w[0][:16], w[1]) for w in _to_date(_minutes(), "hour")]
    assert got == [w for w in want if "09:30" <= w[0][11:16] < "11:00"]
    assert got[0] == ("2024-01-01T09:40", 3)


def test_a_reset_finer_than_the_query_grain_is_refused(engine: Engine) -> None:
    with pytest.raises(OsiError) as err:
        engine.compile({"metrics": ["htd"], "group_by": ["metric_time:day"]})
    assert err.value.code == "window_reset_too_fine"


def test_a_sub_day_reset_is_a_1_15_shape() -> None:
    eng = Engine(model_text=_model([metric("m", "SUM(events.amount)", _w(HTD, "1.14"))]))
    try:
        codes = {w["code"] for w in eng.warnings}
    finally:
        eng.close()
    assert "datus_ext_key_newer_than_declared" in codes
