"""D-MEASURE `measure`: declared measure names (issue 3).

Requirement IDs: MEAS-01..04, CORE-MEAS-03.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import metric, mini_yaml

from dosi.engine import Engine
from dosi.errors import ModelError

Make = Callable[..., Any]


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
