"""Portability: streaming-window queries render as plain SQL (no UDF calls) for every dialect
that `dosi.sql.stream_window_bounds` supports, agree with the window UDFs on DuckDB (UDF-GEN-01,
UDF-GEN-04, UDF-TUM-02/03, UDF-HOP-02/03, UDF-CUM-01/02, UDF-SES-01) and, when a PostgreSQL
server is available (``DOSI_TEST_POSTGRES``, see scripts/postgres.sh), give the same rows there.

DataFusion is not a target of the portable rendering (its SQL lacks ``integer * INTERVAL`` and
``DIV``); on DataFusion use the registered UDFs (`dosi.udf.register_datafusion`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
import sqlglot
import stream_ref as ref
from sqlglot import exp
from stream_ref import DAY, HOUR, MINUTE, SECOND, T, Win
from streamkit import Runner, assert_rows

import dosi
from dosi.udf import WINDOW_FUNCTION_ARITIES

# (id, query, reference window, metrics, dims, reference filters)
QUERIES: list[tuple[str, dict[str, Any], Win, list[str], list[str], dict[str, Any]]] = [
    (
        "tumble",
        {
            "metrics": ["event_count", "active_users", "value_per_event"],
            "group_by": ["users.country", "metric_time:tumble(1 hour, 15 minutes)"],
            "time_range": {"start": "2025-01-01", "end": "2025-01-04"},
        },
        Win("tumble", size=HOUR, offset=15 * MINUTE),
        ["event_count", "active_users", "value_per_event"],
        ["users.country"],
        {"start": T("2025-01-01"), "end": T("2025-01-04")},
    ),
    (
        "hop",
        {
            "metrics": ["event_count", "active_users", "events_per_user"],
            "group_by": ["events.kind", "metric_time:hop(10 minutes, 3 minutes)"],
            "where_sql": "events.value >= 0",
        },
        Win("hop", size=10 * MINUTE, slide=3 * MINUTE),
        ["event_count", "active_users", "events_per_user"],
        ["events.kind"],
        {"where": lambda r: r.value is not None and r.value >= 0},
    ),
    (
        "hop-two-datasets",
        {
            "metrics": ["event_count", "revenue"],
            "group_by": ["metric_time:hop(1 hour, 30 minutes)"],
        },
        Win("hop", size=HOUR, slide=30 * MINUTE),
        ["event_count", "revenue"],
        [],
        {},
    ),
    (
        "cumulate",
        {
            "metrics": ["event_count", "active_users", "total_value"],
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {"type": "cumulate", "size": "1 day", "step": "4 hours"},
                }
            ],
        },
        Win("cumulate", size=DAY, step=4 * HOUR),
        ["event_count", "active_users", "total_value"],
        [],
        {},
    ),
    (
        "session",
        {
            "metrics": ["event_count", "active_users", "value_per_event", "kinds"],
            "group_by": ["events.user_id", "metric_time:session(30 minutes)"],
        },
        Win("session", gap=30 * MINUTE),
        ["event_count", "active_users", "value_per_event", "kinds"],
        ["events.user_id"],
        {},
    ),
    (
        "session-global-sub-second",
        {"metrics": ["event_count"], "group_by": ["metric_time:session(500 milliseconds)"]},
        Win("session", gap=SECOND // 2),
        ["event_count"],
        [],
        {},
    ),
]
IDS = [q[0] for q in QUERIES]
UDF_NAMES = set(WINDOW_FUNCTION_ARITIES)


def _function_names(tree: exp.Expression) -> set[str]:
    names = set()
    for node in tree.find_all(exp.Func):
        names.add(node.sql_name().lower())
        if isinstance(node, exp.Anonymous):
            names.add(str(node.this).lower())
    return names


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "bigquery", "spark", "databricks"])
@pytest.mark.parametrize(("name", "query"), [(q[0], q[1]) for q in QUERIES], ids=IDS)
def test_renders_without_udfs(
    engine: dosi.Engine, dialect: str, name: str, query: dict[str, Any]
) -> None:
    sql = engine.compile(query, dialect=dialect)["sql"]
    tree = sqlglot.parse_one(sql, read=dialect)  # valid SQL in that dialect
    used = _function_names(tree)
    assert not used & UDF_NAMES, f"{dialect} SQL calls window UDFs {used & UDF_NAMES}"
    assert "window_start" in sql and "window_end" in sql
    if name.startswith(("hop", "cumulate")):
        assert "dosi_windows" in sql  # rows expanded to their windows before aggregating


def test_postgres_text_is_plain_arithmetic(engine: dosi.Engine) -> None:
    sql = engine.compile(QUERIES[1][1], dialect="postgres")["sql"]
    assert "EXTRACT(EPOCH FROM events.event_ts)" in sql
    assert "CROSS JOIN (VALUES (0), (180000), (360000), (540000)) AS dosi_windows" in sql
    assert "CAST('1970-01-01 00:00:00' AS TIMESTAMP)" in sql  # no TO_TIMESTAMP (timestamptz)


def test_datafusion_alias_renders_postgres(engine: dosi.Engine) -> None:
    out = engine.compile(QUERIES[0][1], dialect="datafusion")
    assert out["dialect"] == "postgres"


# ------------------------------------------------------------------------------ DuckDB UDFs


@pytest.fixture(scope="module")
def udf_con(stream_db: str) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(stream_db, read_only=True)
    dosi.udf.register_duckdb(con)
    yield con
    con.close()


def _udf_rows(con: duckdb.DuckDBPyConnection, select: str, group: str) -> set[tuple[Any, ...]]:
    sql = (
        f"SELECT {select}, COUNT(event_id), COUNT(DISTINCT user_id) "
        f"FROM main.stream_events WHERE event_ts IS NOT NULL GROUP BY {group}"
    )
    return set(con.execute(sql).fetchall())


def test_tumble_equals_the_udfs(run: Runner, udf_con: Any) -> None:
    """UDF-GEN-04: the portable pair equals GROUP BY tumble(...), tumble_end(...)."""
    rows = run(
        {
            "metrics": ["event_count", "active_users"],
            "group_by": ["metric_time:tumble(20 minutes, -5 minutes)"],
        }
    )
    args = "event_ts, INTERVAL '20 minutes', INTERVAL '-5 minutes'"
    want = _udf_rows(
        udf_con, f"tumble({args}), tumble_end({args})", f"tumble({args}), tumble_end({args})"
    )
    assert {tuple(r.values()) for r in rows} == want


def test_hop_earliest_window_equals_the_udf(run: Runner, udf_con: Any) -> None:
    """UDF-HOP-02/03: hop(...) / hop_end(...) of every row is one of the engine's windows, and
    the earliest window holding the row."""
    rows = run(
        {
            "metrics": ["event_count"],
            "group_by": ["metric_time:hop(25 minutes, 10 minutes, 2 minutes)"],
        }
    )
    spans = {(r["window_start"], r["window_end"]) for r in rows}
    args = "event_ts, INTERVAL '10 minutes', INTERVAL '25 minutes', INTERVAL '2 minutes'"
    pairs = udf_con.execute(
        f"SELECT event_ts, hop({args}), hop_end({args}) FROM main.stream_events "
        "WHERE event_ts IS NOT NULL"
    ).fetchall()
    for ts, start, end in pairs:
        assert (start, end) in spans
        holding = [s for s, e in spans if s <= ts < e]
        assert min(holding) == start


def test_cumulate_epochs_equal_the_udfs(run: Runner, udf_con: Any) -> None:
    """UDF-CUM-01/02: the full-epoch windows are (cumulate(ts), cumulate_end(ts))."""
    rows = run(
        {
            "metrics": ["event_count", "active_users"],
            "group_by": ["metric_time:cumulate(1 day, 8 hours)"],
        }
    )
    full = {
        tuple(r.values())
        for r in rows
        if r["window_end"] - r["window_start"] == dt.timedelta(days=1)
    }
    args = "event_ts, INTERVAL '8 hours', INTERVAL '1 day'"
    assert full == _udf_rows(
        udf_con,
        f"cumulate({args}), cumulate_end({args})",
        f"cumulate({args}), cumulate_end({args})",
    )


def test_session_starts_are_session_udf_values(run: Runner, udf_con: Any) -> None:
    """UDF-SES-01: session(ts, gap) is the row's own time; a session starts at a row's time."""
    rows = run({"metrics": ["event_count"], "group_by": ["metric_time:session(1 minute)"]})
    starts = {
        r[0]
        for r in udf_con.execute(
            "SELECT session(event_ts, INTERVAL '1 minute') FROM main.stream_events"
        ).fetchall()
    }
    assert {r["window_start"] for r in rows} <= starts


# ------------------------------------------------------------------------------ PostgreSQL

PG = os.environ.get("DOSI_TEST_POSTGRES")
needs_pg = pytest.mark.skipif(
    not PG or shutil.which("psql") is None,
    reason="set DOSI_TEST_POSTGRES to a psql connection string to run on PostgreSQL",
)


def _psql(sql: str) -> str:
    assert PG is not None
    done = subprocess.run(
        ["psql", PG, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    return repr(v)


@pytest.fixture(scope="module")
def pg_schema() -> Iterator[str]:
    schema = f"dosi_stream_{uuid.uuid4().hex[:10]}"
    values = ", ".join(
        "(" + ", ".join(_literal(v) for v in (e.event_id, e.ts, e.user_id, e.kind, e.value)) + ")"
        for e in ref.EVENTS
    )
    users = ", ".join(f"({k}, {_literal(v)})" for k, v in ref.USERS.items())
    purchases = ", ".join(
        "(" + ", ".join(_literal(v) for v in (p.purchase_id, p.ts, p.user_id, p.amount)) + ")"
        for p in ref.PURCHASES
    )
    _psql(
        f"CREATE SCHEMA {schema}; "
        f"CREATE TABLE {schema}.stream_events(event_id BIGINT, event_ts TIMESTAMP, "
        "user_id INTEGER, kind VARCHAR, value DOUBLE PRECISION); "
        f"CREATE TABLE {schema}.stream_users(user_id INTEGER, country VARCHAR); "
        f"CREATE TABLE {schema}.stream_purchases(purchase_id BIGINT, purchase_ts TIMESTAMP, "
        "user_id INTEGER, amount DOUBLE PRECISION); "
        f"INSERT INTO {schema}.stream_events VALUES {values}; "
        f"INSERT INTO {schema}.stream_users VALUES {users}; "
        f"INSERT INTO {schema}.stream_purchases VALUES {purchases};"
    )
    yield schema
    _psql(f"DROP SCHEMA {schema} CASCADE")


def _typed(column: str, text: str) -> Any:
    if text == "":
        return None
    if column.startswith("window_"):
        return dt.datetime.fromisoformat(text)
    if column in ("kind", "country"):
        return text
    return float(text)


@needs_pg
@pytest.mark.parametrize(
    ("query", "window", "metrics", "dims", "filters"),
    [pytest.param(*q[1:], id=q[0]) for q in QUERIES],
)
def test_postgres_matches_reference(
    pg_schema: str,
    query: dict[str, Any],
    window: Win,
    metrics: list[str],
    dims: list[str],
    filters: dict[str, Any],
) -> None:
    eng = dosi.Engine(model_text=ref.model_yaml(pg_schema))
    sql = eng.compile(query, dialect="postgres")["sql"]
    out = _psql(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv, HEADER true)")
    reader = csv.DictReader(io.StringIO(out))
    rows = [{c: _typed(c, v) for c, v in r.items()} for r in reader]
    expected = ref.reference(window, metrics, dims, **filters)
    assert_rows(rows, expected)
