"""Issue 27 item 5 and issue 29 item 5: the REST worker model. Queries run in their own lane of
worker threads, catalog / validate / compile work in the `dosi serve --workers N` threads; the
event loop never waits for either, so it keeps answering (here `/healthz`, served on the loop
itself) while slow queries hold the query lane, and a catalog request does not wait behind
them."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from enginekit import SHOP_MODEL, SLOW_MODEL

from dosi.errors import ArgumentError
from dosi.frontends.rest.app import create_app


def test_issue27_item5_the_loop_and_the_catalog_answer_while_queries_are_busy(
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
        metrics = c.get("/v1/metrics")  # the other lane: never behind the slow queries
        took_metrics = time.monotonic() - started
        assert all(t.is_alive() for t in busy)
    for t in busy:
        t.join()
    assert health.status_code == 200 and took_health < 2.0, took_health
    assert metrics.status_code == 200 and [m["name"] for m in metrics.json()] == ["total"]
    assert took_metrics < 2.0, took_metrics  # the slow queries run until the 4 s timeout
    assert codes == [504, 504]


@pytest.mark.parametrize("workers", [0, -1, True, 5000, "8"])
def test_issue27_item5_workers_must_be_a_sensible_count(workers: Any) -> None:
    with pytest.raises(ArgumentError, match="workers"):
        create_app(SHOP_MODEL, workers=workers)
