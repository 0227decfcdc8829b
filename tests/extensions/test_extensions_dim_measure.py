"""D-DIM `is_dimension` (dimensions() listing) and D-MEASURE `measure` (issue 3).

Requirement IDs: DIM-01..04, DIM-06, DIM-08, DIM-09, DIM-11..13, MEAS-01..04, CORE-MEAS-03.
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


# ------------------------------------------------------------------------------ D-MEASURE

NEW = "SUM(CASE WHEN orders.status = '新品' THEN orders.amount END)"
OLD = "SUM(CASE WHEN orders.status = '老品' THEN orders.amount END)"


def named(name: str) -> dict[str, Any]:
    return {"measure": {"name": name}, "requires": ["measure"]}


def test_meas_01_explicit_name_replaces_the_stem(mini_engine: Make) -> None:
    """MEAS-01: `measure.name` names the metric's measure (catalog and SQL alias)."""
    engine, _ = mini_engine(
        extra_metrics=[metric("refunded", "SUM(refunds.refund_amount)", named("refund_sum"))]
    )
    m = engine.metric("refunded")
    assert (m["measures"], m["explicit_measure"]) == (["refund_sum"], "refund_sum")
    sql = engine.compile({"metrics": ["revenue", "refunded"], "group_by": ["orders.status"]})["sql"]
    assert "AS refund_sum" in sql
    assert "refunds_refund_amount_sum" not in sql


def test_meas_01_name_does_not_change_values(mini_engine: Make, mini_run: Any) -> None:
    """MEAS-01: the name is a label; results equal the unnamed twin's."""
    _, run = mini_engine(
        extra_metrics=[metric("refunded", "SUM(refunds.refund_amount)", named("refund_sum"))]
    )
    q = {"group_by": ["customers.segment"]}
    a = run({"metrics": ["revenue", "refunded"], **q})["rows"]
    b = mini_run({"metrics": ["revenue", "refund_total"], **q})["rows"]
    assert [(r["segment"], r["refunded"]) for r in a] == [
        (r["segment"], r["refund_total"]) for r in b
    ]


def test_core_meas_03_explicit_names_resolve_the_non_ascii_collision(
    mini_engine: Make, mini_db: Any
) -> None:
    """CORE-MEAS-03 / MEAS-01: naming the measures lets the two non-ASCII twins coexist."""
    engine, run = mini_engine(
        extra_metrics=[
            metric("new_goods", NEW, named("new_amt")),
            metric("old_goods", OLD, named("old_amt")),
        ]
    )
    assert engine.metric("new_goods")["measures"] == ["new_amt"]
    assert engine.metric("old_goods")["measures"] == ["old_amt"]
    assert run({"metrics": ["new_goods", "old_goods"]})["rows"] == [
        {"new_goods": None, "old_goods": None}
    ]


def test_meas_02_single_aggregate_only() -> None:
    """MEAS-02: `measure` applies only to single-aggregate metrics (not a ratio)."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(metric_ext={"avg_order": named("avg_m")}))
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "metrics[avg_order]")
    ]


def test_meas_03_textual_twin_shares_the_declared_name(mini_engine: Make) -> None:
    """MEAS-03: dedup stays keyed by signature — revenue, an undeclared twin of the named
    SUM(orders.amount), reads the declared name, and the ratio reusing it too."""
    engine, run = mini_engine(
        extra_metrics=[metric("gross", "SUM(orders.amount)", named("gross_amount"))]
    )
    assert engine.metric("revenue")["measures"] == ["gross_amount"]
    assert engine.metric("avg_order")["measures"][0] == "gross_amount"
    row = run({"metrics": ["revenue", "gross", "net_revenue"]})["rows"][0]
    assert row == {"revenue": 310.0, "gross": 310.0, "net_revenue": 300.0}


def test_meas_04_one_name_on_two_signatures_collides() -> None:
    """MEAS-04: one explicit name on two different aggregates is measure_name_collision."""
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=mini_yaml(
                extra_metrics=[
                    metric("a", "SUM(orders.amount)", named("m")),
                    metric("b", "SUM(orders.discount)", named("m")),
                ]
            )
        )
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("measure_name_collision", "metrics[b]")
    ]


def test_meas_04_two_names_on_one_signature_collide() -> None:
    """MEAS-04: two explicit names for the same aggregate collide loudly."""
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=mini_yaml(
                extra_metrics=[
                    metric("a", "SUM(orders.amount)", named("m1")),
                    metric("b", "SUM(orders.amount)", named("m2")),
                ]
            )
        )
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("measure_name_collision", "metrics[b]")
    ]


def test_meas_04_declared_name_equal_to_another_measure_stem_collides() -> None:
    """MEAS-04: naming SUM(orders.amount) `orders_discount_sum` — the stem net_revenue already
    uses for SUM(orders.discount) — is one name on two signatures. (It used to rename the
    discount measure silently, making net_revenue read SUM(amount) - SUM(amount).)"""
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=mini_yaml(
                extra_metrics=[metric("gross", "SUM(orders.amount)", named("orders_discount_sum"))]
            )
        )
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("measure_name_collision", "metrics[gross]")
    ]


@pytest.mark.parametrize("payload", ["amt", {"name": ""}, {"name": "a", "zz": 1}, {}])
def test_meas_01_payload_shape(payload: Any) -> None:
    """MEAS-01 / reference §3.11: the payload is an object {"name": <non-empty identifier>}."""
    with pytest.raises(ModelError) as info:
        Engine(
            model_text=mini_yaml(
                metric_ext={"revenue": {"measure": payload, "requires": ["measure"]}}
            )
        )
    assert [d.code for d in info.value.issues] == ["invalid_datus_extension"]
