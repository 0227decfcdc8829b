"""Issue 22 item 8 hypothesis properties of the calendar SQL dosi generates (not of its Python
arithmetic): for any retail declaration, the retail years the SQL buckets days into have 52 or
53 weeks, follow one another without a gap or an overlap, end on the year-end weekday the
declared rule picks (computed here from its definition), and hold twelve retail months of the
declared pattern (a 53rd week joins the last month); a sub-day bucket of any instant is the
instant's slot in an even partition of its day. Each expression is rendered for DuckDB and
SQLite and run there. Requirement IDs: CORE-Q-02 (a `:<grain>` group-by item buckets its
value), GRAIN-05 (truncating to a grain)."""

from __future__ import annotations

import calendar as pycal
import datetime as dt
import itertools
import sqlite3
from typing import Any

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dosi.ir.calendar import CalendarIr, RetailCalendar
from dosi.sql.calendar import grain_bucket
from dosi.sql.dialects import get_dialect

PATTERNS = ((4, 4, 5), (4, 5, 4), (5, 4, 4))
DUCK = duckdb.connect()


def _duck(sql: str) -> list[tuple[Any, ...]]:
    return DUCK.execute(sql).fetchall()


def _year_end(year: int, month: int, weekday: int, rule: str) -> dt.date:
    """The declared year end, from its definition: among the days carrying the weekday
    within a week of the month's last day, the last one on or before it (`last`) or the
    closest one (`nearest`)."""
    last = dt.date(year, month, pycal.monthrange(year, month)[1])
    days = [last + dt.timedelta(days=k) for k in range(-6, 7)]
    hits = [d for d in days if d.weekday() == weekday]
    if rule == "last":
        return max(d for d in hits if d <= last)
    return min(hits, key=lambda d: abs((d - last).days))


@settings(max_examples=40, deadline=None)
@given(
    pattern=st.sampled_from(PATTERNS),
    month=st.integers(1, 12),
    weekday=st.integers(0, 6),
    rule=st.sampled_from(["nearest", "last"]),
    year=st.integers(1950, 2080),
)
def test_retail_years_have_52_or_53_weeks_and_tile_the_calendar(
    pattern: tuple[int, int, int], month: int, weekday: int, rule: str, year: int
) -> None:
    """Issue 22 items 5 and 8: retail years from the generated SQL tile the calendar."""
    r = RetailCalendar(pattern, month, weekday, rule)  # type: ignore[arg-type]
    cal = CalendarIr(retail=r)
    d = get_dialect("duckdb")
    day = exp.column("d")
    ry = d.render(grain_bucket(d, day, "retail_year", "Date", cal))
    rm = d.render(grain_bucket(d, day, "retail_month", "Date", cal))
    # the last year end (`nearest`) can fall up to three days into the year after: cover it
    first, last = dt.date(year - 1, 1, 1), dt.date(year + 3, 1, 31)
    rows = _duck(
        f"SELECT d, {ry}, {rm} FROM (SELECT CAST(g AS DATE) AS d FROM generate_series("
        f"DATE '{first}', DATE '{last}', INTERVAL 1 DAY) t(g)) s ORDER BY d"
    )
    ends = [_year_end(y, month, weekday, rule) for y in range(year - 1, year + 3)]
    for prev, end in itertools.pairwise(ends):
        start = prev + dt.timedelta(days=1)
        days = [(dd, a, b) for dd, a, b in rows if start <= dd <= end]
        assert {a for _, a, _ in days} == {start}, "one retail year, starting the day after"
        weeks = len(days) / 7
        assert weeks in (52, 53)
        starts = sorted({b for _, _, b in days})
        assert len(starts) == 12 and starts[0] == start
        bounds = [*starts, end + dt.timedelta(days=1)]
        lengths = [(b - a).days // 7 for a, b in itertools.pairwise(bounds)]
        want = list(pattern) * 4
        want[-1] += int(weeks == 53)
        assert lengths == want
    # the day after a year's end opens the next one: no gap, no overlap
    by_day = {dd: a for dd, a, _ in rows}
    for end in ends[1:-1]:
        assert by_day[end + dt.timedelta(days=1)] == end + dt.timedelta(days=1)
        assert by_day[end] < end


_STEP = {"hour": 3600, "minute": 60, "second": 1}


@settings(max_examples=60, deadline=None)
@given(
    day=st.dates(min_value=dt.date(1970, 1, 2), max_value=dt.date(2090, 12, 30)),
    seconds=st.lists(st.integers(0, 86_399), min_size=1, max_size=20),
    micro=st.integers(0, 999_999),
    grain=st.sampled_from(["hour", "minute", "second"]),
)
def test_a_sub_day_bucket_tiles_its_day(
    day: dt.date, seconds: list[int], micro: int, grain: str
) -> None:
    """Issue 22 items 2 and 8: an instant's hour / minute / second bucket is the start of its
    slot in the day cut into equal slots, on DuckDB and SQLite alike."""
    midnight = dt.datetime.combine(day, dt.time())
    step = _STEP[grain]
    instants = [midnight + dt.timedelta(seconds=s, microseconds=micro) for s in seconds]
    want = [midnight + dt.timedelta(seconds=(s // step) * step) for s in seconds]
    for key in ("duckdb", "sqlite"):
        d = get_dialect(key)
        sql = d.render(grain_bucket(d, exp.column("t"), grain, "DateTime", CalendarIr()))
        assert [_instant(g) for g in _bucketed(key, sql, instants)] == want, key


def _bucketed(key: str, sql: str, instants: list[dt.datetime]) -> list[Any]:
    """`sql` (over a column `t`) for each instant, on the engine `key`."""
    texts = [(t.isoformat(sep=" "),) for t in instants]
    if key == "duckdb":
        con = duckdb.connect()
        con.execute("CREATE TABLE x (t TIMESTAMP)")
    else:
        con = sqlite3.connect(":memory:")  # type: ignore[assignment]
        con.execute("CREATE TABLE x (t TEXT)")
    try:
        con.executemany("INSERT INTO x VALUES (?)", texts)
        return [r[0] for r in con.execute(f"SELECT {sql} FROM x ORDER BY rowid").fetchall()]
    finally:
        con.close()


def _instant(v: Any) -> dt.datetime:
    if isinstance(v, str):
        return dt.datetime.fromisoformat(v)
    return v
