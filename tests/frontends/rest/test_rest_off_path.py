"""Work in the right place (issue 29, item 5): validation and catalog answers hold no query
engine, so they answer while every engine of the pool runs a slow query; a model reload is
built by the watcher thread, never by the request (or event loop) that asks for the pool."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from enginekit import SHOP_MODEL, SLOW_MODEL, dataset, field, metric, model_doc, to_yaml

from dosi.frontends.holder import EngineHolder


def test_issue29_item5_validate_and_catalog_answer_while_the_pool_is_busy(
    launch: Any, tmp_path: Path
) -> None:
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    s = launch(model, "--timeout", "5", db=False)
    codes: list[int] = []

    def slow() -> None:
        with s.client() as c:
            q = {"metrics": ["total"], "group_by": ["big.k"]}
            codes.append(c.post("/v1/query", json=q).status_code)

    busy = [threading.Thread(target=slow) for _ in range(4)]  # the pool's 4 engines
    for t in busy:
        t.start()
    time.sleep(1.5)
    with s.client(timeout=30) as c:
        started = time.monotonic()
        v = c.post("/v1/validate", json={"model": SHOP_MODEL.read_text()})
        took_validate = time.monotonic() - started
        started = time.monotonic()
        m = c.get("/v1/metrics")
        took_metrics = time.monotonic() - started
    assert v.status_code == 200 and v.json()["valid"] is True
    assert m.status_code == 200 and [x["name"] for x in m.json()] == ["total"]
    assert all(t.is_alive() for t in busy)  # the slow queries still held every engine
    assert took_validate < 4.0 and took_metrics < 2.0, (took_validate, took_metrics)
    for t in busy:
        t.join()
    assert codes == [504] * 4


def _model(n: int) -> str:
    metrics = [metric(f"m{i}", f"SUM(t.v) * {i + 1}") for i in range(n)]
    return to_yaml(model_doc([dataset("t", ["k", field("v", datatype="Integer")])], [], metrics))


def test_issue29_item5_a_reload_is_built_off_the_request_path(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(_model(400))
    holder = EngineHolder(path, check_interval=0.1)
    try:
        first = holder.current_pool()
        path.write_text(_model(401))
        worst = 0.0
        deadline = time.monotonic() + 60
        while holder.reloads == 0 and time.monotonic() < deadline:
            started = time.monotonic()
            holder.current_pool()
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.01)
        assert holder.reloads == 1 and holder.current_pool() is not first
        assert "m400" in [m["name"] for m in holder.current().metrics()]
        assert worst < 0.005, worst  # no request ever compiled the model
        assert first.retired
    finally:
        holder.close()
