"""Issue 27 item 5: the REST worker model. Compile, execution and encoding run in a bounded set
of worker threads (`dosi serve --workers N`); the event loop never waits for them, so it keeps
answering (here `/healthz`, an endpoint served on the loop itself) while every worker is busy,
and work that needs a worker waits for one."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from enginekit import SHOP_MODEL, SLOW_MODEL

from dosi.errors import ArgumentError
from dosi.frontends.rest.app import create_app


def test_issue27_item5_the_loop_answers_while_every_worker_is_busy(
    launch: Any, tmp_path: Path
) -> None:
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    s = launch(model, "--workers", "2", "--timeout", "4", db=False)
    codes: list[int] = []

    def slow() -> None:
        with s.client() as c:
            q = {"metrics": ["total"], "group_by": ["big.k"]}
            codes.append(c.post("/v1/query", json=q).status_code)

    busy = [threading.Thread(target=slow) for _ in range(2)]  # both workers
    for t in busy:
        t.start()
    time.sleep(1.0)
    with s.client(timeout=30) as c:
        started = time.monotonic()
        health = c.get("/healthz")
        took_health = time.monotonic() - started
        assert all(t.is_alive() for t in busy)  # the slow queries still hold both workers
        started = time.monotonic()
        metrics = c.get("/v1/metrics")  # needs a worker: waits for a slow query to stop
        took_metrics = time.monotonic() - started
    for t in busy:
        t.join()
    assert health.status_code == 200 and took_health < 2.0, took_health
    assert metrics.status_code == 200 and [m["name"] for m in metrics.json()] == ["total"]
    assert took_metrics > 1.5, took_metrics  # two workers, both busy until the 4 s timeout
    assert codes == [504, 504]


@pytest.mark.parametrize("workers", [0, -1, True, 5000, "8"])
def test_issue27_item5_workers_must_be_a_sensible_count(workers: Any) -> None:
    with pytest.raises(ArgumentError, match="workers"):
        create_app(SHOP_MODEL, workers=workers)
