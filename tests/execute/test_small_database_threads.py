"""Issue 27 item 3: a database whose tables are all smaller than one DuckDB row group runs each
statement on the calling thread (a second thread has nothing to scan and only waits to be
scheduled), when the model reads only tables; anything else keeps DuckDB's default."""

from __future__ import annotations

from pathlib import Path

import duckdb
from enginekit import SHOP_MODEL, SLOW_MODEL

from dosi import Engine
from dosi.execute.duckdb_runner import SMALL_TABLE_ROWS, open_duckdb
from dosi.execute.options import ExecOptions


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])


def _default_threads() -> int:
    con = duckdb.connect()
    try:
        return _threads(con)
    finally:
        con.close()


def _db(path: Path, rows: int) -> Path:
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE t AS SELECT range AS x FROM range({rows})")
    con.close()
    return path


def test_issue27_item3_small_tables_run_on_one_thread(tmp_path: Path) -> None:
    small = _db(tmp_path / "small.duckdb", SMALL_TABLE_ROWS - 1)
    big = _db(tmp_path / "big.duckdb", SMALL_TABLE_ROWS)
    tables = ExecOptions(tables_only=True)
    for path, want in ((small, 1), (big, _default_threads())):
        con = open_duckdb(str(path), options=tables)
        try:
            assert _threads(con) == want, path.name
        finally:
            con.close()
    con = open_duckdb(str(small), options=ExecOptions())  # the model reads more than tables
    try:
        assert _threads(con) == _default_threads()
    finally:
        con.close()


def test_issue27_item3_only_a_model_of_tables_asks_for_it(tmp_path: Path, shop_db: Path) -> None:
    shop = Engine(str(SHOP_MODEL))
    slow_model = tmp_path / "slow.yaml"
    slow_model.write_text(SLOW_MODEL)
    slow = Engine(str(slow_model))  # a SQL source: its size is unknown
    try:
        assert shop.options.tables_only and not slow.options.tables_only
        con = duckdb.connect(str(shop_db), read_only=True)
        try:
            want = con.execute("SELECT SUM(amount) FROM orders").fetchall()[0][0]
        finally:
            con.close()
        out = shop.execute({"metrics": ["revenue"]}, db_path=shop_db, cache=False)
        assert out["rows"] == [{"revenue": want}]  # same answer on one thread
    finally:
        shop.close()
        slow.close()
