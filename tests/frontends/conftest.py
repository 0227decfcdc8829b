"""A real `dosi serve` process on loopback (subprocess, free port) over the shop example."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from enginekit import SHOP_MODEL, build_shop

from dosi import Engine


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, **kw)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    model: Path, db: Path, tmp: Path, *extra: str, env: dict[str, str] | None = None
) -> Server:
    port = free_port()
    log = tmp / f"serve-{port}.log"
    cmd = [sys.executable, "-m", "dosi", "serve", "-m", str(model), "--db", str(db)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), *extra]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dosi serve exited: {log.read_text()}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return Server(url, proc, log)
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"dosi serve did not start: {log.read_text()}")


def stop(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()


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

    def go(model: Path = SHOP_MODEL, *extra: str, env: dict[str, str] | None = None) -> Server:
        s = start_server(model, shop_db, tmp_path, *extra, env=env)
        started.append(s)
        return s

    yield go
    for s in started:
        stop(s)
