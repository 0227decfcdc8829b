"""Per-key validation of the keys this engine implements (datus-extensions §3, §4;
CHECKLIST JOIN-*, FILL-*, TIME-*, GRAIN-*, DSET-*, MEAS-*, DIM-*)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dosi.ext import DatasetExt, FieldExt, MetricExt, RelationshipExt, read_extensions

INVALID = "invalid_datus_extension"


def read(carrier: Any, data: Any) -> Any:
    text = data if isinstance(data, str) else json.dumps(data)
    return read_extensions(carrier, "obj[x]", [{"vendor_name": "DATUS", "data": text}])


def invalid(carrier: Any, payload: Any, key: str) -> Any:
    res = read(carrier, payload)
    assert [(d.code, d.severity) for d in res.errors] == [(INVALID, "error")], res.diagnostics
    assert res.errors[0].message.startswith(f"`{key}`"), res.errors[0].message
    assert res.payload == type(res.payload)()
    return res.errors[0]


# -- D-JOIN --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["left", "inner"])
def test_join_01_join_type_enum(value: str) -> None:
    """JOIN-01: join_type ∈ {left, inner} on a relationship."""
    res = read("relationship", {"v": "1.0", "join_type": value})
    assert res.payload == RelationshipExt(join_type=value)  # type: ignore[arg-type]
    assert res.diagnostics == ()


def test_join_01_default_is_none_meaning_left() -> None:
    assert read("relationship", {}).payload == RelationshipExt(join_type=None)
    assert read("relationship", {"join_type": None}).payload == RelationshipExt()


@pytest.mark.parametrize("value", ["outer", "INNER", "full", "", 1, True, ["inner"]])
def test_join_05_bad_join_type_is_invalid(value: Any) -> None:
    """JOIN-05: a value outside the enum → invalid_datus_extension naming the key."""
    d = invalid("relationship", {"join_type": value}, "join_type")
    if value == "INNER":
        assert d.candidates == ("inner",)


# -- D-FILL --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("-3", -3), ("0.5", 0.5), ("1e3", 1000.0)])
def test_fill_01_fill_nulls_with_is_a_json_number(text: str, value: float) -> None:
    """FILL-01: fill_nulls_with is a JSON number; ints stay ints, floats are plain floats."""
    res = read("metric", f'{{"fill_nulls_with": {text}}}')
    assert res.diagnostics == ()
    assert isinstance(res.payload, MetricExt)
    assert res.payload.fill_nulls_with == value
    assert type(res.payload.fill_nulls_with) is type(value)


@pytest.mark.parametrize("text", ['"0"', "true", "false", "[0]", "{}", "1e400"])
def test_fill_08_non_number_is_invalid(text: str) -> None:
    """FILL-08: strings, booleans, arrays, objects and non-finite numbers are invalid."""
    invalid("metric", f'{{"fill_nulls_with": {text}}}', "fill_nulls_with")


# -- D-TIME --------------------------------------------------------------------------------


def test_time_01_dataset_time_dimension() -> None:
    """TIME-01: on a dataset, the name of one of its fields."""
    res = read("dataset", {"v": "1.1", "time_dimension": "order_date"})
    assert res.payload == DatasetExt(time_dimension="order_date")
    assert res.diagnostics == ()


@pytest.mark.parametrize("value", ["ship_date", "orders.ship_date", "订单.日期"])
def test_time_01_metric_time_dimension_field_or_dataset_field(value: str) -> None:
    """TIME-01: on a metric, "field" or "dataset.field"."""
    res = read("metric", {"time_dimension": value})
    assert res.payload == MetricExt(time_dimension=value)


@pytest.mark.parametrize("value", ["", " ", " d", 3, True, ["d"], "a.b.c", ".d", "a."])
def test_time_01_bad_metric_time_dimension(value: Any) -> None:
    invalid("metric", {"time_dimension": value}, "time_dimension")


@pytest.mark.parametrize("value", ["", 1, {"field": "d"}])
def test_time_01_bad_dataset_time_dimension(value: Any) -> None:
    invalid("dataset", {"time_dimension": value}, "time_dimension")


# -- D-GRAIN -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grain", ["day", "week", "month", "quarter", "year", "hour", "minute", "second"]
)
def test_grain_02_time_granularity_enum(grain: str) -> None:
    """GRAIN-02: time_granularity ∈ day|week|month|quarter|year on a field, and the sub-day
    hour|minute|second of timestamp columns (issue 22 item 2)."""
    res = read("field", {"time_granularity": grain})
    assert res.payload == FieldExt(time_granularity=grain)  # type: ignore[arg-type]


@pytest.mark.parametrize("grain", ["hours", "Month", "months", 1, None])
def test_grain_02_bad_time_granularity(grain: Any) -> None:
    if grain is None:  # null ≡ absent
        assert read("field", {"time_granularity": None}).diagnostics == ()
        return
    d = invalid("field", {"time_granularity": grain}, "time_granularity")
    if grain == "Month":
        assert d.candidates[0] == "month"


# -- D-DATASET -----------------------------------------------------------------------------


def test_dset_01_dataset_is_a_string() -> None:
    """DSET-01: dataset names a dataset (existence is the compiler's check, DSET-05)."""
    assert read("metric", {"dataset": "chat_record"}).payload == MetricExt(dataset="chat_record")


@pytest.mark.parametrize("value", ["", 1, ["a"], {"name": "a"}, False])
def test_dset_01_bad_dataset(value: Any) -> None:
    invalid("metric", {"dataset": value}, "dataset")


# -- D-MEASURE -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["orders_new_product_amount_sum", "_x", "A1", "m"])
def test_meas_01_measure_name(name: str) -> None:
    """MEAS-01: measure = {"name": <ASCII identifier>}."""
    res = read("metric", {"requires": ["measure"], "measure": {"name": name}})
    assert res.diagnostics == ()
    assert res.payload == MetricExt(measure_name=name)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("orders_sum", "measure"),
        (["x"], "measure"),
        ({}, "measure.name"),
        ({"name": ""}, "measure.name"),
        ({"name": "1abc"}, "measure.name"),
        ({"name": "新品"}, "measure.name"),
        ({"name": "a-b"}, "measure.name"),
        ({"name": "a b"}, "measure.name"),
        ({"name": 5}, "measure.name"),
        ({"name": "ok", "label": "x"}, "measure.label"),
    ],
)
def test_meas_01_bad_measure(value: Any, key: str) -> None:
    """MEAS-01: not an object, missing / non-identifier name, unknown inner key → invalid."""
    invalid("metric", {"requires": ["measure"], "measure": value}, key)


# -- D-DIM ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False])
def test_dim_01_is_dimension_bool(value: bool) -> None:
    """DIM-01: is_dimension is a boolean on a field."""
    res = read("field", {"v": "1.7", "is_dimension": value})
    assert res.payload == FieldExt(is_dimension=value)
    assert res.diagnostics == ()


@pytest.mark.parametrize("value", [0, 1, "true", "false", [True]])
def test_dim_01_non_bool_is_invalid(value: Any) -> None:
    invalid("field", {"is_dimension": value}, "is_dimension")


# -- combined ------------------------------------------------------------------------------


def test_field_carries_both_keys() -> None:
    res = read("field", {"time_granularity": "month", "is_dimension": False})
    assert res.payload == FieldExt(time_granularity="month", is_dimension=False)


def test_metric_carries_every_key() -> None:
    res = read(
        "metric",
        {
            "v": "1.10",
            "requires": ["measure"],
            "fill_nulls_with": 0,
            "time_dimension": "activities.start_date",
            "dataset": "activities",
            "measure": {"name": "act_cnt"},
            "window": {"type": "pop", "offset": "1 month"},
        },
    )
    assert res.diagnostics == ()
    p = res.payload
    assert isinstance(p, MetricExt)
    assert (p.fill_nulls_with, p.time_dimension, p.dataset, p.measure_name) == (
        0,
        "activities.start_date",
        "activities",
        "act_cnt",
    )
    assert p.window is not None and p.window.family == "offset"


def test_null_values_are_absent() -> None:
    res = read("metric", {"window": None, "measure": None, "dataset": None})
    assert res.diagnostics == ()
    assert res.payload == MetricExt()


def test_null_fill_is_invalid() -> None:
    """D-FILL: the value is a JSON number; null is malformed, not absent (reference §3.5)."""
    res = read("metric", {"fill_nulls_with": None})
    assert [d.code for d in res.diagnostics] == ["invalid_datus_extension"]
    assert res.payload == MetricExt()
