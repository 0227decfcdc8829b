"""A throwaway PostgreSQL server of a test's own (initdb in a temporary folder, a free port),
to stop and start under a running dosi (issue 29, item 2) without touching the shared
server the other tests use. Needs the PostgreSQL server binaries (scripts/postgres.sh installs
them); as root the server runs as the `postgres` user, as scripts/postgres.sh does."""

from __future__ import annotations

import contextlib
import glob
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from servekit import free_port


def server_binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def _run(cmd: list[str]) -> None:
    text = shlex.join(cmd)
    if os.getuid() == 0:
        subprocess.run(
            ["su", "postgres", "-s", "/bin/sh", "-c", text], check=True, capture_output=True
        )
    else:
        subprocess.run(cmd, check=True, capture_output=True)


@dataclass
class PgServer:
    bindir: Path
    data: Path
    port: int

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres connect_timeout=2"

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                opts,
                "-l",
                str(self.data / "log"),
                "-w",
                "start",
            ]
        )

    def stop(self) -> None:
        """An immediate shutdown: every connection is cut, as a crash or a restart does."""
        _run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])

    def restart(self) -> None:
        self.stop()
        self.start()


def start_pg() -> PgServer:
    bindir = server_binaries()
    assert bindir is not None
    data = Path(tempfile.mkdtemp(prefix="dosi-i29-pg-"))
    if os.getuid() == 0:
        shutil.chown(data, "postgres")
    _run([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"])
    server = PgServer(bindir, data, free_port())
    server.start()
    return server


def remove_pg(server: PgServer) -> None:
    with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
        server.stop()
    shutil.rmtree(server.data, ignore_errors=True)


#: the table every recovery test reads: amounts 1..10 (their sum is 55)
SALES = (
    "CREATE TABLE sales (id integer, amount integer); "
    "INSERT INTO sales SELECT i, i FROM generate_series(1, 10) AS i"
)


@pytest.fixture(scope="module")
def own_pg() -> Iterator[PgServer]:
    """A PostgreSQL server of this module's own, holding `sales`."""
    if server_binaries() is None:
        pytest.skip("no PostgreSQL server binaries (bash scripts/postgres.sh installs them)")
    psycopg = pytest.importorskip("psycopg")
    server = start_pg()
    try:
        with psycopg.connect(server.dsn, autocommit=True) as con:
            con.execute(SALES)
        yield server
    finally:
        remove_pg(server)
