"""Runners and connection profiles (issue 14 items 1-2): client objects of every kind are
recognised, a URI opens the engine's own client, passwords come from the environment and are
never shown, a missing driver names its pip extra, and a timeout cancels the running query
through the runner's own cancel."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dosi.errors import ExecuteError
from dosi.execute.connections import Profile, client_type, parse_connections
from dosi.execute.engines import open_runner
from dosi.execute.runner import Runner, require
from dosi.execute.shape import conform, output_types
from dosi.execute.sqlite_runner import SQLiteRunner


def test_client_objects_are_recognised() -> None:
    con = sqlite3.connect(":memory:")
    try:
        assert client_type(con) == "sqlite"
        c = parse_connections({"lite": con})
        assert c.profile("lite").type == "sqlite" and c.default == "lite"
        c2 = parse_connections({"lite": {"client": con}})
        assert c2.profile(None).dialect == "sqlite"
        with pytest.raises(ExecuteError) as info:
            parse_connections({"x": object()})
        assert info.value.code == "config"
    finally:
        con.close()


def test_types_fix_dialects() -> None:
    c = parse_connections(
        {
            "pg": {"type": "postgresql", "uri": "postgresql://u@h/db"},
            "maria": {"type": "mariadb", "uri": "mysql://u@h/db"},
            "ch": {"type": "chdb"},
            "df": {"type": "datafusion", "uri": "/data"},
            "sp": {"type": "spark", "uri": "local[2]", "default": True},
        }
    )
    dialects = {n: c.profile(n).dialect for n in c.profiles}
    assert dialects == {
        "pg": "postgres",
        "maria": "mariadb",
        "ch": "clickhouse",
        "df": "datafusion",
        "sp": "spark",
    }
    assert c.default == "sp"


def test_password_from_the_environment_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    p = parse_connections(
        {"pg": {"type": "postgres", "uri": "postgresql://u@h/db", "password_env": "DOSI_PW"}}
    ).profile("pg")
    monkeypatch.delenv("DOSI_PW", raising=False)
    with pytest.raises(ExecuteError) as info:
        p.password()
    assert info.value.code == "config" and "DOSI_PW" in info.value.message
    monkeypatch.setenv("DOSI_PW", "s3cret")
    assert p.password() == "s3cret"
    assert "s3cret" not in repr(p) and "postgresql://" not in repr(p)


def test_missing_driver_names_the_extra() -> None:
    with pytest.raises(ExecuteError) as info:
        require("dosi_no_such_driver", "postgres", "PostgreSQL")
    assert info.value.code == "missing_driver"
    assert "dosi[postgres]" in (info.value.hint or "")


def test_compile_only_types_are_refused_by_name() -> None:
    with pytest.raises(ExecuteError) as info:
        open_runner(Profile("wh", "snowflake"))
    assert info.value.code == "config" and "snowflake" in info.value.message


def test_sqlite_timeout_interrupts_the_query(tmp_path: Path) -> None:
    runner = open_runner(Profile("lite", "sqlite", str(tmp_path / "x.sqlite")))
    assert isinstance(runner, Runner) and isinstance(runner, SQLiteRunner)
    slow = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
        "SELECT SUM(i) FROM n"
    )
    with pytest.raises(ExecuteError) as info:
        runner.run(slow, timeout_secs=0.2)
    assert info.value.code == "timeout"
    assert runner.run("SELECT 1 AS one").to_pylist() == [{"one": 1}]  # still usable
    with pytest.raises(ExecuteError) as bad:
        runner.run("SELECT * FROM missing_table")
    assert bad.value.code == "sql_rejected"
    runner.close()


@pytest.mark.skipif(
    importlib.util.find_spec("datafusion") is None, reason="datafusion is not installed"
)
def test_datafusion_uri_is_a_parquet_folder(tmp_path: Path) -> None:
    pq.write_table(pa.table({"k": [1, 2, 3]}), tmp_path / "things.parquet")
    runner = open_runner(Profile("df", "datafusion", str(tmp_path)))
    assert runner.run("SELECT SUM(k) AS s FROM main.things").to_pylist() == [{"s": 6}]
    runner.close()


@pytest.mark.skipif(importlib.util.find_spec("chdb") is None, reason="chdb is not installed")
def test_chdb_without_uri_is_a_temporary_session() -> None:
    runner = open_runner(Profile("ch", "chdb"))
    table = runner.run("SELECT toDate('2024-01-01') AS d, count() AS n, 'x' AS s")
    shaped = conform(table, output_types([("d", "month", False, ["DateTime"])]))
    assert shaped.schema.field("d").type == pa.timestamp("us")
    assert shaped.schema.field("n").type == pa.int64()
    assert shaped.schema.field("s").type == pa.string()
    runner.close()


def test_conform_parses_sqlite_text() -> None:
    table = pa.table(
        {"t": ["2024-01-01 00:00:00", None], "d": ["2024-01-02", "2024-01-03"], "n": [1, 2]}
    )
    types = output_types([("t", "month", False, ["DateTime"]), ("d", None, False, ["Date"])])
    out = conform(table, types)
    assert out.column("t").to_pylist()[0].isoformat() == "2024-01-01T00:00:00"
    assert out.column("d").type == pa.date32()


@pytest.mark.skipif(
    not os.environ.get("DOSI_TEST_POSTGRES") or importlib.util.find_spec("psycopg") is None,
    reason="set DOSI_TEST_POSTGRES (bash scripts/postgres.sh) and install dosi[postgres]",
)
def test_postgres_timeout_sends_a_cancel_request() -> None:
    runner = open_runner(Profile("pg", "postgres", os.environ["DOSI_TEST_POSTGRES"]))
    with pytest.raises(ExecuteError) as info:
        runner.run("SELECT pg_sleep(5)", timeout_secs=0.3)
    assert info.value.code == "timeout"
    assert runner.run("SELECT 1 AS one").to_pylist() == [{"one": 1}]
    runner.close()


@pytest.mark.skipif(
    not os.environ.get("DOSI_TEST_MARIADB") or importlib.util.find_spec("pymysql") is None,
    reason="set DOSI_TEST_MARIADB (bash scripts/mariadb.sh) and install dosi[mysql]",
)
def test_mariadb_timeout_stops_the_statement() -> None:
    uri = os.environ["DOSI_TEST_MARIADB"].rstrip("/") + "/mysql"  # seq_ tables need a database
    runner = open_runner(Profile("m", "mariadb", uri))
    heavy = "SELECT COUNT(*) AS n FROM seq_1_to_1000000 a, seq_1_to_1000000 b"
    with pytest.raises(ExecuteError) as info:
        runner.run(heavy, timeout_secs=0.3)
    assert info.value.code == "timeout"
    assert runner.run("SELECT 1 AS one").to_pylist() == [{"one": 1}]
    runner.close()
