"""The compiled model is complete and read-only once built (issue 10 item 5: IR frozen ->
query resolution -> plan). Every mapping of the IR is a read-only view, every sequence a
tuple, and no attribute can be rebound: a planner bug cannot corrupt the model the next
query sees. The shop model exercises every compile pass (D-DIM roles, measure names, windows).
Requirement IDs: D-DIM (roles), S-MEASURE-1 (measure stems).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest
from enginekit import SHOP_MODEL

from dosi.compiler.model_compiler import compile_model_text
from dosi.ir.model import ModelIr


@pytest.fixture(scope="module")
def model() -> ModelIr:
    return compile_model_text(SHOP_MODEL.read_text())


def test_model_attributes_cannot_be_rebound(model: ModelIr) -> None:
    for name in ("metrics", "datasets", "warnings", "dimension_roles", "source_version"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(model, name, None)


def test_model_mappings_are_read_only(model: ModelIr) -> None:
    mappings: list[Mapping] = [
        model.datasets,
        model.metrics,
        model.measures,
        model.dimension_roles,
        model.unavailable_metrics,
        *(d.fields for d in model.datasets.values()),
    ]
    for m in mappings:
        with pytest.raises(TypeError):
            m["x"] = None  # type: ignore[index]
    assert isinstance(model.relationships, tuple) and isinstance(model.warnings, tuple)


def test_model_is_complete_at_construction(model: ModelIr) -> None:
    """What was once filled in after construction (roles, version, warnings) is there."""
    shop = model.datasets["orders"]
    assert model.dimension_roles[("orders", "amount")] == (False, "declared")
    assert model.dimension_roles[("orders", "order_id")] == (False, "primary_key")
    assert model.dimension_roles[("orders", "customer_id")] == (False, "relationship_column")
    assert model.dimension_roles[("orders", "order_date")] == (True, "time")
    assert model.dimension_roles[("orders", "channel")] == (True, "default")
    assert model.source_version == "0.2.0.dev0"
    assert shop.primary_time == "order_date"
    assert model.metrics["revenue"].measures == ("orders_amount_sum",)
    assert {r.name for r in model.relationships} >= {"orders_to_customers"}


def test_a_variant_is_a_copy(model: ModelIr) -> None:
    """dataclasses.replace (attribution's hidden metrics) gives a new, equally frozen model."""
    extra = dict(model.metrics)
    extra["revenue_copy"] = dataclasses.replace(model.metrics["revenue"], name="revenue_copy")
    copy = dataclasses.replace(model, metrics=extra)
    assert "revenue_copy" in copy.metrics and "revenue_copy" not in model.metrics
    with pytest.raises(TypeError):
        copy.metrics["y"] = None  # type: ignore[index]
