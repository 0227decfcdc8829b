"""Issue 28 item 5 on PostgreSQL (session 6, item 1): the cross-engine conformance queries
(tests/kit/conformkit.py QUERIES) answer the same with rollups on and off, on DuckDB (the
embedded store) and on PostgreSQL (rollup tables in a warehouse schema, swapped in one
transaction; and the default embedded store, filled from PostgreSQL), value by value against DuckDB's fact-table answer; a refresh on PostgreSQL
racing queries never shows a half-written rollup (every answer is the old one or the new
one); a rollup whose data version cannot be read (no refresh key) is not served. Runs with
DOSI_TEST_POSTGRES (bash scripts/postgres.sh); its database is dropped afterwards."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformkit
import portkit
import psycopg
import pytest
from conformkit import QUERIES, compare

from dosi import Engine

KEY = "SELECT (SELECT count(*) FROM main.orders) + (SELECT count(*) FROM main.events)"
DECL: dict[str, Any] = {
    "version": 1,
    "refresh": {"key": KEY},
    "rollups": [
        {
            "name": "orders_daily",
            "dataset": "orders",
            "time": "order_date",
            "grain": "day",
            "dimensions": ["channel", "status"],
            "measures": [
                "revenue",
                "order_count",
                "customer_count",
                "avg_order_value",
                "net_revenue",
                "completed_revenue",
            ],
        },
        {
            "name": "orders_monthly",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel"],
            "measures": ["revenue", "order_count"],
        },
        {  # a dimension of a joined dataset (orders_to_customers, LEFT)
            "name": "orders_segment",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel", "customers.segment"],
            "measures": ["revenue", "order_count", "customer_count"],
        },
        {
            "name": "refunds_monthly",
            "dataset": "refunds",
            "time": "refund_date",
            "grain": "month",
            "measures": ["refund_total", "refund_count"],
        },
        {
            "name": "events_hourly",
            "dataset": "events",
            "time": "event_ts",
            "grain": "hour",
            "dimensions": ["event_type"],
            "measures": ["event_count", "active_users", "event_value"],
        },
    ],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return conformkit.build_shop(tmp_path_factory.mktemp("rollup_conformance"))


@pytest.fixture(scope="module")
def pg(files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    why = portkit.pg_unavailable()
    if why is not None:
        pytest.skip(why)
    prefix = os.environ.get("DOSI_TEST_PG_PREFIX", "dosi_rollups")
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = portkit.PG_DSN
    portkit.psql(admin, f"CREATE DATABASE {name};\n")
    dsn = portkit.with_dbname(admin, name)
    try:
        portkit.load_into_postgres(files[0], dsn, tmp_path_factory.mktemp("csv"))
        yield dsn
    finally:
        portkit.psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);\n")


@pytest.fixture(scope="module")
def engines(
    files: tuple[Path, Path], pg: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Engine]]:
    text = conformkit.conformance_model_text()
    folder = tmp_path_factory.mktemp("rollup_engines")
    duck = {"duck": {"type": "duckdb", "uri": str(files[0])}}
    pgcon = {"pg": {"type": "postgres", "uri": pg}}
    out = {
        "duck_fact": Engine(model_text=text, connections=duck, result_cache=False),
        "duck_served": Engine(
            model_text=text,
            connections=duck,
            rollups=DECL,
            rollup_store=folder / "store.duckdb",
            result_cache=False,
        ),
        "pg_fact": Engine(model_text=text, connections=pgcon, result_cache=False),
        "pg_served": Engine(
            model_text=text,
            connections=pgcon,
            rollups={**DECL, "storage": {"schema": "dosi_rollups"}},
            result_cache=False,
        ),
        # the default embedded store beside PostgreSQL: filled from PostgreSQL's answers; a
        # query its rollups answer whole runs on the store
        "pg_embedded": Engine(
            model_text=text,
            connections=pgcon,
            rollups=DECL,
            rollup_store=folder / "pg_store.duckdb",
            result_cache=False,
        ),
    }
    out["duck_served"].rollups_build(connection="duck")
    out["pg_served"].rollups_build(connection="pg")
    out["pg_embedded"].rollups_build(connection="pg")
    yield out
    for e in out.values():
        e.close()


_SERVED: dict[str, bool] = {}
_WHOLE: dict[str, bool] = {}


@pytest.mark.parametrize("name", list(QUERIES))
def test_issue28_5_conformance_with_rollups_on_and_off(
    engines: dict[str, Engine], name: str
) -> None:
    want = engines["duck_fact"].execute(QUERIES[name], connection="duck")
    columns = list(want["columns"])
    runs = (("duck_served", "duck"), ("pg_fact", "pg"), ("pg_served", "pg"), ("pg_embedded", "pg"))
    for label, con in runs:
        got = engines[label].execute(QUERIES[name], connection=con)
        assert got["columns"] == columns, label
        compare(got["rows"], want["rows"], columns, f"{label} {name}")
        if label == "pg_served":
            _SERVED[name] = '"dosi_rollups".' in got["sql"]
        if label == "pg_embedded":
            _WHOLE[name] = "dosi_rollups.main." in got["sql"]


def test_issue28_5_postgres_serves_most_conformance_queries(engines: dict[str, Engine]) -> None:
    """Guard: the comparison above is not vacuous; PostgreSQL reads its rollup tables."""
    for name, q in QUERIES.items():
        if name not in _SERVED:
            got = engines["pg_served"].execute(q, connection="pg")
            _SERVED[name] = '"dosi_rollups".' in got["sql"]
    served = [n for n, s in _SERVED.items() if s]
    assert len(served) >= 90, sorted(set(QUERIES) - set(served))
    whole = [n for n, s in _WHOLE.items() if s]
    assert len(whole) >= 90, sorted(set(QUERIES) - set(whole))
    status = engines["pg_served"].rollups_status(connection="pg")
    assert {r["name"]: r["state"] for r in status["rollups"]} == {
        r["name"]: "fresh" for r in DECL["rollups"]
    }
    text = engines["pg_served"].explain(QUERIES["grain-month"], connection="pg")
    assert "rollup orders_monthly" in text or "rollup orders_daily" in text
    text = engines["pg_embedded"].explain(QUERIES["grain-month"], connection="pg")
    assert "it runs on the embedded rollup store" in text
    text = engines["pg_embedded"].explain(QUERIES["merge-channel"], connection="pg")
    assert "m0 over orders: fact table" in text


def test_issue28_3_postgres_without_refresh_key_is_not_served(
    engines: dict[str, Engine], pg: str
) -> None:
    """A server's data version is invisible without a refresh key: never served."""
    decl = {**DECL, "storage": {"schema": "dosi_rollups"}}
    decl.pop("refresh")
    e = Engine(
        model_text=conformkit.conformance_model_text(),
        connections={"pg": {"type": "postgres", "uri": pg}},
        rollups=decl,
        result_cache=False,
    )
    try:
        got = e.execute(QUERIES["grain-year"], connection="pg")
        assert '"dosi_rollups".' not in got["sql"]
        text = e.explain(QUERIES["grain-year"], connection="pg")
        assert "cannot see whether connection pg's data changed" in text
    finally:
        e.close()


def test_issue28_3_postgres_refresh_race_old_or_new(files: tuple[Path, Path], pg: str) -> None:
    """Orders are added, then the rollups refreshed while another thread queries: every
    answer is the fact table's before or after the insert, never a mix; once refreshed the
    rollup serves the new answer; incremental refresh by partition (`since`) agrees too."""
    text = conformkit.conformance_model_text()
    con = {"pg": {"type": "postgres", "uri": pg}}
    decl = {**DECL, "storage": {"schema": "dosi_race"}}
    builder = Engine(model_text=text, connections=con, rollups=decl, result_cache=False)
    reader = Engine(model_text=text, connections=con, rollups=decl, result_cache=False)
    fact = Engine(model_text=text, connections=con, result_cache=False)
    q = {"metrics": ["revenue", "order_count", "customer_count"], "group_by": ["orders.channel"]}

    def rows(e: Engine) -> list[tuple[Any, ...]]:
        r = e.execute(q, connection="pg")
        return sorted(tuple(str(x) for x in row.values()) for row in r["rows"])

    admin = psycopg.connect(pg, autocommit=True)
    try:
        builder.rollups_build(connection="pg")
        old = rows(fact)
        assert rows(reader) == old
        _add_orders(admin)
        new = rows(fact)
        assert new != old
        errors: list[BaseException] = []
        stop = threading.Event()

        def refresh() -> None:
            try:
                for _ in range(3):
                    builder.rollups_build(connection="pg")
            except BaseException as exc:
                errors.append(exc)
            finally:
                stop.set()

        t = threading.Thread(target=refresh)
        t.start()
        seen = 0
        try:
            while not stop.is_set() or seen < 5:
                assert rows(reader) in (old, new)
                seen += 1
        finally:
            t.join()
        assert not errors, errors
        got = reader.execute(q, connection="pg")
        assert '"dosi_race".' in got["sql"] and rows(reader) == new
        # incremental: the last months recomputed, the older stored rows kept
        builder.rollups_build(["orders_monthly"], connection="pg", since="2025-01-01")
        mq = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
        a, b = reader.execute(mq, connection="pg"), fact.execute(mq, connection="pg")
        assert '"dosi_race".' in a["sql"]
        compare(a["rows"], b["rows"], list(b["columns"]), "incremental")
    finally:
        admin.close()
        for e in (builder, reader, fact):
            e.close()


def _add_orders(con: Any) -> None:
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
            "AND table_name = 'orders' ORDER BY ordinal_position"
        ).fetchall()
    ]
    picked = ", ".join("order_id + 1000000" if c == "order_id" else c for c in cols)
    con.execute(f"INSERT INTO main.orders SELECT {picked} FROM main.orders WHERE order_id % 3 = 0")
