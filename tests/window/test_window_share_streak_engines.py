"""The share and streak families on the engines of the engine matrix: the embedded ones
(SQLite, DataFusion, chDB) beside DuckDB, and PostgreSQL / MariaDB when `.ci/run` (or
DOSI_TEST_POSTGRES / DOSI_TEST_MARIADB) provides a server: the same tables loaded into each
engine, the same queries, every value compared with the plain-Python references of
test_window_share / test_window_streak (never with another engine's answer). An engine whose
Python package or server is missing is skipped with the reason shown, never silently."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformkit
import portkit
import pytest
from test_window_share import shared
from test_window_streak import STREAK_SALES, streaked
from wm_common import SALES, Key, assert_series, build_db, model_yaml, series

import dosi
from dosi.execute.mysql_runner import parse_mysql_uri

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb", "postgres", "mariadb")
ROWS = (*SALES, *(dataclasses.replace(s, sale_id=1000 + s.sale_id) for s in STREAK_SALES))
WINDOWS: dict[str, Any] = {
    "sh": {"share": {}},
    "sh_none": {"type": "share", "partition": {"mode": "none"}},
    "pos": {"streak": {"op": ">"}},
    "growth": {"type": "streak", "compare": "change", "op": ">"},
    "flat_or_up": {"streak": {"compare": "change", "op": ">=", "target": 0}},
    "mom": {"type": "pop", "offset": "1 month", "calculation": "value"},
    # D-PARAM slot streak.target: a float threshold bound at query time
    "above": {
        "params": [{"name": "t", "type": "float", "default": 0, "min": -1000, "max": 1000}],
        "window": {"type": "streak", "op": ">=", "target": {"param": "t"}},
    },
}
TABLES = ("sales", "returns")
#: this module's own MariaDB database (the conformance matrix owns `main` on the server)
MARIADB_DATABASE = os.environ.get("DOSI_TEST_DB_PREFIX", "") + "dosi_share_streak"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("share_streak_engines")
    db = Path(build_db(folder / "w.duckdb", ROWS))
    return db, conformkit.export_parquet(db, folder, TABLES)


@pytest.fixture(scope="module", params=ENGINES)
def target(
    request: pytest.FixtureRequest,
    files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dosi.Engine]]:
    kind = request.param
    db, parquet = files
    why = conformkit.unavailable(kind)
    if why is not None:
        pytest.skip(why)
    schema = MARIADB_DATABASE if kind == "mariadb" else "main"
    text = model_yaml(WINDOWS).replace("source: sales", f"source: {schema}.sales")
    tmp = tmp_path_factory.mktemp(kind)
    close: Any = lambda: None  # noqa: E731
    if kind == "duckdb":
        conn: dict[str, Any] = {"type": "duckdb", "uri": str(db)}
    elif kind == "sqlite":
        client = conformkit.load_sqlite(db, tmp / "w.sqlite", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    elif kind == "chdb":
        client = conformkit.load_chdb(parquet, tmp / "chdb", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    elif kind == "datafusion":
        conn = {"type": kind, "client": conformkit.load_datafusion(parquet, TABLES)}
    elif kind == "postgres":
        conn, close = _postgres(db)
    else:
        conn, close = _mariadb(db)
    eng = dosi.Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


def _postgres(db: Path) -> tuple[dict[str, Any], Any]:
    """A fresh database on the server, schema `main` with the test tables."""
    import psycopg

    holder = portkit.session_database(os.environ["DOSI_TEST_POSTGRES"])
    dsn = holder.__enter__()
    con = psycopg.connect(dsn, autocommit=True)
    con.execute("CREATE SCHEMA main")
    conformkit.load_postgres_tables(db, con, TABLES, portkit.pg_type)

    def close() -> None:
        con.close()
        holder.__exit__(None, None, None)

    return {"type": "postgres", "client": con}, close


def _mariadb(db: Path) -> tuple[dict[str, Any], Any]:
    """Database `main` (replaced) on the server with the test tables."""
    import pymysql

    con = pymysql.connect(**parse_mysql_uri(os.environ["DOSI_TEST_MARIADB"]))
    conformkit.load_mysql(db, con, TABLES, database=MARIADB_DATABASE)
    return {"type": "mariadb", "client": con}, con.close


def _bucket(v: Any) -> Any:
    """A bucket as the references spell it (engines return DATE, TIMESTAMP or ISO text)."""
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()[:10]
    if isinstance(v, str) and len(v) >= 10 and v[4] == "-":
        return v[:10]
    return v


def _run(
    target: tuple[str, dosi.Engine], metrics: list[str], group_by: list[str], **kw: Any
) -> list[dict[str, Any]]:
    kind, eng = target
    return eng.execute({"metrics": metrics, "group_by": group_by, **kw}, connection=kind)["rows"]


def _keyed(rows: list[dict[str, Any]], cols: tuple[str, ...], metric: str) -> dict[Key, Any]:
    out: dict[Key, Any] = {}
    for r in rows:
        k = tuple(_bucket(r[c]) for c in cols)
        assert k not in out, f"duplicate row {k}"
        v = r[metric]
        out[k] = float(v) if v is not None and not isinstance(v, (int, float)) else v
    return out


RM = ("region", "metric_time__month")
RD = ("region", "metric_time__day")


def test_share_on_every_engine(target: tuple[str, dosi.Engine]) -> None:
    """Per month (with the zero-total west 2023-10 and the all-NULL 2023-06 as NULL), of the
    grand total, and of the whole range without a time bucket."""
    base = series("month", ("region",), rows=ROWS)
    rows = _run(target, ["sh", "sh_none"], ["sales.region", "metric_time:month"])
    assert_series(_keyed(rows, RM, "sh"), shared(base, lambda k: k[-1]), f"{target[0]} sh")
    assert_series(_keyed(rows, RM, "sh_none"), shared(base, lambda k: ()), f"{target[0]} none")
    by_region = series(None, ("region",), rows=ROWS)
    rows = _run(target, ["sh"], ["sales.region"])
    assert_series(_keyed(rows, ("region",), "sh"), shared(by_region, lambda k: ()), target[0])


def test_streak_on_every_engine(target: tuple[str, dosi.Engine]) -> None:
    """Daily runs broken by a missing day, a NULL, a tie (growth) and negatives; monthly runs
    broken by the SALES month gaps."""
    for grain, cols in (("day", RD), ("week", ("region", "metric_time__week")), ("month", RM)):
        base = series(grain, ("region",), rows=ROWS)
        rows = _run(
            target, ["pos", "growth", "flat_or_up"], ["sales.region", f"metric_time:{grain}"]
        )
        label = f"{target[0]} {grain}"
        assert_series(_keyed(rows, cols, "pos"), streaked(base, grain, ">"), f"{label} pos")
        assert_series(
            _keyed(rows, cols, "growth"), streaked(base, grain, ">", compare="change"), label
        )
        assert_series(
            _keyed(rows, cols, "flat_or_up"), streaked(base, grain, ">=", compare="change"), label
        )


def test_streak_with_a_bound_target_on_every_engine(target: tuple[str, dosi.Engine]) -> None:
    """The `streak.target` slot bound to a list: one column per threshold, each run against
    its own value (25.5 splits east's 20, 20 tie from its 30; -5 lets the -5 day through).
    PARAM-BIND-06, PARAM-OUT-02."""
    base = series("day", ("region",), rows=ROWS)
    kind, eng = target
    res = eng.execute(
        {
            "metrics": ["above"],
            "group_by": ["sales.region", "metric_time:day"],
            "params": {"t": [25.5, -5]},
        },
        connection=kind,
    )
    assert list(res["columns"])[2:] == ["above__t_25_5", "above__t_neg5"]
    for col, t in (("above__t_25_5", 25.5), ("above__t_neg5", -5)):
        assert_series(_keyed(res["rows"], RD, col), streaked(base, "day", ">=", t), f"{kind} {col}")


def test_share_and_streak_under_a_widened_scan_on_every_engine(
    target: tuple[str, dosi.Engine],
) -> None:
    """Beside a month-over-month metric (its lookback widens the scan), the share's grand
    total and the streak's runs still cover the queried range only."""
    start, end = dt.date(2024, 1, 1), dt.date(2024, 5, 1)
    base = series("month", ("region",), rows=ROWS, start=start, end=end)
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    rows = _run(
        target, ["sh_none", "pos", "mom"], ["sales.region", "metric_time:month"], time_range=tr
    )
    assert_series(_keyed(rows, RM, "sh_none"), shared(base, lambda k: ()), f"{target[0]} share")
    assert_series(_keyed(rows, RM, "pos"), streaked(base, "month", ">"), f"{target[0]} streak")
