"""D-TIME `time_dimension` (issue 3): metric > dataset > single is_time; a bare field
resolves in the metric's datasets first; two axes on one table are two merged branches.

Requirement IDs: TIME-01..05, TIME-07, CORE-FAN-08, TIME-09 (basic: tests/ext/test_ext_engine_modes.py).

Mini orders: order_date / ship_date are
  1: 01-05 / 01-07 (100)   2: 01-31 / 02-02 (50)   3: 02-01 / 02-03 (70)   4: 03-10 / 03-12 (30)
  5: 03-31 / 04-01 (20)    6: 04-01 / 04-02 (40)   7: 04-15 / 05-01 (NULL)
`ship_is_time=True` turns ship_date into a second time field of orders.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import (
    assert_rows_equal,
    by_key,
    dataset,
    field,
    metric,
    mini_yaml,
    model_doc,
    result_rows,
    to_yaml,
)

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError

Make = Callable[..., Any]
SHIP_AXIS = {"time_dimension": "ship_date"}
REV_SHIP = metric("rev_ship", "SUM(orders.amount)", {"time_dimension": "orders.ship_date"})


def by_month(ref: Any, column: str) -> list[tuple]:
    return ref.rows(
        f"SELECT CAST(DATE_TRUNC('month', {column}) AS DATE), SUM(amount) FROM orders GROUP BY 1"
    )


def test_time_02_two_time_fields_and_no_declaration_have_no_primary_time(
    mini_engine: Make,
) -> None:
    """TIME-02/05: zero or several is_time fields and no D-TIME -> no primary time, so
    metric_time is `no_primary_time_dimension`, naming both candidates."""
    engine, _ = mini_engine(ship_is_time=True)
    with pytest.raises(QueryError) as info:
        engine.compile({"metrics": ["revenue"], "group_by": ["metric_time:month"]})
    assert info.value.code == "no_primary_time_dimension"
    assert {"orders.order_date", "orders.ship_date"} <= set(info.value.candidates)
    assert info.value.metrics == ["revenue"]


def test_time_01_dataset_declaration_picks_the_primary_time(
    mini_engine: Make, mini_ref: Any
) -> None:
    """TIME-01/03: a dataset-level `time_dimension` makes metric_time mean that field."""
    engine, run = mini_engine(ship_is_time=True, dataset_ext={"orders": SHIP_AXIS})
    res = run({"metrics": ["revenue"], "group_by": ["metric_time:month"]})
    assert_rows_equal(result_rows(res), by_month(mini_ref, "ship_date"))
    assert engine.datasets()[0]["primary_time_dimension"] == "ship_date"


def test_time_03_metric_declaration_beats_the_dataset(mini_engine: Make, mini_ref: Any) -> None:
    """TIME-03: metric `time_dimension` > dataset `time_dimension` > single is_time."""
    engine, run = mini_engine(
        ship_is_time=True,
        dataset_ext={"orders": {"time_dimension": "order_date"}},
        extra_metrics=[REV_SHIP],
    )
    rev = run({"metrics": ["revenue"], "group_by": ["metric_time:month"]})
    ship = run({"metrics": ["rev_ship"], "group_by": ["metric_time:month"]})
    assert_rows_equal(result_rows(rev), by_month(mini_ref, "order_date"))
    assert_rows_equal(result_rows(ship), by_month(mini_ref, "ship_date"))
    assert engine.metric("rev_ship")["time_dimension"] == "orders.ship_date"


def test_time_03_metric_declaration_beats_single_is_time_inference(
    mini_engine: Make, mini_ref: Any
) -> None:
    """TIME-03: even where inference alone would pick order_date."""
    _, run = mini_engine(
        ship_is_time=True,
        dataset_ext={"orders": {"time_dimension": "order_date"}},
        extra_metrics=[metric("rev_ship2", "SUM(orders.amount)", SHIP_AXIS)],
    )
    res = run({"metrics": ["rev_ship2"], "group_by": ["metric_time:month"]})
    assert_rows_equal(result_rows(res), by_month(mini_ref, "ship_date"))


def test_core_fan_08_two_axes_on_one_table_merge_and_keep_solo_values(
    mini_engine: Make,
) -> None:
    """CORE-FAN-08: revenue (order_date) + rev_ship (ship_date) on orders open two branches
    merged by month; each metric equals what it returns alone. 2024-05 exists only on the
    ship axis (order 7, amount NULL)."""
    engine, run = mini_engine(
        ship_is_time=True,
        dataset_ext={"orders": {"time_dimension": "order_date"}},
        extra_metrics=[REV_SHIP],
    )
    q = {"group_by": ["metric_time:month"]}
    both = by_key(run({"metrics": ["revenue", "rev_ship"], **q}), "metric_time__month")
    alone_rev = by_key(run({"metrics": ["revenue"], **q}), "metric_time__month")
    alone_ship = by_key(run({"metrics": ["rev_ship"], **q}), "metric_time__month")
    assert set(both) == set(alone_rev) | set(alone_ship)
    for month, row in both.items():
        assert row["revenue"] == (alone_rev[month]["revenue"] if month in alone_rev else None)
        assert row["rev_ship"] == (alone_ship[month]["rev_ship"] if month in alone_ship else None)
    assert both["2024-02-01"] == {
        "metric_time__month": "2024-02-01",
        "revenue": 70.0,
        "rev_ship": 120.0,
    }
    assert "FULL OUTER JOIN" in engine.compile({"metrics": ["revenue", "rev_ship"], **q})["sql"]


def test_core_q_07_time_range_filters_each_axis_on_its_own_column(
    mini_engine: Make, mini_ref: Any
) -> None:
    """CORE-Q-07 with D-TIME: a dimension-less range filters revenue by order_date and
    rev_ship by ship_date in the same query."""
    _, run = mini_engine(
        ship_is_time=True,
        dataset_ext={"orders": {"time_dimension": "order_date"}},
        extra_metrics=[REV_SHIP],
    )
    res = run(
        {
            "metrics": ["revenue", "rev_ship"],
            "time_range": {"start": "2024-02-01", "end": "2024-04-01"},
        }
    )
    rev, ship = mini_ref.rows(
        "SELECT SUM(amount) FILTER (WHERE order_date >= '2024-02-01' AND order_date < '2024-04-01'),"
        " SUM(amount) FILTER (WHERE ship_date >= '2024-02-01' AND ship_date < '2024-04-01') "
        "FROM orders"
    )[0]
    assert (rev, ship) == (120.0, 150.0)
    assert res["rows"] == [{"revenue": rev, "rev_ship": ship}]


def test_time_04_bare_field_resolves_in_the_metric_dataset_first(
    mini_db: Any, mini_ref: Any
) -> None:
    """TIME-04: `"time_dimension": "day"` on a refunds metric means refunds.day even though
    orders also has a field `day`."""
    doc = model_doc(
        [
            dataset("orders", ["order_id", "amount", field("day", "order_date", datatype="Date")]),
            dataset(
                "refunds",
                ["refund_id", "refund_amount", field("day", "refund_date", datatype="Date")],
            ),
        ],
        metrics=[
            metric("refunded", "SUM(refunds.refund_amount)", {"time_dimension": "day"}),
            metric("rev", "SUM(orders.amount)", {"time_dimension": "day"}),
        ],
    )
    engine = Engine(model_text=to_yaml(doc))
    assert engine.metric("refunded")["time_dimension"] == "refunds.day"
    assert engine.metric("rev")["time_dimension"] == "orders.day"
    res = engine.execute(
        {"metrics": ["refunded"], "group_by": ["metric_time:month"]}, db_path=mini_db
    )
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows(
            "SELECT CAST(DATE_TRUNC('month', refund_date) AS DATE), SUM(refund_amount) "
            "FROM refunds GROUP BY 1"
        ),
    )


def test_time_04_bare_field_widens_to_the_model(mini_engine: Make, mini_ref: Any) -> None:
    """TIME-04: a bare name absent from the metric's datasets widens to the whole model:
    an order_items metric with `"order_date"` uses orders.order_date through the join."""
    engine, run = mini_engine(
        extra_metrics=[
            metric("units_by_order", "SUM(order_items.qty)", {"time_dimension": "order_date"})
        ]
    )
    assert engine.metric("units_by_order")["time_dimension"] == "orders.order_date"
    res = run({"metrics": ["units_by_order"], "group_by": ["metric_time:month"]})
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows(
            "SELECT CAST(DATE_TRUNC('month', o.order_date) AS DATE), SUM(i.qty) "
            "FROM order_items i LEFT JOIN orders o ON i.order_id = o.order_id GROUP BY 1"
        ),
    )


def test_time_05_primary_time_is_not_inherited_through_joins(mini: Engine) -> None:
    """TIME-05 / reference §2.3: without a declaration, order_items has no primary time."""
    with pytest.raises(QueryError) as info:
        mini.compile({"metrics": ["units"], "group_by": ["metric_time:month"]})
    assert info.value.code == "no_primary_time_dimension"


@pytest.mark.parametrize(
    ("where", "payload"),
    [
        ("dataset", {"time_dimension": "status"}),  # not a time field
        ("dataset", {"time_dimension": "nope"}),  # no such field
        ("metric", {"time_dimension": "orders.ship_date"}),  # is_time: false here
        ("metric", {"time_dimension": "orders.nope"}),
        ("metric", {"time_dimension": 3}),  # not a string
    ],
)
def test_time_07_target_must_be_an_existing_time_field(where: str, payload: dict[str, Any]) -> None:
    """TIME-07: the referenced field must exist and be is_time; else invalid_datus_extension."""
    kw: dict[str, Any] = (
        {"dataset_ext": {"orders": payload}}
        if where == "dataset"
        else {"metric_ext": {"revenue": payload}}
    )
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(**kw))
    path = "datasets[orders]" if where == "dataset" else "metrics[revenue]"
    assert [(d.code, d.path) for d in info.value.issues] == [("invalid_datus_extension", path)]
