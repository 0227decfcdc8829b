"""The 1.15 calendar `span` on the engines that run it (issue 22 item 8): DuckDB, and
PostgreSQL when a server is given (DOSI_TEST_POSTGRES). The same hand-written rows as
test_window_span.py; every value from plain Python. The other engines refuse before any SQL
(test_window_span.py checks the gate)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from typing import Any

import conformkit
import portkit
import psycopg
import pytest
from enginekit import make_db
from test_window_span import METRICS, SALES, _framed, _minus_months, _model, _statements

from dosi.engine import Engine

ENGINES = ("duckdb", "postgres")


@pytest.fixture(scope="module", params=ENGINES)
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Engine]]:
    kind = request.param
    why = conformkit.unavailable(kind)
    if why is not None:
        pytest.skip(why)
    db = make_db(tmp_path_factory.mktemp(f"span_{kind}") / "s.duckdb", _statements(SALES))
    text = _model(METRICS)
    close: Any = lambda: None  # noqa: E731
    if kind == "duckdb":
        conn: dict[str, Any] = {"type": "duckdb", "uri": str(db)}
    else:
        holder = portkit.session_database(os.environ["DOSI_TEST_POSTGRES"])
        dsn = holder.__enter__()
        con = psycopg.connect(dsn, autocommit=True)
        con.execute("CREATE SCHEMA main")
        conformkit.load_postgres_tables(db, con, ("sales",), portkit.pg_type)
        text = text.replace("source: sales", "source: main.sales")

        def close() -> None:
            con.close()
            holder.__exit__(None, None, None)

        conn = {"type": "postgres", "client": con}
    eng = Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


def _day(v: Any) -> str:
    return v.isoformat()[:10] if isinstance(v, dt.date | dt.datetime) else str(v)[:10]


def test_spans_answer_the_reference(target: tuple[str, Engine]) -> None:
    """A 2-month and a 3-day span by day, and under a time_range start (the widened scan)."""
    kind, eng = target
    q = {"metrics": ["rev_2m", "rev_3d"], "group_by": ["metric_time:day"]}
    rows = eng.execute(q, connection=kind)["rows"]
    days = sorted({d for _, d, _, _ in SALES})
    got = [(_day(r["metric_time__day"]), r["rev_2m"], r["rev_3d"]) for r in rows]
    want = [
        (t.isoformat(), _framed(t, _minus_months(t, 2)), _framed(t, t - dt.timedelta(days=3)))
        for t in days
    ]
    assert [(d, _num(a), _num(b)) for d, a, b in got] == [(d, _num(a), _num(b)) for d, a, b in want]
    ranged = eng.execute(
        {**q, "time_range": {"start": "2024-03-15", "end": "2024-05-01"}}, connection=kind
    )["rows"]
    assert [(_day(r["metric_time__day"]), _num(r["rev_2m"])) for r in ranged] == [
        ("2024-03-31", 12.0),
        ("2024-04-30", 6.0),
    ]


def _num(v: Any) -> float | None:
    return None if v is None else float(v)
