"""`dosi serve` under warehouse faults (issue 29, items 2 and 5): a PostgreSQL default profile
is served (it used to exit at start-up, "not a DuckDB file"); `/healthz` reports each
connection's state without uri, port or path and turns 503 while the server is down; queries
then answer 503 `warehouse_unavailable` and succeed again once it is back. A DuckDB file
replaced under the server is reopened by the whole pool: every answer after the swap reads
the new file, and a missing file makes the server unhealthy."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from enginekit import dataset, field, make_db, metric, model_doc, to_yaml
from pgserverkit import PgServer, own_pg  # noqa: F401 - the fixture

MODEL = to_yaml(
    model_doc(
        [dataset("sales", [field("id"), field("amount", datatype="Integer")])],
        metrics=[metric("total", "SUM(sales.amount)")],
    )
)
Q = {"metrics": ["total"]}


def _until(check: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("not reached in time")


def _total(c: httpx.Client) -> Any:
    r = c.post("/v1/query", json=Q)
    return r.json()["rows"][0]["total"] if r.status_code == 200 else r.status_code


def test_issue29_items2_5_a_postgres_profile_is_served_and_its_health_reported(
    launch: Any,
    tmp_path: Path,
    own_pg: PgServer,  # noqa: F811
) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(MODEL)
    conns = tmp_path / "connections.yml"
    conns.write_text(f'w:\n  type: postgres\n  uri: "{own_pg.dsn}"\n  default: true\n')
    s = launch(model, "--connections", str(conns), db=False)
    with s.client() as c:
        assert _total(c) == 55
        _until(lambda: c.get("/healthz").json()["connections"]["w"]["state"] == "ok")
        own_pg.stop()
        try:
            _until(lambda: c.get("/healthz").status_code == 503)
            health = c.get("/healthz")
            assert health.json()["ok"] is False
            assert health.json()["connections"]["w"]["state"] in ("lost", "unavailable")
            assert str(own_pg.port) not in health.text and str(tmp_path) not in health.text
            r = c.post("/v1/query", json=Q)
            assert r.status_code == 503, r.text
            assert r.json()["code"] == "warehouse_unavailable"
        finally:
            own_pg.start()
        _until(lambda: _total(c) == 55)
        _until(lambda: c.get("/healthz").status_code == 200)


def test_issue29_item2_a_replaced_duckdb_file_is_reopened_by_the_whole_pool(
    launch: Any, tmp_path: Path
) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(MODEL)

    def db(name: str, factor: int) -> Path:
        sql = f"CREATE TABLE sales AS SELECT i AS id, i * {factor} AS amount FROM range(1, 11) t(i)"
        return make_db(tmp_path / name, [sql])

    live = tmp_path / "live.duckdb"
    shutil.copy(db("old.duckdb", 1), live)
    new = db("new.duckdb", 10)
    s = launch(model, db=live)
    with s.client() as c, ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda _: _total(c), range(16))) == {55}  # every pool engine open
        staged = tmp_path / "staged.duckdb"
        shutil.copy(new, staged)
        os.replace(staged, live)  # a new file under the old name (a new inode)
        _until(lambda: _total(c) == 550)
        assert set(pool.map(lambda _: _total(c), range(32))) == {550}  # none reads the old one
        assert c.get("/healthz").json()["connections"]["db"]["reopens"] >= 1
        os.remove(live)
        _until(lambda: c.get("/healthz").status_code == 503)
        assert c.get("/healthz").json()["connections"]["db"]["state"] == "missing"
        shutil.copy(new, live)
        _until(lambda: c.get("/healthz").status_code == 200)
        _until(lambda: _total(c) == 550)
