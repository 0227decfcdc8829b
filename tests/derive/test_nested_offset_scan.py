"""Nested offsets under a time_range (WIN-19-06, WIN-OFF-01): an offset over a compose over an
offset reads the stage below at its shifted buckets, so the scan widens by both shifts (two
months for one month over one month). Densified, so every month of the range is a row and an
offset reads the calendar month before. Expected values from hand-written SQL over the same
DuckDB table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from derivekit import build_db, metric, model

import dosi

POP = {"type": "pop", "offset": "1 month", "calculation": "value"}
NESTED = [
    metric("rev_lag", "SUM(orders.amount)", {"v": "1.9", "window": POP}),
    metric(
        "rev_lag_x2",
        "SUM(orders.amount)",
        {"derive": {"type": "compose", "expr": "rev_lag * 2"}},
    ),
    metric(
        "rev_lag_lag", "SUM(orders.amount)", {"v": "1.9", "window": {"base": "rev_lag_x2", **POP}}
    ),
]
MONTH = {"field": "metric_time", "grain": "month"}
# twice the revenue of the month two before each month of [May, July) 2024
_HAND = """
WITH m AS (SELECT date_trunc('month', order_date) AS m, SUM(amount) AS rev FROM orders GROUP BY 1)
SELECT strftime(t.m, '%Y-%m-%d'), 2 * b.rev
FROM (SELECT unnest([DATE '2024-05-01', DATE '2024-06-01']) AS m) t
LEFT JOIN m b ON b.m = t.m - INTERVAL 2 MONTH
ORDER BY 1
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("nested_offset") / "n.duckdb")


@pytest.fixture(scope="module")
def engine(db: Path) -> Iterator[Any]:
    e = dosi.Engine(model_text=model(NESTED), connections={"d": {"type": "duckdb", "uri": str(db)}})
    yield e
    e.close()


def test_win_19_06_nested_offsets_widen_the_scan_by_both_shifts(engine: Any, db: Path) -> None:
    """May reads April's one-month offset, which reads March: both months before the range
    start are scanned (one shift alone would leave March out and May NULL)."""
    res = engine.execute(
        {
            "metrics": ["rev_lag_lag"],
            "group_by": [MONTH],
            "time_range": {"start": "2024-05-01", "end": "2024-07-01"},
            "densify": "time",
        }
    )
    got = [(str(r["metric_time__month"])[:10], r["rev_lag_lag"]) for r in res["rows"]]
    con = duckdb.connect(str(db), read_only=True)
    try:
        want = [tuple(r) for r in con.execute(_HAND).fetchall()]
    finally:
        con.close()
    assert got == want
    assert want == [("2024-05-01", 200.0), ("2024-06-01", 400.0)]
    assert "[2024-03-01, 2024-07-01)" in engine.explain(
        {
            "metrics": ["rev_lag_lag"],
            "group_by": [MONTH],
            "time_range": {"start": "2024-05-01", "end": "2024-07-01"},
        }
    )
