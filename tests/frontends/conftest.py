"""Fixtures of the frontend tests: the shop database, the Python API, `dosi serve` processes."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from enginekit import SHOP_MODEL, build_shop
from servekit import Server, start_server, stop

from dosi import Engine


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shop(tmp_path_factory.mktemp("serve_shop") / "shop.duckdb")


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    e = Engine(model_path=SHOP_MODEL)
    yield e
    e.close()


@pytest.fixture(scope="session")
def server(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(SHOP_MODEL, shop_db, tmp_path_factory.mktemp("serve"), "--max-body", "200000")
    yield s
    stop(s)


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    return Path(shutil.copy(SHOP_MODEL, tmp_path / "model.yaml"))


@pytest.fixture
def launch(tmp_path: Path, shop_db: Path) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def go(
        model: Path = SHOP_MODEL,
        *extra: str,
        env: dict[str, str] | None = None,
        db: Path | bool | None = True,
    ) -> Server:
        s = start_server(model, shop_db if db is True else db or None, tmp_path, *extra, env=env)
        started.append(s)
        return s

    yield go
    for s in started:
        stop(s)
