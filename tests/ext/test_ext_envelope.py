"""The DATUS envelope (datus-extensions §2, §5; CHECKLIST ENV-CAR-01 … ENV-CAR-10)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from dosi.ext import (
    DatasetExt,
    FieldExt,
    MetricExt,
    ModelExt,
    RelationshipExt,
    read_extensions,
)

INVALID = "invalid_datus_extension"


def read(carrier: Any, data: Any, vendor: str = "DATUS", mode: Any = "datus") -> Any:
    text = data if isinstance(data, str) else json.dumps(data)
    return read_extensions(carrier, "obj[x]", [{"vendor_name": vendor, "data": text}], mode)


def codes(res: Any) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in res.diagnostics]


@pytest.mark.parametrize("vendor", ["DATUS", "datus", "Datus", "dAtUs"])
def test_env_car_01_vendor_matched_case_insensitively(vendor: str) -> None:
    """ENV-CAR-01: canonical "DATUS", matched case-insensitively (historical "datus")."""
    res = read("relationship", {"join_type": "inner"}, vendor=vendor)
    assert res.present is True
    assert res.payload == RelationshipExt(join_type="inner")
    assert res.diagnostics == ()


@pytest.mark.parametrize("vendor", ["SNOWFLAKE", "COMMON", "DATUS2", " DATUS", "DBT"])
def test_env_car_07_other_vendors_ignored(vendor: str) -> None:
    """ENV-CAR-07: any other vendor is ignored, even with a malformed payload."""
    res = read("relationship", "not json", vendor=vendor)
    assert res.present is False
    assert res.payload == RelationshipExt()
    assert res.diagnostics == ()


@pytest.mark.parametrize(
    ("carrier", "default"),
    [
        ("semantic_model", ModelExt()),
        ("dataset", DatasetExt()),
        ("field", FieldExt()),
        ("relationship", RelationshipExt()),
        ("metric", MetricExt()),
    ],
)
@pytest.mark.parametrize("exts", [None, []])
def test_env_car_05_absent_extension_gives_defaults(carrier: Any, default: Any, exts: Any) -> None:
    """ENV-CAR-05: no extension → Ossie defaults, not present, no diagnostics."""
    res = read_extensions(carrier, "obj[x]", exts)
    assert (res.present, res.payload, res.diagnostics) == (False, default, ())


def test_env_car_02_data_decodes_to_one_object() -> None:
    """ENV-CAR-02: `data` is a JSON string decoding to a single object (the payload)."""
    res = read("metric", '{"fill_nulls_with": 0}')
    assert res.payload == MetricExt(fill_nulls_with=0)
    assert res.keys == ("fill_nulls_with",)


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "",
        "[1, 2]",
        '"a string"',
        "42",
        "null",
        '{"fill_nulls_with": 0',
        '{"fill_nulls_with": NaN}',
        '{"fill_nulls_with": Infinity}',
        '{"join_type": "left", "join_type": "inner"}',
    ],
)
def test_env_car_08_malformed_payload_is_invalid(data: str) -> None:
    """ENV-CAR-08: not JSON / not an object (strict JSON: NaN, Infinity and duplicate keys
    rejected) → invalid_datus_extension; defaults apply (ENV-CAR-09)."""
    res = read("relationship", data)
    assert res.present is True
    assert codes(res) == [(INVALID, "error")]
    assert res.payload == RelationshipExt()
    assert res.diagnostics[0].path == "obj[x]"
    assert "custom_extensions[0].data" in res.diagnostics[0].message


@pytest.mark.parametrize("data", [{"join_type": "inner"}, None, 5])
def test_env_car_02_data_must_be_a_string(data: Any) -> None:
    """ENV-CAR-02: Ossie's `data` is a string; an object / null / number is invalid."""
    res = read_extensions("relationship", "r", [{"vendor_name": "DATUS", "data": data}])
    assert codes(res) == [(INVALID, "error")]
    assert "JSON string" in res.diagnostics[0].message


def test_env_car_03_second_datus_entry_is_invalid_first_still_read() -> None:
    """ENV-CAR-03: at most one DATUS entry per object; the first is read."""
    exts = [
        {"vendor_name": "SNOWFLAKE", "data": "{}"},
        {"vendor_name": "DATUS", "data": '{"join_type": "inner"}'},
        {"vendor_name": "datus", "data": '{"join_type": "left"}'},
    ]
    res = read_extensions("relationship", "relationships[r]", exts)
    assert codes(res) == [(INVALID, "error")]
    assert "custom_extensions[2]" in res.diagnostics[0].message
    assert res.payload == RelationshipExt(join_type="inner")


def test_env_car_06_unknown_payload_keys_ignored() -> None:
    """ENV-CAR-06: unknown keys are ignored (forward compatibility), no diagnostics."""
    res = read("metric", {"fill_nulls_with": 1, "distinct_state": {"x": 1}, "future": [1]})
    assert res.diagnostics == ()
    assert res.payload == MetricExt(fill_nulls_with=1)
    assert res.keys == ("fill_nulls_with", "distinct_state", "future")


def test_env_car_04_v_and_requires_are_envelope_keys_not_payload_keys() -> None:
    """ENV-CAR-04: `v` and `requires` are reserved envelope keys."""
    res = read("metric", {"v": "1.0", "requires": [], "fill_nulls_with": 2})
    assert res.keys == ("fill_nulls_with",)
    assert res.declared_version == "1.0"
    assert res.diagnostics == ()


def test_env_car_09_compilation_continues_and_reports_every_problem() -> None:
    """ENV-CAR-09: one pass reports every problem; good keys still apply."""
    res = read(
        "metric",
        {
            "fill_nulls_with": "zero",
            "dataset": 3,
            "time_dimension": "orders.order_date",
            "window": {"type": "pop", "offset": "0 month"},
        },
    )
    assert [d.code for d in res.errors] == [INVALID, INVALID, INVALID]
    assert res.payload == MetricExt(time_dimension="orders.order_date")
    messages = " ".join(d.message for d in res.errors)
    for key in ("`fill_nulls_with`", "`dataset`", "`window.offset`"):
        assert key in messages


def test_env_car_10_semantic_model_carrier_runs_the_gate() -> None:
    """ENV-CAR-10: the SemanticModel carrier has no keys but still runs the envelope gate."""
    assert read("semantic_model", {"v": "1.10"}).diagnostics == ()
    res = read("semantic_model", {"v": "3.0"})
    assert codes(res) == [("unsupported_datus_ext_version", "error")]
    res = read("semantic_model", {"v": "x"})
    assert codes(res) == [(INVALID, "error")]
    res = read("semantic_model", "[]")
    assert codes(res) == [(INVALID, "error")]
    assert read("semantic_model", {}).payload == ModelExt()


@dataclass
class _PydanticLike:
    vendor_name: str
    data: str


def test_entries_may_be_objects_with_attributes() -> None:
    """The loader may pass model objects instead of dicts (duck typing on vendor_name/data)."""
    res = read_extensions("field", "f", [_PydanticLike("DATUS", '{"is_dimension": false}')])
    assert res.payload == FieldExt(is_dimension=False)


def test_bad_carrier_or_mode_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        read_extensions("table", "x", [])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        read_extensions("metric", "x", [], mode="strict")  # type: ignore[arg-type]


def test_diagnostics_carry_the_object_path() -> None:
    res = read_extensions(
        "metric", "metrics[revenue_mom]", [{"vendor_name": "DATUS", "data": '{"dataset": 1}'}]
    )
    assert res.diagnostics[0].path == "metrics[revenue_mom]"
    assert res.diagnostics[0].to_dict()["path"] == "metrics[revenue_mom]"
