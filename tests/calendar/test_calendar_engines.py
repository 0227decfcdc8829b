"""Issue 22 items 2-6 and 8 on every engine of the conformance suite (DuckDB, SQLite,
DataFusion, chDB, PostgreSQL, MariaDB, Spark): sub-day grains, date parts, week starts, fiscal
and retail periods, calendar-table grains and densification over them, each bucketed by the
generated SQL on the real engine and compared with plain Python (`datetime`, `calendar`), never
with dosi's own bucket arithmetic. An engine that cannot run a feature must refuse it with a
structured `dialect_unsupported_*` error before any SQL runs. PostgreSQL and MariaDB run when
DOSI_TEST_POSTGRES / DOSI_TEST_MARIADB are set (each in a database of its own), Spark when
pyspark and a Java runtime are present; otherwise they are skipped with the reason.
Requirement IDs: CORE-Q-02 (`:<grain>` group-by items), CORE-Q-06 (a range's start inclusive,
end exclusive), WIN-OFF-06 (an offset reads the shifted calendar bucket, NULL if empty),
FILL-02 (an empty densified bucket of a SUM stays NULL). The retail year is computed here from its definition (the
year-end weekday nearest the end of January), independently of dosi.plan.calendar."""

from __future__ import annotations

import calendar as pycal
import datetime as dt
import os
import random
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conformkit import (
    load_chdb,
    load_datafusion,
    load_mysql,
    load_postgres_tables,
    load_spark,
    load_sqlite,
)
from enginekit import dataset, field, metric, model_doc, to_yaml

import dosi

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb", "postgres", "mariadb", "spark")
#: MariaDB's database for this module's tables (the conformance matrix owns `main` there)
MARIA_DB = "dosi_cal22"
START = dt.datetime(2018, 12, 20)


def _rows() -> list[tuple[int, dt.datetime, int]]:
    rnd = random.Random(22)
    out = []
    for i in range(600):  # 2018-12 .. 2026-01: year ends, 53-week retail years, DST-free
        ts = START + dt.timedelta(seconds=rnd.randrange(0, 7 * 366 * 86_400))
        out.append((i, ts, rnd.randrange(1, 100)))
    # a burst inside one day, for the sub-day grains
    for j in range(40):
        ts = dt.datetime(2024, 3, 9, 22, 58, 0) + dt.timedelta(seconds=37 * j)
        out.append((1000 + j, ts, j + 1))
    return out


ROWS = _rows()
TABLES = ("events", "cal")
CAL_START = dt.date(2018, 12, 1)


def _label(d: dt.date) -> str:
    return f"W{(d - CAL_START).days // 7:04d}"


def _ten(d: dt.date) -> dt.date:
    return CAL_START + dt.timedelta(days=(d - CAL_START).days // 10 * 10)


_W: dict[str, Any] = {
    "prev_hour": {"type": "pop", "offset": "1 hour", "calculation": "value"},
    "fytd": {"type": "cumulative", "function": "sum", "reset": "fiscal_year"},
    "fyoy": {"type": "pop", "offset": "1 fiscal_year", "calculation": "value"},
    "ryoy": {"type": "pop", "offset": "1 retail_year", "calculation": "value"},
    "wtd": {"type": "cumulative", "function": "sum", "reset": "week"},
    "wow": {"type": "pop", "offset": "1 week", "calculation": "value"},
}


def model_text(schema: str = "main") -> str:
    """The calendar model over tables in `schema`."""
    return to_yaml(_model(schema))


def _model(schema: str) -> dict[str, Any]:
    return model_doc(
        [
            dataset(
                "events",
                [
                    "id",
                    field("ts", datatype="DateTime", is_time=True),
                    field("d", datatype="Date", is_time=True),
                    field("amount", datatype="Integer"),
                ],
                source=f"{schema}.events",
                primary_key=["id"],
                ext={"time_dimension": "ts"},
            ),
            dataset(
                "cal",
                [field("ds", datatype="Date", is_time=True), "week_label", "period_start"],
                source=f"{schema}.cal",
                primary_key=["ds"],
            ),
        ],
        metrics=[
            metric("revenue", "SUM(events.amount)"),
            metric("rev_prev_hour", "SUM(events.amount)", {"window": _W["prev_hour"]}),
            metric("rev_fytd", "SUM(events.amount)", {"window": _W["fytd"]}),
            metric("rev_fyoy", "SUM(events.amount)", {"window": _W["fyoy"]}),
            metric("rev_ryoy", "SUM(events.amount)", {"window": _W["ryoy"]}),
            metric("rev_wtd", "SUM(events.amount)", {"window": _W["wtd"]}),
            metric("rev_wow", "SUM(events.amount)", {"window": _W["wow"]}),
        ],
        ext={
            "v": "1.10",
            "calendar": {
                "fiscal_year": {"start_month": 4},
                "retail": {"pattern": "4-5-4", "year_end_month": 1, "year_end_weekday": "saturday"},
                "table": {
                    "dataset": "cal",
                    "date": "ds",
                    "grains": {"label_week": "week_label", "ten_days": "period_start"},
                },
            },
        },
    )


MODEL = model_text()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("calendar")
    db, parquet = folder / "cal.duckdb", folder / "parquet"
    parquet.mkdir()
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE events (id INTEGER, ts TIMESTAMP, d DATE, amount INTEGER)")
    con.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?)", [(i, ts, ts.date(), a) for i, ts, a in ROWS]
    )
    con.execute(f"COPY events TO '{parquet / 'events.parquet'}' (FORMAT PARQUET)")
    con.execute("CREATE TABLE cal (ds DATE, week_label VARCHAR, period_start DATE)")
    days = [CAL_START + dt.timedelta(days=i) for i in range(8 * 366)]
    con.executemany("INSERT INTO cal VALUES (?, ?, ?)", [(d, _label(d), _ten(d)) for d in days])
    con.execute(f"COPY cal TO '{parquet / 'cal.parquet'}' (FORMAT PARQUET)")
    con.close()
    return db, parquet


_PACKAGES = {
    "sqlite": "sqlite3",
    "datafusion": "datafusion",
    "chdb": "chdb",
    "postgres": "psycopg",
    "mariadb": "pymysql",
    "spark": "pyspark",
}


def _unavailable(kind: str) -> str | None:
    if kind == "postgres" and not os.environ.get("DOSI_TEST_POSTGRES"):
        return "postgres: set DOSI_TEST_POSTGRES to run"
    if kind == "mariadb" and not os.environ.get("DOSI_TEST_MARIADB"):
        return "mariadb: set DOSI_TEST_MARIADB to run"
    if kind == "spark" and shutil.which("java") is None:
        return "spark: no Java runtime"
    return None


def _client(kind: str, files: tuple[Path, Path], tmp: Path) -> tuple[Any, Callable[[], None]]:
    """(client object, closer) for one engine, loaded with this module's tables."""
    db, parquet = files
    if kind == "sqlite":
        con = load_sqlite(db, tmp / "cal.sqlite", TABLES)
        return con, con.close
    if kind == "datafusion":
        return load_datafusion(parquet, TABLES), lambda: None
    if kind == "chdb":
        session = load_chdb(parquet, tmp, TABLES)
        return session, session.close
    if kind == "spark":
        spark = load_spark(parquet, tmp, TABLES)
        return spark, spark.stop
    if kind == "postgres":
        import portkit
        import psycopg

        holder = portkit.session_database(os.environ["DOSI_TEST_POSTGRES"])
        dsn = holder.__enter__()
        pg = psycopg.connect(dsn, autocommit=True)
        pg.execute("CREATE SCHEMA main")
        load_postgres_tables(db, pg, TABLES, portkit.pg_type)

        def close() -> None:
            pg.close()
            holder.__exit__(None, None, None)

        return pg, close
    import pymysql

    from dosi.execute.mysql_runner import parse_mysql_uri

    my = pymysql.connect(**parse_mysql_uri(os.environ["DOSI_TEST_MARIADB"]))
    load_mysql(db, my, TABLES, database=MARIA_DB)

    def drop() -> None:
        with my.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {MARIA_DB}")
        my.close()

    return my, drop


@pytest.fixture(scope="module", params=ENGINES)
def engine(
    request: pytest.FixtureRequest, files: tuple[Path, Path], tmp_path_factory: Any
) -> Iterator[dosi.Engine]:
    kind = request.param
    db, _ = files
    if kind == "duckdb":
        eng = dosi.Engine(
            model_text=MODEL, connections={"duck": {"type": "duckdb", "uri": str(db)}}
        )
        yield eng
        eng.close()
        return
    pytest.importorskip(_PACKAGES[kind])
    why = _unavailable(kind)
    if why is not None:
        pytest.skip(why)
    client, close = _client(kind, files, tmp_path_factory.mktemp(kind))
    text = model_text(MARIA_DB) if kind == "mariadb" else MODEL
    eng = dosi.Engine(model_text=text, connections={kind: {"type": kind, "client": client}})
    try:
        yield eng
    finally:
        eng.close()
        close()


# -- independent expectations ----------------------------------------------------------------


def _day(v: Any) -> dt.date:
    if isinstance(v, str):
        v = dt.datetime.fromisoformat(v)
    return v.date() if isinstance(v, dt.datetime) else v


def _ts(v: Any) -> dt.datetime:
    if isinstance(v, str):
        return dt.datetime.fromisoformat(v)
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    return dt.datetime.combine(v, dt.time())


def _retail_end(year: int) -> dt.date:
    """The Saturday nearest January 31 of `year` (NRF 4-5-4)."""
    last = dt.date(year, 1, 31)
    return min(
        (last + dt.timedelta(days=k) for k in range(-3, 4)),
        key=lambda x: (x.weekday() != 5, abs((x - last).days)),
    )


def _retail(day: dt.date) -> tuple[dt.date, int]:
    """(first day of the retail year holding `day`, week index in it)."""
    year = day.year if day <= _retail_end(day.year) else day.year + 1
    start = _retail_end(year - 1) + dt.timedelta(days=1)
    return start, (day - start).days // 7


def _retail_month(day: dt.date) -> dt.date:
    start, week = _retail(day)
    bounds = [0]
    for w in [4, 5, 4] * 4:
        bounds.append(bounds[-1] + w)
    month = max(i for i in range(12) if bounds[i] <= week)
    return start + dt.timedelta(weeks=bounds[month])


def _fiscal_quarter(day: dt.date) -> dt.date:
    months = day.year * 12 + day.month - 1 - 3  # fiscal year from April
    q0 = months - months % 3 + 3
    return dt.date(q0 // 12, q0 % 12 + 1, 1)


def _fiscal_year(day: dt.date) -> dt.date:
    return dt.date(day.year if day.month >= 4 else day.year - 1, 4, 1)


def _week(day: dt.date, start: int) -> dt.date:
    return day - dt.timedelta(days=(day.weekday() - start) % 7)


def _sums(key: Callable[[dt.datetime], Any]) -> dict[Any, int]:
    out: dict[Any, int] = defaultdict(int)
    for _, ts, a in ROWS:
        out[key(ts)] += a
    return dict(out)


def _got(eng: dosi.Engine, group: str, conv: Callable[[Any], Any], **kw: Any) -> dict[Any, int]:
    res = eng.execute({"metrics": ["revenue"], "group_by": [group], **kw})
    col = next(c for c in res["columns"] if c != "revenue")
    return {conv(r[col]): int(r["revenue"]) for r in res["rows"]}


# -- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("grain", ["hour", "minute", "second"])
def test_sub_day_grains_bucket_timestamps(engine: dosi.Engine, grain: str) -> None:
    """Issue 22 item 2: hour / minute / second buckets of a timestamp axis."""
    cut = {"hour": dict(minute=0, second=0), "minute": dict(second=0), "second": {}}[grain]
    want = _sums(lambda t: t.replace(microsecond=0, **cut))
    assert _got(engine, f"metric_time:{grain}", _ts) == want


@pytest.mark.parametrize(
    ("part", "fn"),
    [
        ("day_of_week", lambda t: t.isoweekday()),
        ("month_of_year", lambda t: t.month),
        ("quarter_of_year", lambda t: (t.month - 1) // 3 + 1),
        ("hour_of_day", lambda t: t.hour),
        ("week_of_year", lambda t: t.isocalendar()[1]),
        ("day_of_month", lambda t: t.day),
        ("day_of_year", lambda t: t.timetuple().tm_yday),
    ],
)
def test_date_parts_are_integer_groupings(
    engine: dosi.Engine, part: str, fn: Callable[[dt.datetime], int]
) -> None:
    """Issue 22 item 3: date parts group as integers (ISO numbering: 1 = Monday)."""
    got = _got(engine, f"metric_time:{part}", int)
    assert got == _sums(fn)


@pytest.mark.parametrize(("name", "start"), [("monday", 0), ("sunday", 6), ("saturday", 5)])
def test_week_start_is_honoured_identically(engine: dosi.Engine, name: str, start: int) -> None:
    """Issue 22 item 4: a query's week_start moves every week bucket and day_of_week."""
    kw = {} if name == "monday" else {"week_start": name}
    assert _got(engine, "metric_time:week", _day, **kw) == _sums(lambda t: _week(t.date(), start))
    dow = _got(engine, "metric_time:day_of_week", int, **kw)
    assert dow == _sums(lambda t: (t.weekday() - start) % 7 + 1)
    # a Date axis buckets alike
    assert _got(engine, "events.d:week", _day, **kw) == _sums(lambda t: _week(t.date(), start))


def test_fiscal_quarter_and_year(engine: dosi.Engine) -> None:
    """Issue 22 item 5: a fiscal year starting in April."""
    assert _got(engine, "metric_time:fiscal_quarter", _day) == _sums(
        lambda t: _fiscal_quarter(t.date())
    )
    assert _got(engine, "metric_time:fiscal_year", _day) == _sums(lambda t: _fiscal_year(t.date()))
    assert _got(engine, "events.d:fiscal_year", _day) == _sums(lambda t: _fiscal_year(t.date()))


def test_retail_periods(engine: dosi.Engine) -> None:
    """Issue 22 item 5: 4-5-4 retail months, quarters and 52/53-week years."""
    assert _got(engine, "metric_time:retail_year", _day) == _sums(lambda t: _retail(t.date())[0])
    assert _got(engine, "metric_time:retail_month", _day) == _sums(
        lambda t: _retail_month(t.date())
    )
    quarter = _sums(
        lambda t: _retail(t.date())[0] + dt.timedelta(weeks=13 * min(_retail(t.date())[1] // 13, 3))
    )
    assert _got(engine, "events.d:retail_quarter", _day) == quarter


def test_retail_years_have_52_or_53_weeks() -> None:
    """The expectation itself: retail years tile the calendar in 52 or 53 weeks."""
    for year in range(2000, 2040):
        weeks = (_retail_end(year) - _retail_end(year - 1)).days / 7
        assert weeks in (52, 53)
    assert (_retail_end(2024) - _retail_end(2023)).days == 371  # NRF 2023 had 53 weeks
    assert pycal.weekday(2025, 2, 1) == 5 and _retail_end(2025) == dt.date(2025, 2, 1)


# -- window metrics over sub-day and calendar grains -----------------------------------------


def _window(eng: dosi.Engine, metric_name: str, group: str, conv: Callable[[Any], Any]) -> dict:
    res = eng.execute({"metrics": ["revenue", metric_name], "group_by": [group]})
    col = next(c for c in res["columns"] if c not in ("revenue", metric_name))
    out = {}
    for r in res["rows"]:
        v = r[metric_name]
        out[conv(r[col])] = None if v is None else int(v)
    return out


def test_offset_of_one_hour(engine: dosi.Engine) -> None:
    """Issue 22 item 2: `"offset": "1 hour"` reads the calendar hour before (NULL if empty)."""
    sums = _sums(lambda t: t.replace(minute=0, second=0, microsecond=0))
    want = {k: sums.get(k - dt.timedelta(hours=1)) for k in sums}
    assert _window(engine, "rev_prev_hour", "metric_time:hour", _ts) == want


def test_fiscal_ytd_resets_in_april(engine: dosi.Engine) -> None:
    """Issue 22 item 5: a cumulative sum resetting every fiscal year (April)."""
    sums = _sums(lambda t: t.date().replace(day=1))
    want, running = {}, {}
    for k in sorted(sums):
        fy = _fiscal_year(k)
        running[fy] = running.get(fy, 0) + sums[k]
        want[k] = running[fy]
    assert _window(engine, "rev_fytd", "metric_time:month", _day) == want


def test_fiscal_year_over_year(engine: dosi.Engine) -> None:
    """Issue 22 item 5: fiscal quarter vs the same fiscal quarter a fiscal year before."""
    sums = _sums(lambda t: _fiscal_quarter(t.date()))
    want = {k: sums.get(k.replace(year=k.year - 1)) for k in sums}
    assert _window(engine, "rev_fyoy", "metric_time:fiscal_quarter", _day) == want


def test_retail_year_over_year_matches_month_with_month(engine: dosi.Engine) -> None:
    """Issue 22 item 5: a retail month vs the same retail month of the previous retail
    year, across a 53-week year (2023)."""
    sums = _sums(lambda t: _retail_month(t.date()))

    def position(k: dt.date) -> tuple[dt.date, int]:
        start, week = _retail(k)
        return start, week

    by_pos = {position(k): v for k, v in sums.items()}
    want = {}
    for k in sums:
        start, week = position(k)
        prev_start = _retail(start - dt.timedelta(days=1))[0]
        want[k] = by_pos.get((prev_start, week))
    got = _window(engine, "rev_ryoy", "metric_time:retail_month", _day)
    assert got == want
    assert any(v is not None for v in got.values())


def test_date_part_window_is_a_structured_error(engine: dosi.Engine) -> None:
    """Issue 22 item 3: a window metric grouped by a date part alone is refused."""
    with pytest.raises(dosi.QueryError) as info:
        engine.execute({"metrics": ["rev_fytd"], "group_by": ["metric_time:month_of_year"]})
    assert info.value.code == "window_on_date_part"


def test_calendar_table_grains(engine: dosi.Engine, request: pytest.FixtureRequest) -> None:
    """Issue 22 item 6: grains named by a calendar dataset's columns roll days up through it
    (a label column and a date column); ClickHouse and DataFusion cannot group by the
    correlated lookup:
    a structured error before any SQL runs."""
    if request.node.callspec.params["engine"] in ("chdb", "datafusion"):
        with pytest.raises(dosi.QueryError) as info:
            engine.execute({"metrics": ["revenue"], "group_by": ["metric_time:label_week"]})
        assert info.value.code == "dialect_unsupported_calendar_table"
        return
    assert _got(engine, "metric_time:label_week", str) == _sums(lambda t: _label(t.date()))
    assert _got(engine, "metric_time:ten_days", _day) == _sums(lambda t: _ten(t.date()))
    assert _got(engine, "events.d:ten_days", _day) == _sums(lambda t: _ten(t.date()))


# -- densification over these grains (issue 22 items 1 and 8) --------------------------------


def _dense(eng: dosi.Engine, group: str, conv: Callable[[Any], Any], **kw: Any) -> list[tuple]:
    res = eng.execute({"metrics": ["revenue"], "group_by": [group], "densify": "time", **kw})
    col = next(c for c in res["columns"] if c != "revenue")
    rows = [
        (conv(r[col]), None if r["revenue"] is None else int(r["revenue"])) for r in res["rows"]
    ]
    return sorted(rows, key=lambda r: r[0])


def _series(first: Any, stop: Any, step: Callable[[Any], Any]) -> list[Any]:
    out = []
    while first < stop:
        out.append(first)
        first = step(first)
    return out


def test_densify_hours(engine: dosi.Engine) -> None:
    """Issue 22 items 1, 2 and 8: every hour of the range comes back, the empty ones NULL
    (revenue declares no D-FILL), the others with their sums."""
    start, end = dt.datetime(2024, 3, 9, 19), dt.datetime(2024, 3, 10, 3)
    rng = {"start": start.isoformat(), "end": end.isoformat()}
    sums = _sums(lambda t: t.replace(minute=0, second=0, microsecond=0))
    hours = _series(start, end, lambda h: h + dt.timedelta(hours=1))
    want = [(h, sums.get(h)) for h in hours]
    assert _dense(engine, "metric_time:hour", _ts, time_range=rng) == want
    assert any(v is None for _, v in want) and any(v is not None for _, v in want)


@pytest.mark.parametrize(("name", "start"), [("sunday", 6), ("saturday", 5)])
def test_densify_weeks_on_a_week_start(engine: dosi.Engine, name: str, start: int) -> None:
    """Issue 22 items 1, 4 and 8: the dense week series starts its weeks on the query's
    week_start on every engine (no warehouse week start leaks into the spine)."""
    first = _week(dt.date(2024, 1, 10), start)
    stop = first + dt.timedelta(weeks=20)
    rng = {"start": first.isoformat(), "end": stop.isoformat()}
    sums = _sums(lambda t: _week(t.date(), start))
    want = [(w, sums.get(w)) for w in _series(first, stop, lambda w: w + dt.timedelta(weeks=1))]
    assert _dense(engine, "metric_time:week", _day, week_start=name, time_range=rng) == want


def test_densify_fiscal_and_retail_grains(engine: dosi.Engine) -> None:
    """Issue 22 items 1, 5 and 8: dense fiscal quarters and retail months hold every period
    of the range once (a day-step spine bucketed like the data)."""
    rng = {"start": "2023-04-01", "end": "2024-04-01"}
    sums = _sums(lambda t: _fiscal_quarter(t.date()))
    quarters = [dt.date(2023, 4, 1), dt.date(2023, 7, 1), dt.date(2023, 10, 1), dt.date(2024, 1, 1)]
    want = [(q, sums.get(q)) for q in quarters]
    assert _dense(engine, "metric_time:fiscal_quarter", _day, time_range=rng) == want
    year = _retail(dt.date(2024, 6, 1))[0]
    stop = _retail(year + dt.timedelta(days=371))[0]
    months = sorted({_retail_month(d) for d in _series(year, stop, lambda d: d + dt.timedelta(1))})
    assert len(months) == 12
    sums = _sums(lambda t: _retail_month(t.date()))
    got = _dense(
        engine,
        "metric_time:retail_month",
        _day,
        time_range={"start": year.isoformat(), "end": stop.isoformat()},
    )
    assert got == [(m, sums.get(m)) for m in months]


def test_densify_calendar_table_grain(engine: dosi.Engine, request: pytest.FixtureRequest) -> None:
    """Issue 22 items 1, 6 and 8: a dense calendar-table grain lists every period the
    calendar gives the range's days; ClickHouse and DataFusion refuse it before SQL runs."""
    rng = {"start": "2024-01-01", "end": "2024-03-01"}
    if request.node.callspec.params["engine"] in ("chdb", "datafusion"):
        with pytest.raises(dosi.QueryError) as info:
            _dense(engine, "metric_time:ten_days", _day, time_range=rng)
        assert info.value.code == "dialect_unsupported_calendar_table"
        return
    days = _series(dt.date(2024, 1, 1), dt.date(2024, 3, 1), lambda d: d + dt.timedelta(1))
    sums = _sums(lambda t: _ten(t.date()))
    in_range = {
        k: v
        for k, v in _sums(
            lambda t: _ten(t.date()) if t.year == 2024 and t.month < 3 else None
        ).items()
        if k is not None
    }
    want = [(p, in_range.get(p)) for p in sorted({_ten(d) for d in days})]
    assert sums  # the data spans the calendar
    assert _dense(engine, "metric_time:ten_days", _day, time_range=rng) == want


@pytest.mark.parametrize(("name", "start"), [("monday", 0), ("sunday", 6), ("saturday", 5)])
def test_week_start_moves_resets_offsets_and_ranges(
    engine: dosi.Engine, name: str, start: int
) -> None:
    """Issue 22 items 4 and 8: a week-to-date sum resets on the query's week start, a
    one-week offset reads the week before on that calendar, a range bounded on week starts
    keeps whole weeks, and week_of_year stays ISO whatever the week start."""
    kw = {} if name == "monday" else {"week_start": name}
    first = _week(dt.date(2024, 2, 7), start)
    stop = first + dt.timedelta(weeks=10)
    rng = {"start": first.isoformat(), "end": stop.isoformat()}
    days = _sums(lambda t: t.date())
    want_wtd, running = {}, {}
    for d in sorted(k for k in days if first <= k < stop):
        w = _week(d, start)
        running[w] = running.get(w, 0) + days[d]
        want_wtd[d] = running[w]
    res = engine.execute(
        {"metrics": ["rev_wtd"], "group_by": ["metric_time:day"], "time_range": rng, **kw}
    )
    got = {_day(r["metric_time__day"]): int(r["rev_wtd"]) for r in res["rows"]}
    assert got == want_wtd
    weeks = _sums(lambda t: _week(t.date(), start))
    res = engine.execute(
        {
            "metrics": ["revenue", "rev_wow"],
            "group_by": ["metric_time:week"],
            "time_range": rng,
            **kw,
        }
    )
    got_wow = {
        _day(r["metric_time__week"]): (
            int(r["revenue"]),
            None if r["rev_wow"] is None else int(r["rev_wow"]),
        )
        for r in res["rows"]
    }
    want_wow = {
        w: (v, weeks.get(w - dt.timedelta(weeks=1))) for w, v in weeks.items() if first <= w < stop
    }
    assert got_wow == want_wow
    iso = _got(engine, "metric_time:week_of_year", int, **kw)
    assert iso == _sums(lambda t: t.isocalendar()[1])
