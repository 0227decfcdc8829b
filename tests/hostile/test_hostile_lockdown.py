"""The locked-down DuckDB connection, the timeout and memory options, the trust_sql gate for
model SQL, and one Engine shared by 8 threads."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import SHOP_MODEL

from dosi import Engine, validate
from dosi.errors import ArgumentError, ExecuteError, ModelError
from dosi.execute.duckdb_runner import open_duckdb, run_sql
from dosi.execute.options import ExecOptions

SHOP_TEXT = SHOP_MODEL.read_text(encoding="utf-8")


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> Any:
    return con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]


def test_connections_are_locked_down(shop_db: Path) -> None:
    con = open_duckdb(str(shop_db))
    try:
        assert _setting(con, "enable_external_access") is False
        assert _setting(con, "autoinstall_known_extensions") is False
        assert _setting(con, "autoload_known_extensions") is False
        assert _setting(con, "lock_configuration") is True
        # what dosi itself needs still works: the model's tables and the window macros
        assert con.execute("SELECT count(*) FROM main.orders").fetchall()[0][0] > 0
        tumble = "SELECT tumble(TIMESTAMP '2024-01-01 10:30', INTERVAL 1 HOUR)"
        assert str(con.execute(tumble).fetchall()[0][0]) == "2024-01-01 10:00:00"
        for statement in (
            "SET enable_external_access = true",
            "SET lock_configuration = false",
            "SELECT * FROM read_csv('/etc/passwd')",
            "COPY (SELECT 1) TO '/tmp/dosi-hostile.csv'",
            "ATTACH '/tmp/dosi-hostile.db'",
            "INSTALL httpfs",
        ):
            with pytest.raises(duckdb.Error):
                con.execute(statement)
        # extensions that are not loaded are not auto-loaded either
        with pytest.raises(duckdb.Error):
            con.execute("SELECT * FROM sqlite_scan('x.db', 't')")
    finally:
        con.close()


def test_lockdown_coexists_with_other_connections_to_the_file(shop_db: Path) -> None:
    other = duckdb.connect(str(shop_db), read_only=True)
    try:
        con = open_duckdb(str(shop_db))
        assert (
            con.execute("SELECT count(*) FROM main.orders").fetchall()
            == other.execute("SELECT count(*) FROM main.orders").fetchall()
        )
        con.close()
    finally:
        other.close()


def test_memory_limit_is_set_before_the_lock(shop_db: Path) -> None:
    con = open_duckdb(str(shop_db), options=ExecOptions(memory_limit="512MB"))
    try:
        assert _setting(con, "memory_limit") in ("488.2 MiB", "512.0 MB", "488.2MiB")
        with pytest.raises(duckdb.Error):
            con.execute("SET memory_limit = '8GB'")
    finally:
        con.close()


def test_the_memory_limit_gives_a_structured_error() -> None:
    con = open_duckdb(None, options=ExecOptions(memory_limit="20MB"))
    try:
        with pytest.raises(ExecuteError) as info:
            run_sql(con, "SELECT list(range) FROM range(50000000)")
        assert info.value.code == "memory_limit"
    finally:
        con.close()


def test_allow_extensions_opts_out(shop_db: Path) -> None:
    con = open_duckdb(str(shop_db), options=ExecOptions(allow_extensions=True))
    try:
        assert _setting(con, "enable_external_access") is True
        assert _setting(con, "autoload_known_extensions") is True
        assert _setting(con, "lock_configuration") is True
    finally:
        con.close()


def test_the_timeout_interrupts_with_query_timeout(shop_db: Path) -> None:
    con = open_duckdb(str(shop_db))
    try:
        slow = "SELECT count(DISTINCT a.range + b.range) FROM range(100000) a, range(100000) b"
        with pytest.raises(ExecuteError) as info:
            run_sql(con, slow, timeout_secs=0.2)
        assert info.value.code == "timeout"
        assert run_sql(con, "SELECT 42 AS x").column("x").to_pylist() == [42]
    finally:
        con.close()


def test_engine_options_default_validate_and_reach_the_runner(shop_db: Path) -> None:
    engine = Engine(model_path=SHOP_MODEL)
    assert engine.options.query_timeout == 120.0
    assert engine.options.memory_limit is None
    engine.close()
    engine = Engine(model_path=SHOP_MODEL, query_timeout=None, memory_limit="1GB")
    assert engine.options.query_timeout is None
    rows = engine.execute({"metrics": ["order_count"]}, db_path=shop_db)["rows"]
    con = duckdb.connect(str(shop_db), read_only=True)
    want = con.execute("SELECT count(order_id) FROM main.orders").fetchall()[0][0]
    con.close()
    assert rows == [{"order_count": want}]
    engine.close()
    for bad in ({"query_timeout": -1}, {"query_timeout": "soon"}, {"memory_limit": "lots"}):
        with pytest.raises(ExecuteError) as info:
            Engine(model_path=SHOP_MODEL, **bad)
        assert info.value.code == "config"
    with pytest.raises(ArgumentError):
        Engine(model_path=SHOP_MODEL, mode="turbo")
    with pytest.raises(ValueError):  # ArgumentError is also a ValueError
        Engine(model_text=SHOP_TEXT, model_path=SHOP_MODEL)


# -- model SQL: trusted but bounded ----------------------------------------------------------------
UNTRUSTED_SOURCES = [
    "(DELETE FROM orders)",
    "(WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d)",
    "(INSERT INTO orders SELECT * FROM orders)",
    "(SELECT * FROM read_text('/etc/passwd'))",
    "(SELECT * FROM read_csv('/etc/passwd'))",
    "(SELECT * FROM read_parquet('x.parquet'))",
    "(SELECT current_setting('home_directory') AS order_id)",
    "(SELECT * FROM '/etc/passwd')",
    "'data/orders.csv'",
    "(SELECT * FROM duckdb_settings())",
]


@pytest.mark.parametrize("source", UNTRUSTED_SOURCES)
def test_untrusted_sources_are_model_errors(source: str) -> None:
    text = SHOP_TEXT.replace("source: main.orders", f'source: "{source}"', 1)
    assert text != SHOP_TEXT
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert "untrusted_sql" in [d.code for d in info.value.issues]
    assert validate(text)["valid"] is False


def test_a_glob_source_is_a_model_error() -> None:
    """sqlglot cannot read DuckDB's glob() table function: invalid_source, never executed."""
    text = SHOP_TEXT.replace("source: main.orders", "source: \"(SELECT * FROM glob('/x'))\"", 1)
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert {"untrusted_sql", "invalid_source"} & {d.code for d in info.value.issues}


@pytest.mark.parametrize(
    "expression",
    ["current_setting('home_directory')", "getvariable('x')", "pg_read_file('/etc/passwd')"],
)
def test_untrusted_field_and_metric_expressions_are_model_errors(expression: str) -> None:
    field = SHOP_TEXT.replace("expression: status}", f'expression: "{expression}"}}', 1)
    metric = SHOP_TEXT.replace(
        "expression: SUM(orders.amount)}", f'expression: "MAX({expression})"}}', 1
    )
    for text in (field, metric):
        assert text != SHOP_TEXT
        with pytest.raises(ModelError) as info:
            Engine(model_text=text)
        assert "untrusted_sql" in [d.code for d in info.value.issues]


def test_trust_sql_admits_them_and_the_lockdown_still_holds(tmp_path: Path) -> None:
    text = SHOP_TEXT.replace(
        "source: main.orders",
        "source: \"(SELECT * FROM read_csv('/etc/passwd'))\"",
        1,
    )
    engine = Engine(model_text=text, trust_sql=True)
    assert validate(text, trust_sql=True)["valid"] is True
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    with pytest.raises(ExecuteError) as info:  # the database layer still refuses the file
        engine.execute({"metrics": ["revenue"]}, db_path=db)
    assert "disabled by configuration" in info.value.message
    engine.close()


def test_table_names_and_plain_selects_stay_trusted(tmp_path: Path) -> None:
    text = SHOP_TEXT.replace(
        "source: main.orders",
        'source: "(SELECT o.*, range AS r FROM main.orders o, range(1))"',
        1,
    ).replace("source: main.customers", "source: customers", 1)
    Engine(model_text=text).close()


# -- one Engine, 8 threads ------------------------------------------------------------------------
def test_one_engine_serves_eight_threads(shop: Engine, shop_db: Path) -> None:
    con = duckdb.connect(str(shop_db), read_only=True)
    want = {
        ch: v  # DECIMAL sums, compared exactly
        for ch, v in con.execute(
            "SELECT channel, SUM(amount) FROM main.orders GROUP BY channel"
        ).fetchall()
    }
    con.close()
    queries = [
        {"metrics": ["revenue"], "group_by": ["orders.channel"]},
        {"metrics": ["revenue"], "where_sql": "sleep(1) = 0"},
        {"metrics": ["revenue"], "where_sql": "(" * 500 + "1=1" + ")" * 500},
    ]
    failures: list[str] = []

    def work(i: int) -> None:
        for n in range(12):
            q = queries[(i + n) % len(queries)]
            try:
                rows = shop.execute(q, db_path=shop_db)["rows"]
                got = {r["channel"]: r["revenue"] for r in rows}
                if got != want:
                    failures.append(f"wrong rows {got}")
            except ExecuteError as err:
                failures.append(f"execute error {err}")
            except Exception as err:
                if getattr(err, "code", None) not in ("unsupported_filter", "filter_too_complex"):
                    failures.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
