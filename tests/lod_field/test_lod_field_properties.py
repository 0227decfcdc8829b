"""Property: on any session data, fixed-field answers equal plain Python over the rows
(datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-03, LOD-PLAN-05/06/10, LOD-FLT-04/05)."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lodfieldkit import model_text

import dosi

USERS = st.sampled_from(["A", "B", "C", "D", None])
DAYS = st.integers(min_value=0, max_value=5)
ROWS = st.lists(st.tuples(USERS, DAYS, st.sampled_from([1, 2])), min_size=1, max_size=25)
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lodprop")


def _engine(base: Path, rows: list[tuple[str | None, int, int]]) -> dosi.Engine:
    db = base / f"p{next(_COUNTER)}.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE lod_session (user_id VARCHAR, event_date DATE, channel_id INTEGER)")
    start = dt.date(2025, 1, 1)
    con.executemany(
        "INSERT INTO lod_session VALUES (?, ?, ?)",
        [(u, start + dt.timedelta(days=d), c) for u, d, c in rows],
    )
    con.execute("CREATE TABLE lod_channel (channel_id INTEGER, channel_name VARCHAR)")
    con.execute("CREATE TABLE lod_promo (event_date DATE, promo_name VARCHAR)")
    con.execute("CREATE TABLE lod_acct (user_id VARCHAR, acct_name VARCHAR)")
    con.close()
    return dosi.Engine(
        model_text=model_text(), connections={"db": {"type": "duckdb", "uri": str(db)}}
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=ROWS)
def test_fixed_fields_equal_python(base_dir: Path, rows: list[tuple[str | None, int, int]]) -> None:
    e = _engine(base_dir, rows)
    days: dict[str | None, set[int]] = defaultdict(set)
    users: dict[int, set[str]] = defaultdict(set)
    for u, d, _c in rows:
        days[u].add(d)
        if u is not None:
            users[d].add(u)
    active = {u: len(ds) for u, ds in days.items()}  # NULL is a key of its own (LOD-PLAN-10)
    # two-stage: distinct users per active-day count (COUNT DISTINCT ignores the NULL user)
    want: dict[int, int] = defaultdict(int)
    for u, n in active.items():
        if u is not None:
            want[n] += 1
    got = e.execute({"metrics": ["user_num"], "group_by": ["sessions.active_day"]})["rows"]
    assert {r["active_day"]: r["user_num"] for r in got if r["user_num"]} == dict(want)
    # broadcast: session rows per active-day count (every row, its user's value)
    rows_by: dict[int, int] = defaultdict(int)
    for u, _d, _c in rows:
        rows_by[active[u]] += 1
    got = e.execute({"metrics": ["session_count"], "group_by": ["sessions.active_day"]})["rows"]
    assert {r["active_day"]: r["session_count"] for r in got} == dict(rows_by)
    # grid: AVG of daily users per channel, each date once per channel (LOD-PLAN-06)
    per_channel: dict[int, set[int]] = defaultdict(set)
    for _u, d, c in rows:
        per_channel[c].add(d)
    got = e.execute({"metrics": ["avg_daily_users"], "group_by": ["sessions.channel_id"]})["rows"]
    for r in got:
        ds = per_channel[r["channel_id"]]
        assert r["avg_daily_users"] == pytest.approx(sum(len(users[d]) for d in ds) / len(ds))
    # a where on a stored column never enters the rollup (LOD-FLT-04)
    got = e.execute(
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.channel_id = 2",
        }
    )["rows"]
    want2: dict[int, set[str]] = defaultdict(set)
    for u, _d, c in rows:
        if c == 2 and u is not None:
            want2[active[u]].add(u)
    assert {r["active_day"]: r["user_num"] for r in got if r["user_num"]} == {
        k: len(v) for k, v in want2.items()
    }
    e.close()
