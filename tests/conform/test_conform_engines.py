"""D-CONFORM on other engines: the per-fact branches and their merge run on SQLite (always)
and PostgreSQL (with DOSI_TEST_POSTGRES; its merge is the UNION-of-keys strategy), value by
value against DuckDB on the same rows."""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import assert_rows_equal, result_rows
from netbarkit import NETBAR_GENERATOR, NETBAR_MODEL

from dosi.engine import Engine

QUERIES: dict[str, dict[str, Any]] = {
    "two-facts-month": {"metrics": ["users", "payers", "pay_rate"],
                        "group_by": ["netbar_payment.pay_date:month"]},
    "three-facts-week": {"metrics": ["users", "payers", "registrations", "payers_per_visitor"],
                         "group_by": ["netbar_register.reg_date:week"]},
    "platform-spelling": {"metrics": ["users", "revenue"],
                          "group_by": ["netbar_payment.platform_id"]},
    "metric-time-range": {"metrics": ["pay_rate", "arppu"], "group_by": ["metric_time:month"],
                          "time_range": {"start": "2024-01-15", "end": "2024-03-01"}},
    "where-other-spelling": {"metrics": ["logins", "revenue"],
                             "group_by": ["netbar_login.stat_date:month"],
                             "where_sql": "netbar_payment.platform_id IN (1, 2)"},
}  # fmt: skip


def _rows() -> dict[str, list[tuple]]:
    spec = importlib.util.spec_from_file_location("netbar_generate_engines", NETBAR_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen.rows()


_COLUMNS = {
    "netbar_login": "login_id, stat_date, platform_id, player_id, region, minutes",
    "netbar_payment": "pay_id, pay_date, platform_id, player_id, amount, channel",
    "netbar_register": "reg_id, reg_date, platform_id, player_id, source",
    "platforms": "platform_id, platform_name",
}


def _norm(rows: list[tuple]) -> list[tuple]:
    return [tuple(v.isoformat() if isinstance(v, dt.date) else v for v in r) for r in rows]


@pytest.fixture(scope="module")
def sqlite_engine() -> Iterator[Engine]:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    for table, data in _rows().items():
        cols = _COLUMNS[table]
        con.execute(f"CREATE TABLE {table} ({cols})")
        marks = ", ".join("?" for _ in data[0])
        con.executemany(f"INSERT INTO {table} VALUES ({marks})", _norm(data))
    engine = Engine(
        model_path=NETBAR_MODEL, connections={"lite": {"type": "sqlite", "client": con}}
    )
    yield engine
    engine.close()
    con.close()


@pytest.mark.parametrize("name", list(QUERIES))
def test_conf_04_sqlite_matches_duckdb(
    sqlite_engine: Engine, netbar: Engine, netbar_db: Path, name: str
) -> None:
    """CONF-04/05 on SQLite: the same rows as DuckDB."""
    want = netbar.execute(QUERIES[name], db_path=netbar_db)
    got = sqlite_engine.execute(QUERIES[name], connection="lite")
    assert got["columns"] == want["columns"]
    assert_rows_equal(result_rows(got), result_rows(want))


@pytest.fixture(scope="module")
def pg_engine() -> Iterator[Engine]:
    dsn = os.environ.get("DOSI_TEST_POSTGRES", "").strip()
    if not dsn:
        pytest.skip("set DOSI_TEST_POSTGRES to run the PostgreSQL conformed-facts tests")
    psycopg = pytest.importorskip("psycopg")
    name = f"dosi_conform_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    con = psycopg.connect(f"{dsn} dbname={name}", autocommit=True)
    try:
        con.execute("CREATE SCHEMA main")
        types = {"stat_date": "DATE", "pay_date": "DATE", "reg_date": "DATE", "region": "TEXT",
                 "channel": "TEXT", "source": "TEXT", "platform_name": "TEXT"}  # fmt: skip
        for table, data in _rows().items():
            cols = [c.strip() for c in _COLUMNS[table].split(",")]
            ddl = ", ".join(f"{c} {types.get(c, 'INTEGER')}" for c in cols)
            con.execute(f"CREATE TABLE main.{table} ({ddl})")
            marks = ", ".join("%s" for _ in cols)
            with con.cursor() as cur:
                cur.executemany(f"INSERT INTO main.{table} VALUES ({marks})", data)
        engine = Engine(
            model_path=NETBAR_MODEL, connections={"pg": {"type": "postgres", "client": con}}
        )
        yield engine
        engine.close()
    finally:
        con.close()
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.parametrize("name", list(QUERIES))
def test_conf_04_postgres_matches_duckdb(
    pg_engine: Engine, netbar: Engine, netbar_db: Path, name: str
) -> None:
    """CONF-04/05 on PostgreSQL (a FULL JOIN cannot take the NULL-safe condition there, so
    the branches meet on the UNION of their keys)."""
    want = netbar.execute(QUERIES[name], db_path=netbar_db)
    got = pg_engine.execute(QUERIES[name], connection="pg")
    assert got["columns"] == want["columns"]
    assert_rows_equal(result_rows(got), result_rows(want))
