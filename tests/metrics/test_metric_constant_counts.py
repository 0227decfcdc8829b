"""Constant aggregates pinned with D-DATASET inside composes and ratios (issue 21 item 4):
`COUNT(*)`, `COUNT(1)` and `SUM(1)` read no column; each member pins its dataset, and a
D-DERIVE compose over members of different datasets counts each member's own rows (its
written expansion's aggregates take the members' datasets, left to right). Expected values come
from hand-written SQL over the mini shop.

Requirement IDs: DSET-01 (the pin), DSET-03 (still refused without one), DRV-CMP-01 (compose),
CORE-FAN-02 (branches of different datasets merged), CORE-MEAS-02 (one measure per signature
and dataset).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, metric, mini_yaml, result_rows

from dosi.engine import Engine
from dosi.errors import ModelError

Make = Callable[..., Any]


def compose(name: str, expression: str, expr: str) -> dict[str, Any]:
    return metric(name, expression, {"v": "1.4", "derive": {"type": "compose", "expr": expr}})


MEMBERS = [
    metric("order_rows", "COUNT(*)", {"dataset": "orders"}),
    metric("refund_rows", "SUM(1)", {"dataset": "refunds"}),
    metric("item_rows", "COUNT(1)", {"dataset": "order_items"}),
    metric("refund_count_star", "COUNT(*)", {"dataset": "refunds"}),
]
COMPOSES = [
    compose("refunds_per_order", "SUM(1) / COUNT(*)", "refund_rows / order_rows"),
    compose("items_per_order", "COUNT(1) / COUNT(*)", "item_rows / order_rows"),
    compose("stars_ratio", "COUNT(*) / COUNT(*)", "refund_count_star / order_rows"),
    compose("all_rows", "COUNT(*) + SUM(1) + COUNT(1)", "order_rows + refund_rows + item_rows"),
]


@pytest.fixture
def run(mini_engine: Make) -> Callable[[dict[str, Any]], dict[str, Any]]:
    _, go = mini_engine(extra_metrics=[*MEMBERS, *COMPOSES])
    return go


def test_totals_count_each_members_rows(run: Any, mini_ref: Any) -> None:
    res = run({"metrics": ["refunds_per_order", "items_per_order", "stars_ratio", "all_rows"]})
    orders, refunds, items = mini_ref.exact(
        "SELECT (SELECT COUNT(*) FROM orders), (SELECT COUNT(*) FROM refunds), "
        "(SELECT COUNT(*) FROM order_items)"
    )[0]
    assert_rows_equal(
        result_rows(res),
        [(refunds / orders, items / orders, refunds / orders, orders + refunds + items)],
    )


def test_by_month_each_branch_counts_its_own_rows(run: Any, mini_ref: Any) -> None:
    res = run({"metrics": ["stars_ratio", "refund_rows"], "group_by": ["metric_time:month"]})
    want = mini_ref.rows(
        "WITH o AS (SELECT date_trunc('month', order_date)::DATE m, COUNT(*) n FROM orders "
        "GROUP BY 1), r AS (SELECT date_trunc('month', refund_date)::DATE m, COUNT(*) n "
        "FROM refunds GROUP BY 1) SELECT COALESCE(o.m, r.m), r.n::DOUBLE / NULLIF(o.n, 0), r.n "
        "FROM o FULL JOIN r ON o.m = r.m"
    )
    assert_rows_equal(result_rows(res), want)


def test_members_share_measures_by_dataset(mini_engine: Make) -> None:
    """CORE-MEAS-02: the compose reuses its members' measures, one per (dataset, aggregate)."""
    eng, _ = mini_engine(extra_metrics=[*MEMBERS, *COMPOSES])
    stars = eng.metric("stars_ratio")["measures"]
    assert stars == [
        *eng.metric("refund_count_star")["measures"],
        *eng.metric("order_rows")["measures"],
    ]
    assert len(set(stars)) == 2


def test_an_unpinned_constant_outside_a_compose_is_still_refused() -> None:
    """DSET-03: a plain COUNT(*) / SUM(1) with no pin and no members names no dataset."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(extra_metrics=[metric("rows", "SUM(1) / COUNT(*)")]))
    assert [d.code for d in info.value.issues] == ["count_star_needs_dataset"]
