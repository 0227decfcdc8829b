"""Access policies over the PostgreSQL wire protocol (issue 30 items 1, 3, 6): the access
file's user name and password (or API token) log in, semantic SQL answers only that user's
rows, hidden columns are absent from information_schema and denied with SQLSTATE 42501."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accesskit import ACCESS, MODEL

from dosi import Engine
from dosi.access.policy import AccessSource
from dosi.frontends.contract import EngineHolder
from dosi.frontends.pg import PgOptions, PgServer
from dosi.frontends.pg.auth import authenticator

psycopg = pytest.importorskip("psycopg")
PLAIN = Engine(str(MODEL))


@pytest.fixture(scope="module")
def pg(acl_db: Path) -> Iterator[PgServer]:
    source = AccessSource(ACCESS)
    holder = EngineHolder(MODEL, None, str(acl_db), "datus", pool_size=2)
    server = PgServer(holder, PgOptions(port=0, auth=authenticator(None, source), access=source))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
    yield server
    loop.call_soon_threadsafe(server.close)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def dsn(server: PgServer, user: str, password: str) -> str:
    return f"postgresql://{user}:{password}@127.0.0.1:{server.port}/acl"


def fetch(server: PgServer, user: str, password: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn(server, user, password), autocommit=True) as c:
        return sorted(c.execute(sql).fetchall(), key=repr)


def test_issue30_pg_user_sees_only_their_rows(
    pg: PgServer, only_rows: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    sql = "SELECT orders__channel, MEASURE(revenue) FROM acl_shop GROUP BY 1"
    want = PLAIN.sql(sql, db_path=only_rows["ana"])["rows"]
    with caplog.at_level(logging.INFO, logger="dosi.audit"):
        got = fetch(pg, "ana", "ana-token", sql)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "dosi.audit"]
    assert ("pg", "ana", "semantic", ["revenue"], "ok") in [
        (x["surface"], x["user"], x["action"], x["metrics"], x["outcome"]) for x in lines
    ]
    assert got == sorted((tuple(r.values()) for r in want), key=repr)
    boss = fetch(pg, "boss", "boss-pass", "SELECT MEASURE(order_count) FROM acl_shop")
    assert boss == [(400,)]


def test_issue30_pg_login_and_hidden_columns(pg: PgServer) -> None:
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn(pg, "ana", "wrong"), autocommit=True)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn(pg, "tom", "ana-token"), autocommit=True)  # another user's token
    cols = fetch(
        pg,
        "ana",
        "ana-token",
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'acl_shop'",
    )
    names = {c[0] for c in cols}
    assert "revenue" in names and "total_cost" not in names and "customers__email" not in names
    with (
        psycopg.connect(dsn(pg, "ana", "ana-token"), autocommit=True) as c,
        pytest.raises(psycopg.Error) as err,
    ):
        c.execute("SELECT MEASURE(total_cost) FROM acl_shop").fetchall()
    assert err.value.sqlstate in ("42501", "42703")
