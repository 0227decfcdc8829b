"""Semantic SQL through the other surfaces: `dosi sql`, REST `/v1/sql`, the MCP `sql` tool,
and `dosi pg` as a process (started by the test) answering psycopg."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from enginekit import SHOP_MODEL
from pgcases import assert_same
from servekit import free_port

from dosi import Engine

SQL = (
    "SELECT orders__channel, MEASURE(revenue), MEASURE(order_count) FROM shop GROUP BY 1 ORDER BY 1"
)
QUERY = {
    "metrics": ["revenue", "order_count"],
    "group_by": ["orders.channel"],
    "order_by": [{"key": "orders.channel", "desc": False}],
}


def _expected(api: Engine) -> list[tuple[object, ...]]:
    return [(r["channel"], r["revenue"], r["order_count"]) for r in api.execute(QUERY)["rows"]]


def _dosi(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dosi", *args],
        capture_output=True,
        text=True,
        timeout=300,
        input=stdin,
    )


def test_dosi_sql(shop_db: Path, api: Engine) -> None:
    out = _dosi("sql", "-m", str(SHOP_MODEL), "--db", str(shop_db), "-f", "json", SQL)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["columns"] == ["orders__channel", "measure", "measure"]
    assert body["query"] == QUERY
    bad = _dosi("sql", "-m", str(SHOP_MODEL), "--db", str(shop_db), "SELECT AVG(revenue) FROM shop")
    assert bad.returncode == 2 and "sql_aggregate_mismatch" in bad.stderr
    plan = _dosi("sql", "-m", str(SHOP_MODEL), "--explain", "-", stdin=SQL)
    assert json.loads(plan.stdout) == QUERY


def test_rest_sql(launch, api: Engine) -> None:  # type: ignore[no-untyped-def]
    server = launch()
    with server.client() as c:
        r = c.post(
            "/v1/sql",
            json={"sql": SQL.replace("ORDER BY 1", "ORDER BY 1 LIMIT $1"), "params": [10]},
        )
        assert r.status_code == 200, r.text
        rows = [tuple(x.values()) for x in r.json()["rows"]]
        bad = c.post("/v1/sql", json={"sql": "SELECT nope FROM shop"})
        assert bad.status_code == 400 and bad.json()["code"] == "sql_unknown_column"
        assert c.post("/v1/sql", json={"query": 1}).status_code == 400
    # the JSON rows of duplicate names keep the last; compare the last two columns
    assert_same(rows, [(e[0], e[2]) for e in _expected(api)], ordered=True)


def test_dosi_pg_process(shop_db: Path, tmp_path: Path, api: Engine) -> None:
    psycopg = pytest.importorskip("psycopg")
    port = free_port()
    log = tmp_path / "pg.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dosi",
            "pg",
            "-m",
            str(SHOP_MODEL),
            "--db",
            str(shop_db),
            "--port",
            str(port),
            "--token",
            "tok",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 120
        while "PostgreSQL protocol on" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        with psycopg.connect(f"postgresql://bi:tok@127.0.0.1:{port}/shop") as conn:
            rows = conn.execute(SQL).fetchall()
    finally:
        proc.terminate()
        proc.wait(30)
    assert_same(rows, _expected(api), ordered=True)


def test_serve_with_pg_port(launch, api: Engine) -> None:  # type: ignore[no-untyped-def]
    """`dosi serve --pg-port`: REST and the PostgreSQL protocol from one process, one token."""
    psycopg = pytest.importorskip("psycopg")
    port = free_port()
    server = launch(SHOP_MODEL, "--pg-port", str(port), "--token", "both")
    with server.client(headers={"Authorization": "Bearer both"}) as c:
        rest = c.post("/v1/sql", json={"sql": SQL}).json()["rows"]
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = psycopg.connect(f"postgresql://bi:both@127.0.0.1:{port}/shop")
            break
        except psycopg.OperationalError:
            assert time.monotonic() < deadline, server.log_text()
            time.sleep(0.3)
    with conn:
        rows = conn.execute(SQL).fetchall()
    assert_same(rows, _expected(api), ordered=True)
    assert [r["orders__channel"] for r in rest] == [r[0] for r in rows]
