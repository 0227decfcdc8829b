"""Bounded answers on a real `dosi serve` (issue 29, item 1): row and byte limits, server-wide
and per request, answer `result_too_large` naming the limit with a `suggested_retry` that
carries a limit and succeeds as sent; encoding runs off the event loop, so `/healthz` answers
while large answers are built; the pool's memory budget sets each DuckDB's memory_limit."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import duckdb
from enginekit import dataset, field, metric, model_doc, to_yaml

from dosi import Engine

N_ROWS = 300_000
BIG_MODEL = to_yaml(
    model_doc(
        [
            dataset(
                "big",
                [
                    field("x", datatype="Integer", ext={"v": "1.7", "is_dimension": True}),
                    field("k", datatype="Integer", ext={"v": "1.7", "is_dimension": True}),
                ],
                source=f"SELECT range AS x, range % 7 AS k FROM range({N_ROWS})",
            )
        ],
        metrics=[metric("total", "SUM(big.x)")],
    )
)
SELECT_ALL = {"from": "big", "fields": ["big.x", "big.k"], "limit": N_ROWS}
CONTRACT = ("code", "message", "candidates", "hint", "suggested_retry")


def _model(tmp_path: Path) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text(BIG_MODEL)
    return path


def _too_large(r: Any, limit: str) -> dict[str, Any]:
    assert r.status_code == 422, r.text
    body = r.json()
    for key in CONTRACT:
        assert key in body
    assert body["code"] == "result_too_large"
    assert body["detail"]["limit"] == limit
    assert limit in body["message"]
    return body


def test_issue29_item1_row_limit_names_the_limit_and_the_retry_fits(
    launch: Any, tmp_path: Path
) -> None:
    s = launch(_model(tmp_path), "--max-rows", "1000", db=False)
    with s.client() as c:
        body = _too_large(c.post("/v1/select", json=SELECT_ALL), "rows")
        assert body["detail"]["max_rows"] == 1000
        retry = body["suggested_retry"]
        assert retry == {**SELECT_ALL, "limit": 1000}
        ok = c.post("/v1/select", json=retry)
        assert ok.status_code == 200, ok.text
        assert ok.json()["row_count"] == 1000
        dims = {"metrics": [], "group_by": ["big.x"]}  # a dimension-only query: every value
        body = _too_large(c.post("/v1/query", json=dims), "rows")
        assert body["suggested_retry"]["limit"] == 1000
        # the answers within the limit are the Python API's, row for row
        small = {"from": "big", "fields": ["big.x"], "order_by": ["big.x"], "limit": 5}
        assert c.post("/v1/select", json=small).json()["rows"] == [{"x": i} for i in range(5)]


def test_issue29_item1_a_request_may_ask_for_less_never_for_more(
    launch: Any, tmp_path: Path
) -> None:
    s = launch(_model(tmp_path), "--max-rows", "1000", db=False)
    q = {**SELECT_ALL, "limit": 500}
    with s.client() as c:
        assert c.post("/v1/select", json=q).status_code == 200
        body = _too_large(c.post("/v1/select?max_rows=100", json=q), "rows")
        assert body["suggested_retry"]["limit"] == 100
        body = _too_large(c.post("/v1/select", json=q, headers={"x-dosi-max-rows": "10"}), "rows")
        assert body["detail"]["max_rows"] == 10
        # asking for more than the server allows keeps the server's limit
        _too_large(c.post("/v1/select?max_rows=5000", json={**q, "limit": 2000}), "rows")
        bad = c.post("/v1/select?max_rows=-3", json=q)
        assert bad.status_code == 400 and bad.json()["error"] == "usage_error", bad.text


def test_issue29_item1_byte_limit_in_every_format(launch: Any, tmp_path: Path) -> None:
    s = launch(_model(tmp_path), "--max-result-bytes", "20kB", db=False)
    q = {"from": "big", "fields": ["big.x", "big.k"], "order_by": ["big.x"], "limit": 5000}
    with s.client() as c:
        for fmt in ("json", "csv", "arrow"):
            body = _too_large(c.post(f"/v1/select?format={fmt}", json=q), "bytes")
            assert body["detail"]["max_bytes"] == 20_000
            retry = body["suggested_retry"]
            assert 0 < retry["limit"] < 5000
            ok = c.post(f"/v1/select?format={fmt}", json=retry)
            assert ok.status_code == 200, (fmt, ok.text)
            assert len(ok.content) <= 20_000


def test_issue29_item1_semantic_sql_retry_carries_a_limit(launch: Any, tmp_path: Path) -> None:
    s = launch(_model(tmp_path), "--max-rows", "50", db=False)
    with s.client() as c:
        sql = {"sql": "SELECT big__x, MEASURE(total) FROM m GROUP BY 1"}
        body = _too_large(c.post("/v1/sql", json=sql), "rows")
        retry = body["suggested_retry"]
        assert "LIMIT 50" in retry["sql"]
        ok = c.post("/v1/sql", json=retry)
        assert ok.status_code == 200, ok.text
        assert ok.json()["row_count"] == 50


def test_issue29_item1_healthz_answers_while_large_answers_encode(
    launch: Any, tmp_path: Path
) -> None:
    """Four 300,000-row answers built and encoded at once leave the event loop free."""
    s = launch(_model(tmp_path), "--max-rows", "0", "--max-result-bytes", "0", db=False)
    done: list[int] = []

    def big() -> None:
        with s.client(timeout=120) as c:
            done.append(c.post("/v1/select", json=SELECT_ALL).status_code)

    workers = [threading.Thread(target=big) for _ in range(4)]
    for w in workers:
        w.start()
    worst = 0.0
    with s.client(timeout=10) as c:
        while any(w.is_alive() for w in workers):
            started = time.monotonic()
            assert c.get("/healthz").status_code == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.05)
    for w in workers:
        w.join()
    assert done == [200] * 4
    assert worst < 1.0, worst


def test_issue29_item1_timeout_covers_conversion_and_encoding(launch: Any, tmp_path: Path) -> None:
    """The database step is fast; building and encoding 300,000 rows is not: past the
    whole-request timeout the answer is 504 `timeout`, at the deadline."""
    s = launch(
        _model(tmp_path),
        "--timeout",
        "0.3",
        "--max-rows",
        "0",
        "--max-result-bytes",
        "0",
        db=False,
    )
    with s.client() as c:
        started = time.monotonic()
        r = c.post("/v1/select?format=csv", json=SELECT_ALL)
        took = time.monotonic() - started
        assert r.status_code == 504, r.text[:200]
        assert r.json()["code"] == "timeout"
        assert took < 2.0
        assert c.get("/healthz").status_code == 200


def test_issue29_item1_memory_budget_is_shared_by_the_pool(
    launch: Any, tmp_path: Path, shop_db: Path
) -> None:
    s = launch(_model(tmp_path), "--memory-budget", "2GiB", db=False)
    with s.client() as c:
        limits = c.get("/v1/health").json()["limits"]
    assert limits["engine_memory_limit"] == "512MB"  # 2 GiB over the 4 engines of the pool
    assert limits["max_rows"] == 100_000 and limits["max_result_bytes"] == 64_000_000
    e = Engine(model_text=BIG_MODEL, memory_limit=limits["engine_memory_limit"])
    try:
        got = e.runner().run("SELECT current_setting('memory_limit') AS m").to_pylist()
    finally:
        e.close()
    con = duckdb.connect()
    con.execute("SET memory_limit = '512MB'")
    expected = con.execute("SELECT current_setting('memory_limit')").fetchone()
    con.close()
    assert expected is not None and got == [{"m": expected[0]}]
