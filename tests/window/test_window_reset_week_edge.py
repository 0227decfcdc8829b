"""A reset window by week under a range that starts inside a week (WIN-QRY-04, WIN-FRM reset;
the reference engine's answer): weeks do not tile the reset period, so the edge week is
trimmed and the query answers, the weeks from the start on holding their whole-period running
values. By month or quarter, whose buckets tile a year, a start inside a bucket stays
`grain_too_fine`. Expected rows from hand-written SQL over the mini shop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import norm, result_rows

from dosi.errors import QueryError

YTD = {"v": "1.3", "window": {"type": "cumulative", "function": "sum", "reset": "year"}}
EXTRA = [
    {
        "name": "revenue_ytd",
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "SUM(orders.amount)"}]},
    }
]


@pytest.fixture
def run(mini_engine: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    _, run = mini_engine(extra_metrics=EXTRA, metric_ext={"revenue_ytd": YTD})
    return run


def test_reset_by_week_trims_the_edge_week(run: Any, mini_ref: Any) -> None:
    res = run(
        {
            "metrics": ["revenue_ytd"],
            "group_by": ["metric_time:week"],
            "time_range": {"start": "2024-02-01", "end": "2024-04-01"},  # a Thursday
        }
    )
    want = mini_ref.exact(
        "WITH w AS (SELECT CAST(date_trunc('week', order_date) AS DATE) AS wk, SUM(amount) AS v "
        "FROM orders WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-04-01' "
        "GROUP BY 1), c AS (SELECT wk, SUM(v) OVER (PARTITION BY date_trunc('year', wk) "
        "ORDER BY wk ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ytd FROM w) "
        "SELECT wk, ytd FROM c WHERE wk >= DATE '2024-02-01' ORDER BY 1"
    )
    assert [tuple(map(norm, r)) for r in result_rows(res)] == [tuple(map(norm, r)) for r in want]
    assert [tuple(map(norm, r)) for r in want] == [("2024-03-04", 250.0), ("2024-03-25", 270.0)]


@pytest.mark.parametrize("grain", ["month", "quarter"])
def test_a_tiling_grain_keeps_grain_too_fine(run: Any, grain: str) -> None:
    with pytest.raises(QueryError) as info:
        run(
            {
                "metrics": ["revenue_ytd"],
                "group_by": [f"metric_time:{grain}"],
                "time_range": {"start": "2024-02-15", "end": "2024-04-01"},
            }
        )
    assert info.value.code == "grain_too_fine"
