"""Recovery from warehouse faults on a real PostgreSQL server of the tests' own, stopped and
started under a running Engine (issue 29, item 2): a restart is survived (reconnect, the read
run once more, the same rows), a server that is down is `warehouse_unavailable` (never a raw
driver exception) and the next query after it is back succeeds; a client object the
application handed in cannot be reopened, so its loss is `connection_lost`."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from typing import Any

import pytest
from enginekit import dataset, field, metric, model_doc, to_yaml
from pgserverkit import PgServer, own_pg  # noqa: F401 - the fixture

from dosi import Engine
from dosi.errors import ExecuteError
from dosi.execute.budget import ResultBudget
from dosi.execute.connection_loss import is_lost
from dosi.execute.mysql_runner import parse_mysql_uri

MODEL = to_yaml(
    model_doc(
        [dataset("sales", [field("id"), field("amount", datatype="Integer")])],
        metrics=[metric("total", "SUM(sales.amount)")],
    )
)
Q = {"metrics": ["total"]}
EXPECTED = [{"total": sum(range(1, 11))}]  # amounts 1..10


@pytest.fixture
def engine(own_pg: PgServer) -> Iterator[Engine]:  # noqa: F811
    e = Engine(model_text=MODEL, connections={"w": {"type": "postgres", "uri": own_pg.dsn}})
    yield e
    e.close()


def _chain(err: BaseException | None) -> list[type]:
    out: list[type] = []
    while err is not None:
        out.append(type(err))
        err = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    return out


def test_issue29_item2_a_restart_is_survived_with_the_same_rows(
    engine: Engine,
    own_pg: PgServer,  # noqa: F811
) -> None:
    assert engine.execute(Q)["rows"] == EXPECTED
    own_pg.restart()  # every connection is cut
    assert engine.execute(Q)["rows"] == EXPECTED  # reconnected, the read run once more
    health: dict[str, Any] = engine.runner().health()  # type: ignore[attr-defined]
    assert health == {"type": "postgres", "state": "ok", "error": None, "reconnects": 1}


def test_issue29_item2_a_server_that_is_down_is_warehouse_unavailable(
    engine: Engine,
    own_pg: PgServer,  # noqa: F811
) -> None:
    assert engine.execute(Q)["rows"] == EXPECTED
    own_pg.stop()
    try:
        with pytest.raises(ExecuteError) as info:
            engine.execute(Q)
        err = info.value
        assert type(err) is ExecuteError and err.code == "warehouse_unavailable"
        assert err.detail == {"connection": "w", "type": "postgres", "attempts": 4}
        assert _chain(err) == [ExecuteError] * len(_chain(err))  # no driver error attached
        with pytest.raises(ExecuteError) as again:  # a fresh engine: the first open fails too
            Engine(model_text=MODEL, connections=engine.connections).execute(Q)
        assert again.value.code == "warehouse_unavailable"
    finally:
        own_pg.start()
    assert engine.execute(Q)["rows"] == EXPECTED


def test_issue29_item2_a_lost_client_object_is_connection_lost(own_pg: PgServer) -> None:  # noqa: F811
    import_psycopg = pytest.importorskip("psycopg")
    con = import_psycopg.connect(own_pg.dsn, autocommit=True)
    e = Engine(model_text=MODEL, connections={"w": {"type": "postgres", "client": con}})
    try:
        assert e.execute(Q)["rows"] == EXPECTED
        own_pg.restart()
        with pytest.raises(ExecuteError) as info:
            e.execute(Q)
        assert info.value.code == "connection_lost"
        assert info.value.detail is not None and info.value.detail["engine"] == "PostgreSQL"
    finally:
        e.close()
        con.close()


def test_issue29_item2_a_refused_statement_is_not_a_lost_connection() -> None:
    """Loss is read from the driver's connection state and its messages, never guessed from
    an ordinary refusal (a missing table, a cancel of ours)."""

    class QueryCanceled(Exception):
        pass

    class Closed:
        closed = True

    assert not is_lost(Exception('relation "nope" does not exist'))
    assert not is_lost(QueryCanceled("canceling statement due to user request"))
    assert is_lost(Exception("the connection is closed"))
    assert is_lost(Exception("whatever"), Closed())
    assert is_lost(Exception(2013, "Lost connection to MySQL server during query"))


@pytest.mark.skipif(
    not os.environ.get("DOSI_TEST_MARIADB") or importlib.util.find_spec("pymysql") is None,
    reason="set DOSI_TEST_MARIADB (bash scripts/mariadb.sh) and install dosi[mysql]",
)
def test_issue29_item2_mariadb_connection_killed_by_the_server_is_reopened() -> None:
    """The server ends dosi's session (`KILL`, as a restart or `wait_timeout` does): the next
    query reconnects and answers (MySQL error 2013 / 2006 read as a lost connection)."""
    pymysql = pytest.importorskip("pymysql")
    uri = os.environ["DOSI_TEST_MARIADB"].rstrip("/") + "/mysql"
    e = Engine(
        model_text=to_yaml(
            model_doc(
                [dataset("seq", [field("seq", datatype="Integer")], source="seq_1_to_10")],
                metrics=[metric("total", "SUM(seq.seq)")],
            )
        ),
        connections={"m": {"type": "mariadb", "uri": uri}},
    )
    try:
        assert e.execute(Q)["rows"] == EXPECTED
        inner: Any = e.runner().inner  # type: ignore[attr-defined]
        killer = pymysql.connect(**parse_mysql_uri(uri))
        try:
            with killer.cursor() as cur:
                cur.execute(f"KILL {int(inner.connection.thread_id())}")
        finally:
            killer.close()
        assert e.execute(Q)["rows"] == EXPECTED
        assert e.runner().health()["reconnects"] == 1  # type: ignore[attr-defined]
    finally:
        e.close()


def test_issue29_item2_postgres_session_terminated_by_the_server_is_reopened() -> None:
    """On the shared server: `pg_terminate_backend` ends dosi's session; the next query
    reconnects and answers."""
    dsn = os.environ.get("DOSI_TEST_POSTGRES")
    psycopg = pytest.importorskip("psycopg")
    if not dsn:
        pytest.skip("set DOSI_TEST_POSTGRES (bash scripts/postgres.sh)")
    model = to_yaml(
        model_doc(
            [
                dataset(
                    "g",
                    [field("v", datatype="Integer")],
                    source="SELECT generate_series(1, 10) AS v",
                )
            ],
            metrics=[metric("total", "SUM(g.v)")],
        )
    )
    e = Engine(model_text=model, connections={"w": {"type": "postgres", "uri": dsn}})
    try:
        assert e.execute(Q)["rows"] == EXPECTED
        inner: Any = e.runner().inner  # type: ignore[attr-defined]
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (inner.connection.info.backend_pid,))
        assert e.execute(Q)["rows"] == EXPECTED
        assert e.runner().health()["reconnects"] == 1  # type: ignore[attr-defined]
    finally:
        e.close()


def test_issue29_item1_a_warehouse_answer_is_fetched_only_to_the_row_limit(
    engine: Engine,
    own_pg: PgServer,  # noqa: F811
) -> None:
    """Over the row limit the runner fetches limit + 1 rows, never the whole answer."""
    select = {"from": "sales", "fields": ["sales.id"], "order_by": ["sales.id"], "limit": 10}
    with pytest.raises(ExecuteError) as info:
        engine.select(select, cancellation=ResultBudget(max_rows=3))
    assert info.value.code == "result_too_large"
    inner: Any = engine.runner().inner  # type: ignore[attr-defined]
    table = inner.run_capped(engine.compile_select(select, "postgres")["sql"], None, 4)
    assert table.column("id").to_pylist() == [1, 2, 3, 4]
    assert engine.select(select, cancellation=ResultBudget(max_rows=10))["row_count"] == 10
