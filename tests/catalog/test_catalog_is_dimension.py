"""D-DIM `is_dimension`: the dimensions() listing (issue 3).

Requirement IDs: DIM-01..04, DIM-06, DIM-08, DIM-09, DIM-11..13.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import metric, mini_yaml

from dosi.engine import Engine
from dosi.errors import ModelError

Make = Callable[..., Any]


def dims(engine: Engine, metric_name: str | None = None) -> dict[str, dict[str, Any]]:
    """The field rows by name (metric_time rows, one per time axis, are tested on their own)."""
    return {d["name"]: d for d in engine.dimensions(metric_name) if d["name"] != "metric_time"}


# ------------------------------------------------------------------------------ D-DIM


def test_dim_01_listing_has_role_and_source_for_every_field(mini: Engine) -> None:
    """DIM-01/10: dimensions() lists every field with is_dimension and the rule (`source`)."""
    listed = dims(mini)
    expected_fields = {
        "orders": [
            "order_id",
            "customer_id",
            "order_date",
            "ship_date",
            "amount",
            "discount",
            "status",
            "channel",
        ],
        "customers": ["id", "region", "segment"],
        "order_items": ["order_id", "line", "product", "qty", "price"],
        "refunds": ["refund_id", "order_id", "refund_date", "refund_amount"],
    }
    assert set(listed) == {f"{d}.{f}" for d, fs in expected_fields.items() for f in fs}
    for d in listed.values():
        assert isinstance(d["is_dimension"], bool)
        assert d["source"]


def test_dim_inferred_roles(mini: Engine) -> None:
    """DIM-06 (primary keys), DIM-08 (relationship columns), DIM-09 (SUM-measured columns)
    are not recommended; plain attributes and time fields are."""
    listed = dims(mini)
    role = {k: (v["is_dimension"], v["source"]) for k, v in listed.items()}
    assert role["orders.order_id"] == (False, "inferred:primary_key")
    assert role["customers.id"] == (False, "inferred:primary_key")
    assert role["orders.customer_id"] == (False, "inferred:foreign_key")
    assert role["refunds.order_id"] == (False, "inferred:foreign_key")
    assert role["orders.amount"] == (False, "inferred:measure")
    assert role["order_items.qty"] == (False, "inferred:measure")
    assert role["orders.status"] == (True, "inferred")
    assert role["customers.region"] == (True, "inferred")
    assert role["orders.order_date"] == (True, "inferred:time")


def test_dim_recommended_fields_sort_first(mini: Engine) -> None:
    """Reference §1.7: is_dimension true entries first, then false, each by name."""
    flags = [d["is_dimension"] for d in mini.dimensions()]
    assert flags == sorted(flags, reverse=True)


def test_dim_11_12_13_mentions_do_not_measure(mini_engine: Make) -> None:
    """DIM-11: COUNT(DISTINCT region) leaves region a dimension. DIM-12: MIN/MAX do not
    measure. DIM-13: CASE conditions do not measure, only THEN/ELSE values do."""
    engine, _ = mini_engine(
        extra_metrics=[
            metric("regions", "COUNT(DISTINCT customers.region)"),
            metric("last_channel", "MAX(orders.channel)"),
            metric(
                "paid_price", "SUM(CASE WHEN orders.status = 'paid' THEN order_items.price END)"
            ),
        ]
    )
    listed = dims(engine)
    assert listed["customers.region"]["is_dimension"] is True
    assert listed["orders.channel"]["is_dimension"] is True
    assert listed["orders.status"]["is_dimension"] is True
    assert (listed["order_items.price"]["is_dimension"], listed["order_items.price"]["source"]) == (
        False,
        "inferred:measure",
    )


def test_dim_02_declared_false_is_listed_but_still_groupable(
    mini_engine: Make, mini_ref: Any
) -> None:
    """DIM-02: `false` marks the field not recommended; an explicit group_by still works."""
    engine, run = mini_engine(field_ext={"orders.channel": {"is_dimension": False}})
    d = dims(engine)["orders.channel"]
    assert (d["is_dimension"], d["source"]) == (False, "declared")
    res = run({"metrics": ["order_count"], "group_by": ["orders.channel"]})
    assert res["row_count"] == len(mini_ref.rows("SELECT DISTINCT channel FROM orders"))


def test_dim_03_declared_true_overrides_inference(mini_engine: Make) -> None:
    """DIM-03: `true` recommends a field inference would exclude (a measured column)."""
    engine, _ = mini_engine(field_ext={"orders.amount": {"is_dimension": True}})
    d = dims(engine)["orders.amount"]
    assert (d["is_dimension"], d["source"]) == (True, "declared")


def test_dim_04_declaration_never_changes_the_sql(mini_engine: Make, mini: Engine) -> None:
    """DIM-04: compiled SQL is byte-identical with or without is_dimension."""
    engine, _ = mini_engine(
        field_ext={
            "orders.channel": {"is_dimension": False},
            "orders.amount": {"is_dimension": True},
        }
    )
    q = {"metrics": ["revenue", "refund_total"], "group_by": ["orders.channel", "customers.region"]}
    assert engine.compile(q)["sql"] == mini.compile(q)["sql"]


def test_dim_listing_for_a_metric_keeps_only_reachable_fields(mini: Engine) -> None:
    """Reference §1.7: dimensions(metric) lists the fields reachable many-to-one from the
    metric's dataset (revenue: orders, customers — not order_items or refunds)."""
    listed = mini.dimensions("revenue")
    assert listed[0]["name"] == "metric_time"  # issue 8 item 6: its time axis comes first
    names = {d["name"].split(".")[0] for d in listed[1:]}
    assert names == {"orders", "customers"}


@pytest.mark.parametrize("value", ["yes", 1, "true"])
def test_dim_non_boolean_is_invalid(value: Any) -> None:
    """DIM-01: `is_dimension` is a boolean."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(field_ext={"orders.status": {"is_dimension": value}}))
    assert [d.code for d in info.value.issues] == ["invalid_datus_extension"]
