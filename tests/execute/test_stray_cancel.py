"""A cancel never lands on the next statement of a pooled connection (issue 29, item 3).

Under soak load, 1-2 of about 10 slow PostgreSQL queries per run answered 500 `sql_rejected`
"canceling statement due to user request": a cancel request sent as one request's statement
ended (its deadline passed, or the watcher of a cancelled token sent one more) reached the
server after the connection had gone back to the pool and started another request's statement.
Now a cancel is sent only while a statement runs, and a statement's end waits for a cancel
being delivered. On the shared PostgreSQL server (`DOSI_TEST_POSTGRES`)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from dosi.errors import ExecuteError
from dosi.execute.postgres_runner import PostgresRunner

DSN = os.environ.get("DOSI_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(not DSN, reason="set DOSI_TEST_POSTGRES (bash scripts/postgres.sh)")


class SlowCancel(PostgresRunner):
    """The real runner whose cancel request reaches the server late, as under heavy load,
    and which counts the cancel requests it sends."""

    delay = 0.0
    sent = 0

    def send_cancel(self) -> None:
        time.sleep(self.delay)
        self.sent += 1
        super().send_cancel()


@pytest.fixture
def runner() -> Iterator[SlowCancel]:
    pytest.importorskip("psycopg")
    base = PostgresRunner.connect(DSN, {})
    r = SlowCancel(base.connection, owned=True)
    yield r
    r.close()


def test_issue29_item3_a_late_cancel_does_not_hit_the_next_statement(runner: SlowCancel) -> None:
    """The cancel of a running statement reaches the server 1.2 s later, after that
    statement is done: the statement's end waits for it, and the next statement (another
    request's, on the same connection) runs to its end. Without the wait the next statement
    was cancelled: `sql_rejected`. (On a loaded machine the first statement may still run
    when its cancel arrives; then it, and only it, is cancelled.)"""
    runner.delay = 1.2
    timer = threading.Timer(0.05, runner.cancel)
    timer.start()
    try:
        assert runner.run("SELECT 1 AS a FROM pg_sleep(0.2)").to_pylist() == [{"a": 1}]
    except ExecuteError as err:
        assert "canceling statement" in err.message
    timer.join()
    assert runner.sent == 1
    second = runner.run("SELECT 2 AS b FROM pg_sleep(1.5)")
    assert second.to_pylist() == [{"b": 2}]


def test_issue29_item3_no_cancel_is_sent_between_statements(runner: SlowCancel) -> None:
    assert runner.run("SELECT 1 AS a").to_pylist() == [{"a": 1}]
    runner.cancel()  # a watcher or a timer that fired just after the statement ended
    assert runner.sent == 0
    assert runner.run("SELECT 2 AS b FROM pg_sleep(0.2)").to_pylist() == [{"b": 2}]


def test_issue29_item3_our_timeout_is_timeout_and_a_server_timeout_too(
    runner: SlowCancel,
) -> None:
    with pytest.raises(ExecuteError) as ours:
        runner.run("SELECT pg_sleep(5)", timeout_secs=0.2)
    assert ours.value.code == "timeout"
    with runner.connection.cursor() as cur:
        cur.execute("SET statement_timeout = 100")
    try:
        with pytest.raises(ExecuteError) as servers:
            runner.run("SELECT pg_sleep(5)")
        assert servers.value.code == "timeout"  # was `sql_rejected`
    finally:
        with runner.connection.cursor() as cur:
            cur.execute("SET statement_timeout = 0")


def test_issue29_item3_a_cancel_from_outside_dosi_is_run_once_more(runner: SlowCancel) -> None:
    """An operator's `pg_cancel_backend` on dosi's session: the read runs once more and
    answers (before: 500 `sql_rejected`)."""
    import psycopg

    pid = runner.connection.info.backend_pid
    assert DSN is not None
    with psycopg.connect(DSN, autocommit=True) as admin:
        timer = threading.Timer(0.2, lambda: admin.execute("SELECT pg_cancel_backend(%s)", (pid,)))
        timer.start()
        try:
            table = runner.run("SELECT 3 AS c FROM pg_sleep(0.6)")
        finally:
            timer.join()
    assert table.to_pylist() == [{"c": 3}]
    assert runner.sent == 0
