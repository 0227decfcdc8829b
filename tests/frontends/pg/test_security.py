"""Authentication (the REST token as the password), TLS, the connection limit, the query
timeout and row limit, and the rule that client SQL never reaches the warehouse."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pgcases import CASES, assert_same, expected_rows

from conftest import Running
from dosi import Engine
from dosi.frontends.pg import TokenAuth

psycopg = pytest.importorskip("psycopg")


def test_token_is_the_password(pg_with: Callable[..., Running]) -> None:
    pg = pg_with(auth=TokenAuth("s3cret-token"))
    with psycopg.connect(pg.dsn(password="s3cret-token")) as conn:
        assert conn.execute("SELECT MEASURE(order_count) FROM shop").fetchone()[0] > 0
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(pg.dsn(password="nope"))
    assert "password authentication failed" in str(info.value)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg.dsn())


def _certificate(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "server.crt", tmp / "server.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return cert, key


def test_tls_when_a_certificate_is_configured(
    pg_with: Callable[..., Running], tmp_path: Path
) -> None:
    if subprocess.run(["which", "openssl"], capture_output=True).returncode != 0:
        pytest.skip("openssl not installed")
    cert, key = _certificate(tmp_path)
    pg = pg_with(certfile=str(cert), keyfile=str(key), auth=TokenAuth("t"))
    with psycopg.connect(pg.dsn(password="t", sslmode="require")) as conn:
        assert conn.pgconn.ssl_in_use
        assert conn.execute("SELECT MEASURE(revenue) FROM shop").fetchone()[0] > 0
    plain = psycopg.connect(pg.dsn(password="t", sslmode="disable"))  # TLS is offered, not forced
    plain.close()


def test_no_tls_without_a_certificate(pg: Running) -> None:
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg.dsn(sslmode="require"))


def test_connection_limit(pg_with: Callable[..., Running]) -> None:
    pg = pg_with(max_connections=2)
    a, b = psycopg.connect(pg.dsn()), psycopg.connect(pg.dsn())
    try:
        with pytest.raises(psycopg.OperationalError) as info:
            psycopg.connect(pg.dsn())
        assert "too many clients" in str(info.value)
    finally:
        a.close()
        b.close()
    psycopg.connect(pg.dsn()).close()  # a slot is free again


def test_row_limit_is_an_error_not_a_truncation(pg_with: Callable[..., Running]) -> None:
    pg = pg_with(max_rows=3)
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as info:
            conn.execute("SELECT orders__channel, revenue FROM shop")
        assert "[result_too_large]" in str(info.value)
        detail = json.loads(info.value.diag.message_detail or "{}")  # the error contract
        assert detail["detail"] == {"limit": "rows", "max_rows": 3}
        assert detail["suggested_retry"]["sql"].endswith("LIMIT 3")  # issue 29, item 1
        retried = conn.execute(detail["suggested_retry"]["sql"]).fetchall()
        assert len(retried) == 3
        assert (
            len(conn.execute("SELECT orders__channel, revenue FROM shop LIMIT 3").fetchall()) == 3
        )


SLOW_MODEL = """version: 0.2.0.dev0
semantic_model:
  - name: slow
    datasets:
      - name: big
        source: "SELECT i, i % 7 AS k FROM range(200000000) t(i)"
        primary_key: [i]
        fields:
          - name: i
            expression: {dialects: [{dialect: ANSI_SQL, expression: i}]}
            datatype: Integer
          - name: k
            expression: {dialects: [{dialect: ANSI_SQL, expression: k}]}
            datatype: Integer
    metrics:
      - name: n
        expression: {dialects: [{dialect: ANSI_SQL, expression: COUNT(DISTINCT big.i)}]}
        datatype: Integer
"""


def test_query_timeout(pg_with: Callable[..., Running], tmp_path: Path) -> None:
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    pg = pg_with(model, query_timeout=0.2)
    # the emulated catalog is built once per model version (about a second here); the 0.2 s
    # cover a whole request, so it is built before the timed ones
    pg.server.catalog(pg.server.holder.current_pool())
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.QueryCanceled) as info:
            conn.execute("SELECT big__k, MEASURE(n) FROM slow GROUP BY 1")
        assert "[timeout]" in str(info.value)
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM main.orders",
        "SELECT count(*) FROM orders",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_parquet('examples/shop/data/orders.parquet')",
        "ATTACH 'x.duckdb'",
        "COPY (SELECT 1) TO '/tmp/x'",
        "INSERT INTO shop VALUES (1)",
    ],
)
def test_client_sql_never_reaches_the_warehouse(pg: Running, sql: str) -> None:
    """Only the semantic table and the emulated catalog answer; a warehouse table, a file or
    a write is an error, never run anywhere."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.Error):
            conn.execute(sql)
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_32_concurrent_clients(pg: Running, api: Engine) -> None:
    cases = [c for c in CASES if not c.params]
    expected = {c.sql: expected_rows(api, c) for c in cases}
    failures: list[BaseException] = []

    def client(i: int) -> None:
        try:
            with psycopg.connect(pg.dsn(application_name=f"client{i}")) as conn:
                for c in (cases[i % len(cases)], cases[(i + 3) % len(cases)]):
                    rows = conn.execute(c.sql, prepare=i % 2 == 0).fetchall()
                    assert_same(rows, expected[c.sql], c.ordered)
        except BaseException as exc:  # collected and re-raised in the test thread
            failures.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not failures, failures[0]
    assert not any(t.is_alive() for t in threads)


def test_cancel_request_stops_the_query(pg_with: Callable[..., Running], tmp_path: Path) -> None:
    """A CancelRequest (PostgreSQL's out-of-band packet: process id and secret key) stops
    the session's running query. Sent on a raw socket: libpq's PQcancel holds the GIL while it
    waits, which would stall this in-process server."""
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    pg = pg_with(model, query_timeout=None)
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("SELECT 1")
        pid = conn.info.backend_pid
        secret = pg.server._sessions[pid][0]

        def cancel() -> None:
            with socket.create_connection(("127.0.0.1", pg.port), timeout=30) as s:
                s.sendall(struct.pack("!iiii", 16, 80877102, pid, secret))
                s.recv(1)  # the server closes the connection

        timer = threading.Timer(0.5, cancel)
        timer.start()
        try:
            with pytest.raises(psycopg.errors.QueryCanceled) as info:
                conn.execute("SELECT big__k, MEASURE(n) FROM slow GROUP BY 1")
        finally:
            timer.join(30)
        assert "[cancelled]" in str(info.value)
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_issue29_item1_byte_limit_on_the_wire(pg_with: Callable[..., Running]) -> None:
    pg = pg_with(max_bytes=200)
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as info:
            conn.execute("SELECT metric_time__day, revenue FROM shop")
        detail = json.loads(info.value.diag.message_detail or "{}")
        assert detail["code"] == "result_too_large" and detail["detail"]["max_bytes"] == 200
        assert "LIMIT" in detail["suggested_retry"]["sql"]
        assert conn.execute(detail["suggested_retry"]["sql"]).fetchall()
