"""Fixtures of the PostgreSQL frontend tests: a `PgServer` on a free loopback port (its own
event loop thread), the shop database, and the Python API to compare answers with."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from enginekit import SHOP_MODEL

from dosi import Engine
from dosi.frontends.contract import EngineHolder
from dosi.frontends.pg import PgOptions, PgServer

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # pgcases.py, the SQL every client test answers
    sys.path.insert(0, _HERE)


@dataclass
class Running:
    server: PgServer
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread

    @property
    def port(self) -> int:
        return self.server.port

    def dsn(self, user: str = "analyst", password: str | None = None, **extra: str) -> str:
        auth = f"{user}:{password}@" if password is not None else f"{user}@"
        query = "&".join(f"{k}={v}" for k, v in extra.items())
        return f"postgresql://{auth}127.0.0.1:{self.port}/shop" + (f"?{query}" if query else "")

    def conninfo(self, **extra: str) -> str:
        parts = {
            "host": "127.0.0.1",
            "port": str(self.port),
            "user": "analyst",
            "dbname": "shop",
            **extra,
        }
        return " ".join(f"{k}={v}" for k, v in parts.items())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def start(db: Path | None, model: Path = SHOP_MODEL, **options: object) -> Running:
    holder = EngineHolder(model, None, None if db is None else str(db), "datus", pool_size=4)
    server = PgServer(holder, PgOptions(port=0, **options))  # type: ignore[arg-type]
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="pg-test-loop", daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
    return Running(server, loop, thread)


@pytest.fixture(scope="session")
def pg(shop_db: Path) -> Iterator[Running]:
    r = start(shop_db)
    yield r
    r.stop()


@pytest.fixture
def pg_with(shop_db: Path) -> Iterator[Callable[..., Running]]:
    started: list[Running] = []

    def go(model: Path = SHOP_MODEL, **options: object) -> Running:
        r = start(shop_db if model == SHOP_MODEL else None, model, **options)
        started.append(r)
        return r

    yield go
    for r in started:
        r.stop()


@pytest.fixture(scope="session")
def api(shop_db: Path) -> Iterator[Engine]:
    e = Engine(model_path=SHOP_MODEL, connections={"shop": {"type": "duckdb", "uri": str(shop_db)}})
    yield e
    e.close()
