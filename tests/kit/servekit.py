"""Starting a real `dosi serve` process on loopback (subprocess, free port) for the tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, **{"timeout": 60, **kw})

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    model: Path, db: Path | None, tmp: Path, *extra: str, env: dict[str, str] | None = None
) -> Server:
    """`dosi serve` on a free port; `db=None` leaves the database to `--connections`."""
    port = free_port()
    log = tmp / f"serve-{port}.log"
    cmd = [sys.executable, "-m", "dosi", "serve", "-m", str(model)]
    if db is not None:
        cmd += ["--db", str(db)]
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
