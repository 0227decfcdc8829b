"""`dosi init` on real engines: the scaffolded model validates and answers row counts, sums,
joined groupings and a monthly time axis with the numbers computed here in plain Python from
the rows inserted (DuckDB, SQLite always; PostgreSQL and MariaDB with DOSI_TEST_POSTGRES /
DOSI_TEST_MARIADB)."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import duckdb
import pytest

from dosi.engine import Engine
from dosi.execute.connections import Profile
from dosi.execute.mysql_runner import parse_mysql_uri
from dosi.scaffold.run import scaffold_model

CUSTOMERS = [(1, "ann", "north", "2024-01-05"), (2, "bob", "south", "2024-02-10"), (3, "cy", "north", "2024-02-11")]  # fmt: skip
ORDERS = [
    (10, 1, "5.50", 2, "2024-03-01", "done"),
    (11, 1, "4.50", 1, "2024-03-05", "open"),
    (12, 2, "1.00", 1, "2024-04-01", "done"),
    (13, 3, "7.25", 3, "2024-04-20", "done"),
    (14, 3, "2.75", 1, "2024-05-02", "open"),
]
LINES = [(10, 1, "2.50"), (10, 2, "3.00"), (11, 1, "4.50"), (12, 1, "1.00"), (13, 1, "7.25"), (14, 1, "1.25"), (14, 2, "1.50")]  # fmt: skip


def ddl(ts: str = "TIMESTAMP") -> list[str]:
    return [
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name VARCHAR(40) UNIQUE, "
        "region VARCHAR(20), signup_date DATE)",
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES "
        "customers(customer_id), amount DECIMAL(10,2), quantity INTEGER, order_date DATE, "
        f"shipped_at {ts}, status VARCHAR(10))",
        "CREATE TABLE order_lines (order_id INTEGER REFERENCES orders(order_id), line_no INTEGER, "
        "price DECIMAL(10,2), PRIMARY KEY (order_id, line_no))",
    ]


def inserts() -> list[str]:
    out = [f"INSERT INTO customers VALUES ({i}, '{n}', '{r}', '{d}')" for i, n, r, d in CUSTOMERS]
    out += [
        f"INSERT INTO orders VALUES ({o}, {c}, {a}, {q}, '{d}', NULL, '{s}')"
        for o, c, a, q, d, s in ORDERS
    ]
    out += [f"INSERT INTO order_lines VALUES ({o}, {n}, {p})" for o, n, p in LINES]
    return out


def _num(v: Any) -> Decimal:
    return Decimal(str(v)).quantize(Decimal("0.01"))


def check_model(engine: Engine, run: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """The answers every scaffolded copy of this schema must give."""
    counts = run({"metrics": ["customers_count", "orders_count", "order_lines_count"]})
    assert counts == [
        {"customers_count": len(CUSTOMERS), "orders_count": len(ORDERS), "order_lines_count": len(LINES)}
    ]  # fmt: skip
    region = {c[0]: c[2] for c in CUSTOMERS}
    want: dict[str, Decimal] = defaultdict(Decimal)
    for _o, c, a, *_ in ORDERS:
        want[region[c]] += Decimal(a)
    got = run({"metrics": ["orders_amount_sum"], "group_by": ["customers.region"]})
    assert {r["region"]: _num(r["orders_amount_sum"]) for r in got} == want
    status = {o[0]: o[5] for o in ORDERS}
    lines: dict[str, Decimal] = defaultdict(Decimal)
    for o, _n, p in LINES:
        lines[status[o]] += Decimal(p)
    got = run({"metrics": ["order_lines_price_sum"], "group_by": ["orders.status"]})
    assert {r["status"]: _num(r["order_lines_price_sum"]) for r in got} == lines
    monthly: dict[str, int] = defaultdict(int)
    for _o, _c, _a, q, d, _s in ORDERS:
        monthly[d[:7]] += q
    got = run({"metrics": ["orders_quantity_sum"], "group_by": ["metric_time:month"]})
    assert {str(r["metric_time__month"])[:7]: int(r["orders_quantity_sum"]) for r in got} == monthly


def assert_shape(text: str) -> None:
    engine = Engine(model_text=text)
    names = {d["name"] for d in engine.datasets()}
    assert names == {"customers", "orders", "order_lines"}
    metrics = {m["name"] for m in engine.metrics()}
    assert {"customers_count", "orders_count", "order_lines_count"} <= metrics
    assert {"orders_amount_sum", "orders_quantity_sum", "order_lines_price_sum"} <= metrics
    # keys are not summed
    assert not {m for m in metrics if "_id_" in m or m.endswith("line_no_sum")}


# -- DuckDB and SQLite: always --------------------------------------------------------------------
def test_init_duckdb_validates_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    for sql in ddl() + inserts():
        con.execute(sql)
    con.close()
    converted = scaffold_model(Profile("db", "duckdb", str(path)))
    assert converted.check() == []
    text = converted.yaml()
    assert_shape(text)
    engine = Engine(model_text=text)
    check_model(engine, lambda q: engine.execute(q, db_path=path)["rows"])
    doc = converted.plain()["semantic_model"][0]
    ds = {d["name"]: d for d in doc["datasets"]}
    assert ds["order_lines"]["primary_key"] == ["order_id", "line_no"]
    assert ds["customers"]["unique_keys"] == [["name"]]
    rels = {(r["from"], r["to"]) for r in doc["relationships"]}
    assert rels == {("orders", "customers"), ("order_lines", "orders")}


def test_init_sqlite_validates_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "shop.sqlite"
    con = sqlite3.connect(path)
    for sql in ddl() + inserts():
        con.execute(sql)
    con.commit()
    con.close()
    converted = scaffold_model(Profile("db", "sqlite", str(path)))
    assert converted.check() == []
    text = converted.yaml()
    assert_shape(text)
    engine = Engine(model_text=text, connections={"lite": {"type": "sqlite", "uri": str(path)}})
    check_model(engine, lambda q: engine.execute(q, connection="lite")["rows"])
    doc = converted.plain()["semantic_model"][0]
    assert {d["source"] for d in doc["datasets"]} == {"customers", "orders", "order_lines"}


# -- PostgreSQL and MariaDB: real servers ---------------------------------------------------------
PG = os.environ.get("DOSI_TEST_POSTGRES", "").strip()
MARIADB = os.environ.get("DOSI_TEST_MARIADB", "").strip()


@pytest.fixture
def pg_schema() -> Iterator[str]:
    if not PG or importlib.util.find_spec("psycopg") is None:
        pytest.skip("set DOSI_TEST_POSTGRES (bash scripts/postgres.sh) and install dosi[postgres]")
    psycopg = importlib.import_module("psycopg")
    schema = f"dosi_init_{uuid.uuid4().hex[:8]}"
    con = psycopg.connect(PG, autocommit=True)
    con.execute(f"CREATE SCHEMA {schema}")
    con.execute(f"SET search_path TO {schema}")
    for sql in ddl() + inserts():
        con.execute(sql)
    try:
        yield schema
    finally:
        con.execute(f"DROP SCHEMA {schema} CASCADE")
        con.close()


def test_init_postgres_validates_and_answers(pg_schema: str) -> None:
    converted = scaffold_model(Profile("pg", "postgres", PG), schema=pg_schema)
    assert converted.check() == []
    text = converted.yaml()
    assert_shape(text)
    doc = converted.plain()["semantic_model"][0]
    assert {d["source"] for d in doc["datasets"]} == {
        f"{pg_schema}.customers",
        f"{pg_schema}.orders",
        f"{pg_schema}.order_lines",
    }
    engine = Engine(model_text=text, connections={"pg": {"type": "postgres", "uri": PG}})
    check_model(engine, lambda q: engine.execute(q, connection="pg")["rows"])
    engine.close()


@pytest.fixture
def mariadb_uri() -> Iterator[str]:
    if not MARIADB or importlib.util.find_spec("pymysql") is None:
        pytest.skip("set DOSI_TEST_MARIADB (bash scripts/mariadb.sh) and install dosi[mysql]")
    pymysql = importlib.import_module("pymysql")
    db = f"dosi_init_{uuid.uuid4().hex[:8]}"
    params = parse_mysql_uri(MARIADB)
    params.pop("database", None)
    con = pymysql.connect(autocommit=True, **params)
    cur = con.cursor()
    cur.execute(f"CREATE DATABASE {db}")
    cur.execute(f"USE {db}")
    for sql in ddl("DATETIME") + inserts():
        cur.execute(sql)
    try:
        yield urlparse(MARIADB)._replace(path="/" + db).geturl()
    finally:
        cur.execute(f"DROP DATABASE {db}")
        con.close()


def test_init_mariadb_validates_and_answers(mariadb_uri: str) -> None:
    converted = scaffold_model(Profile("my", "mariadb", mariadb_uri))
    assert converted.check() == []
    text = converted.yaml()
    assert_shape(text)
    engine = Engine(model_text=text, connections={"my": {"type": "mariadb", "uri": mariadb_uri}})
    check_model(engine, lambda q: engine.execute(q, connection="my")["rows"])
    engine.close()


# -- chDB (embedded ClickHouse): no declared keys, so --match-ids infers them ---------------------
def test_init_chdb_with_inferred_keys(tmp_path: Path) -> None:
    if importlib.util.find_spec("chdb") is None:
        pytest.skip("install dosi[chdb]")
    session = importlib.import_module("chdb.session").Session(str(tmp_path / "ch"))
    session.query(
        "CREATE TABLE customers (customer_id Int32, region String) ENGINE = MergeTree ORDER BY customer_id"
    )
    session.query(
        "CREATE TABLE orders (order_id Int32, customer_id Int32, amount Nullable(Decimal(10, 2)), "
        "quantity Int32, order_date Date) ENGINE = MergeTree ORDER BY order_id"
    )
    session.query(
        "INSERT INTO customers VALUES " + ", ".join(f"({i}, '{r}')" for i, _n, r, _d in CUSTOMERS)
    )
    session.query(
        "INSERT INTO orders VALUES "
        + ", ".join(f"({o}, {c}, {a}, {q}, '{d}')" for o, c, a, q, d, _s in ORDERS)
    )
    profile = Profile("ch", "chdb", client=session)
    converted = scaffold_model(profile, match_ids=True)
    assert converted.check() == []
    doc = converted.plain()["semantic_model"][0]
    assert {d["name"]: d.get("primary_key") for d in doc["datasets"]} == {
        "customers": ["customer_id"], "orders": ["order_id"],
    }  # fmt: skip
    assert [(r["from"], r["to"]) for r in doc["relationships"]] == [("orders", "customers")]
    engine = Engine(
        model_text=converted.yaml(), connections={"ch": {"type": "chdb", "client": session}}
    )
    got = engine.execute(
        {"metrics": ["orders_count", "orders_amount_sum"], "group_by": ["customers.region"]},
        connection="ch",
    )["rows"]
    region = {c[0]: c[2] for c in CUSTOMERS}
    want: dict[str, list[Any]] = defaultdict(lambda: [0, Decimal(0)])
    for _o, c, a, *_ in ORDERS:
        want[region[c]][0] += 1
        want[region[c]][1] += Decimal(a)
    assert {r["region"]: [r["orders_count"], _num(r["orders_amount_sum"])] for r in got} == {
        k: [n, _num(s)] for k, (n, s) in want.items()
    }
