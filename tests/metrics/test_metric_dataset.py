"""D-DATASET `dataset`: the dataset a metric's COUNT(*) counts (issue 3).

Requirement IDs: DSET-01..05 (basic-mode fallbacks: tests/ext/test_ext_engine_modes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import assert_rows_equal, metric, mini_yaml, result_rows

from dosi.engine import Engine
from dosi.errors import ModelError

Make = Callable[..., Any]

# ------------------------------------------------------------------------------ D-DATASET

LINES = metric("lines", "COUNT(*)", {"dataset": "order_items"})


def test_dset_01_pins_count_star_to_a_dataset(mini_engine: Make, mini_ref: Any) -> None:
    """DSET-01/03: `dataset` resolves COUNT(*) ownership; it then joins like any metric."""
    engine, run = mini_engine(extra_metrics=[LINES])
    assert engine.metric("lines")["datasets"] == ["order_items"]
    res = run({"metrics": ["lines"], "group_by": ["customers.region"]})
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows(
            "SELECT c.region, COUNT(*) FROM order_items i "
            "LEFT JOIN orders o ON i.order_id = o.order_id "
            "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
        ),
    )


def test_dset_01_shop_order_line_count(shop_run: Callable[..., Any], shop_ref: Any) -> None:
    """DSET-01 on the shop model: order_line_count = COUNT(*) of order_items."""
    res = shop_run({"metrics": ["order_line_count"]})
    assert res["rows"] == [
        {"order_line_count": shop_ref.scalar("SELECT COUNT(*) FROM main.order_items")}
    ]


def test_dset_04_hint_never_overrides_sql_ownership(mini_engine: Make, mini_ref: Any) -> None:
    """DSET-04: a metric whose aggregate names a column keeps that column's dataset."""
    engine, run = mini_engine(
        extra_metrics=[metric("pinned_rev", "SUM(orders.amount)", {"dataset": "order_items"})]
    )
    assert engine.metric("pinned_rev")["datasets"] == ["orders"]
    res = run({"metrics": ["pinned_rev"]})
    assert res["rows"] == [{"pinned_rev": mini_ref.scalar("SELECT SUM(amount) FROM orders")}]


def test_dset_05_unknown_dataset_is_invalid_and_compilation_continues() -> None:
    """DSET-05 / ENV-CAR-09: an unknown dataset is invalid_datus_extension; compilation goes
    on with the default, so the same metric also reports count_star_needs_dataset."""
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=mini_yaml(extra_metrics=[metric("lines", "COUNT(*)", {"dataset": "lines"})])
        )
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "metrics[lines]"),
        ("count_star_needs_dataset", "metrics[lines]"),
    ]
