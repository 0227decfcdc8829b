"""D-WINDOW `period_value` on every engine that runs here (issue 22 items 7 and 8): the
sampling step is window functions only (FIRST_VALUE over the whole partition, AVG OVER,
ROW_NUMBER), so each engine answers the densified and sparse samples exactly as plain Python
does (periodkit.expected). Requirement IDs: WIN-CUM-02, WIN-FRM-17."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformkit
import portkit
import pytest
from densekit import SALES, build
from enginekit import same
from periodkit import expected, model_text

import dosi
from dosi.execute.mysql_runner import parse_mysql_uri

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb", "postgres", "mariadb")
TABLES = ("sales",)
MARIADB_DATABASE = "dosi_period_value"  # this module's own database on the server
D = dt.date


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("period_engines")
    db = build(folder / "p.duckdb")
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
    text = model_text().replace("source: sales", f"source: {schema}.sales")
    tmp = tmp_path_factory.mktemp(kind)
    close: Any = lambda: None  # noqa: E731
    if kind == "duckdb":
        conn: dict[str, Any] = {"type": "duckdb", "uri": str(db)}
    elif kind == "sqlite":
        client = conformkit.load_sqlite(db, tmp / "p.sqlite", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    elif kind == "chdb":
        client = conformkit.load_chdb(parquet, tmp / "chdb", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    elif kind == "datafusion":
        conn = {"type": kind, "client": conformkit.load_datafusion(parquet, TABLES)}
    elif kind == "postgres":
        import psycopg

        holder = portkit.session_database(os.environ["DOSI_TEST_POSTGRES"])
        pg = psycopg.connect(holder.__enter__(), autocommit=True)
        pg.execute("CREATE SCHEMA main")
        conformkit.load_postgres_tables(db, pg, TABLES, portkit.pg_type)

        def close() -> None:
            pg.close()
            holder.__exit__(None, None, None)

        conn = {"type": "postgres", "client": pg}
    else:
        import pymysql

        my = pymysql.connect(**parse_mysql_uri(os.environ["DOSI_TEST_MARIADB"]))
        conformkit.load_mysql(db, my, TABLES, database=MARIADB_DATABASE)
        conn, close = {"type": "mariadb", "client": my}, my.close
    eng = dosi.Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


def _day(v: Any) -> D:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    return D.fromisoformat(str(v)[:10])


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("name", ["run_last", "mtd_first", "mtd_avg"])
def test_sampled_on_every_engine(target: tuple[str, dosi.Engine], name: str, dense: bool) -> None:
    kind, eng = target
    start, end = D(2024, 1, 10), D(2024, 7, 1)
    q: dict[str, Any] = {
        "metrics": [name],
        "group_by": ["metric_time:quarter", "sales.region"],
        "time_range": {"start": start.isoformat(), "end": end.isoformat()},
    }
    if dense:
        q["densify"] = "time"
    rows = eng.execute(q, connection=kind)["rows"]
    got = {(_day(r["metric_time__quarter"]), r["region"]): r[name] for r in rows}
    want = expected(SALES, name, "quarter", start, end, dense, by_region=True)
    assert set(got) == set(want), (kind, sorted(got), sorted(want))
    for k, v in want.items():
        g = got[k]
        assert (g is None and v is None) or (
            # an average of decimals: MariaDB and DataFusion keep 6 decimal places
            g is not None and v is not None and same(float(g), v, rel=1e-6)
        ), (kind, k, g, v)
