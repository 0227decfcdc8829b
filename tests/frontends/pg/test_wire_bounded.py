"""Bounded answers on the PostgreSQL wire (issue 29, item 1): the whole-request timeout covers
sending the rows, rows are encoded in the server's encoder threads a slice at a time (never on
the event loop), the byte limit counts the encoded bytes on the wire, and a client that goes
away stops the encoding. Real psycopg clients and raw sockets against a live `PgServer`."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Running
from dosi.frontends.pg import stream

psycopg = pytest.importorskip("psycopg")

ROWS = 600_000
BIG_MODEL = f"""version: 0.2.0.dev0
semantic_model:
  - name: slow
    datasets:
      - name: big
        source: "SELECT i, i % 7 AS k, 1 AS v FROM range({ROWS}) t(i)"
        fields:
          - name: i
            expression: {{dialects: [{{dialect: ANSI_SQL, expression: i}}]}}
            datatype: Integer
            dimension: {{is_time: false}}
          - name: k
            expression: {{dialects: [{{dialect: ANSI_SQL, expression: k}}]}}
            datatype: Integer
            dimension: {{is_time: false}}
          - name: v
            expression: {{dialects: [{{dialect: ANSI_SQL, expression: v}}]}}
            datatype: Integer
    metrics:
      - name: n
        expression: {{dialects: [{{dialect: ANSI_SQL, expression: COUNT(big.v)}}]}}
        datatype: Integer
"""
ALL_ROWS = "SELECT big__i, big__k, MEASURE(n) FROM slow GROUP BY 1, 2"


@pytest.fixture
def big(pg_with: Callable[..., Running], tmp_path: Path) -> Callable[..., Running]:
    model = tmp_path / "big.yaml"
    model.write_text(BIG_MODEL)

    def go(**options: object) -> Running:
        options.setdefault("max_rows", None)
        options.setdefault("max_bytes", None)
        pg = pg_with(model, **options)
        pg.server.catalog(pg.server.holder.current_pool())  # built once, before timed requests
        return pg

    return go


def _recv_exact(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        part = s.recv(n - len(out))
        if not part:
            raise ConnectionError("server closed the connection")
        out += part
    return out


def _message(s: socket.socket) -> tuple[bytes, bytes]:
    head = _recv_exact(s, 5)
    return head[:1], _recv_exact(s, struct.unpack("!i", head[1:])[0] - 4)


def _raw_session(port: int) -> socket.socket:
    """A protocol-3 session on a raw socket, up to its first ReadyForQuery."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    body = struct.pack("!i", 196608) + b"user\0analyst\0database\0shop\0\0"
    s.sendall(struct.pack("!i", len(body) + 4) + body)
    while _message(s)[0] != b"Z":
        pass
    return s


def _query(s: socket.socket, sql: str) -> None:
    text = sql.encode() + b"\0"
    s.sendall(b"Q" + struct.pack("!i", len(text) + 4) + text)


def _sqlstate(payload: bytes) -> str:
    for part in payload.split(b"\0"):
        if part[:1] == b"C":
            return part[1:].decode()
    return ""


def test_issue29_item1_wire_answers_match_in_slices(big: Callable[..., Running]) -> None:
    """All rows arrive, in order, though each slice was encoded apart."""
    pg = big()
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        rows = conn.execute(ALL_ROWS + " ORDER BY 1").fetchall()
    assert len(rows) == ROWS
    assert rows[:3] == [(0, 0, 1), (1, 1, 1), (2, 2, 1)]
    assert rows[-1] == (ROWS - 1, (ROWS - 1) % 7, 1)


def test_issue29_item1_rows_are_encoded_off_the_event_loop(
    big: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every slice is encoded in an encoder thread, never on the server's event loop."""
    threads: list[str] = []
    encode = stream.data_rows_of

    def recording(*args: object) -> bytes:
        threads.append(threading.current_thread().name)
        return encode(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "data_rows_of", recording)
    pg = big()
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        assert len(conn.execute(ALL_ROWS).fetchall()) == ROWS
    assert len(threads) == -(-ROWS // stream.SLICE)  # one step per slice
    assert all(name.startswith("dosi-pg-encode") for name in threads), set(threads)
    assert pg.thread.name not in threads


def test_issue29_item1_timeout_covers_sending_to_a_client_that_does_not_read(
    big: Callable[..., Running],
) -> None:
    """The client asks for 600k rows and reads nothing for longer than the timeout: the
    server stops sending at the deadline and ends the answer with SQLSTATE 57014 (before,
    the timeout covered the database step only and every row was sent)."""
    pg = big(query_timeout=1.5)
    s = _raw_session(pg.port)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        _query(s, ALL_ROWS)
        time.sleep(3.0)
        data_rows, error = 0, None
        while True:
            kind, payload = _message(s)
            if kind == b"D":
                data_rows += 1
            elif kind == b"E":
                error = payload
            elif kind == b"Z":
                break
        assert error is not None and _sqlstate(error) == "57014", error
        assert b"[timeout]" in error or b"timeout" in error
        assert 0 < data_rows < ROWS
        _query(s, "SELECT 1")  # the session goes on
        kinds = []
        while (kind := _message(s)[0]) != b"Z":
            kinds.append(kind)
        assert kinds == [b"T", b"D", b"C"]
    finally:
        s.close()


def test_issue29_item1_byte_limit_counts_the_encoded_wire_bytes(
    big: Callable[..., Running],
) -> None:
    """600k rows of three BIGINTs are 14.4 MB in Arrow but 16.1 MB as DataRow messages: a
    15.5 MB limit lets the Arrow check pass and stops the sending, a `result_too_large`
    (54000) in the middle of the answer, which psycopg raises."""
    pg = big(max_bytes=15_500_000)
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded) as info:
            conn.execute(ALL_ROWS).fetchall()
        assert "[result_too_large]" in str(info.value)
        assert "LIMIT" in (info.value.diag.message_detail or "")
        assert len(conn.execute(ALL_ROWS + " LIMIT 1000").fetchall()) == 1000


def test_issue29_item1_a_client_that_goes_away_stops_the_encoding(
    big: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that closes its socket after the first bytes of a 600k-row answer: the
    server encodes no more slices (a handful at most were in flight)."""
    slices = [0]
    encode = stream.data_rows_of

    def counting(*args: object) -> bytes:
        slices[0] += 1
        time.sleep(0.02)  # a slow encoder, so the answer takes a while to send
        return encode(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "data_rows_of", counting)
    pg = big()
    s = _raw_session(pg.port)
    _query(s, ALL_ROWS)
    while _message(s)[0] != b"D":
        pass
    s.close()
    time.sleep(1.0)
    stopped = slices[0]
    time.sleep(1.0)
    assert slices[0] == stopped  # nothing more was encoded
    assert stopped < -(-ROWS // stream.SLICE) // 2
    deadline = time.monotonic() + 5
    while pg.server._sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pg.server._sessions
