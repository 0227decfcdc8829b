"""`requires` (datus-extensions §2 requires, §2.1; CHECKLIST ENV-REQ-01 … ENV-REQ-05,
ENV-ROAD-01) and the not-implemented / misplaced key warnings."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from dosi.ext import FieldExt, MetricExt, RelationshipExt, read_extensions
from dosi.ext.payloads import PAYLOAD_FIELDS
from dosi.ext.registry import REGISTRY

INVALID = "invalid_datus_extension"
REQUIRED = "datus_ext_key_required"
MISSING = "datus_ext_requires_missing"
NOT_IMPL = "datus_ext_key_not_implemented"
MISPLACED = "datus_ext_key_misplaced"


def read(carrier: Any, data: Any, mode: Any = "datus") -> Any:
    text = data if isinstance(data, str) else json.dumps(data)
    return read_extensions(carrier, "obj[x]", [{"vendor_name": "DATUS", "data": text}], mode)


def codes(res: Any) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in res.diagnostics]


@pytest.mark.parametrize("requires", ["measure", {"measure": True}, 1, [1, "measure"], [None]])
def test_env_req_01_requires_must_be_array_of_strings(requires: Any) -> None:
    """ENV-REQ-01: `requires` is an array of key names; anything else is invalid."""
    res = read("metric", {"requires": requires, "measure": {"name": "m"}})
    assert codes(res)[0] == (INVALID, "error")
    assert "`requires`" in res.diagnostics[0].message
    assert res.payload == MetricExt(measure_name="m")


def test_env_req_01_string_entries_of_a_malformed_requires_still_count() -> None:
    """Fail closed: a string entry in a malformed `requires` is still enforced."""
    res = read("metric", {"requires": [1, "distinct_state"]})
    assert codes(res) == [(INVALID, "error"), (REQUIRED, "error")]


@pytest.mark.parametrize("key", ["distinct_state", "made_up"])
def test_env_req_02_unknown_required_key_is_an_error(key: str) -> None:
    """ENV-REQ-02 / ENV-ROAD-01: a listed key this engine does not know → key_required, whether
    or not it is present in the payload."""
    for payload in ({"requires": [key]}, {"requires": [key], key: {"x": 1}}):
        res = read("metric", payload)
        assert codes(res) == [(REQUIRED, "error")]
        assert f'"{key}"' in res.diagnostics[0].message
        assert res.diagnostics[0].candidates == (key,)


def test_env_road_01_roadmap_keys_ignored_unless_required() -> None:
    """ENV-ROAD-01: distinct_state is not implemented: ignored when not listed."""
    res = read("metric", {"distinct_state": {"over": "snapshot_date"}})
    assert res.diagnostics == ()
    res = read("field", {"distinct_state": True})
    assert res.diagnostics == ()


@pytest.mark.parametrize(
    ("carrier", "key", "value"),
    [
        ("field", "time", {"format": "%Y%m%d"}),
        ("relationship", "cardinality", "many_to_many"),
        ("metric", "dataset", "orders"),
    ],
)
def test_env_req_02_registered_but_unimplemented_required_key_is_an_error(
    carrier: Any, key: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENV-REQ-02: a listed key registered but not implemented here → key_required (and no
    not-implemented / requires_missing warnings: the error replaces them). Every registered
    key is implemented now, so the engine is made to lack one, as an older engine would."""
    monkeypatch.setitem(REGISTRY, key, replace(REGISTRY[key], implemented=False))
    monkeypatch.delitem(PAYLOAD_FIELDS, (carrier, key))
    res = read(carrier, {"v": "1.10", "requires": [key], key: value})
    assert codes(res) == [(REQUIRED, "error")]
    assert f'"{key}"' in res.diagnostics[0].message
    assert "does not implement" in res.diagnostics[0].message


def test_env_req_02_required_implemented_key_absent_from_payload_is_fine() -> None:
    """Every registered key is implemented since issue 11 (params): requiring one is no error."""
    res = read("metric", {"requires": ["params"]})
    assert codes(res) == []


@pytest.mark.parametrize(
    ("carrier", "payload", "expected"),
    [
        (
            "metric",
            {"requires": ["measure"], "measure": {"name": "m"}},
            MetricExt(measure_name="m"),
        ),
        ("metric", {"requires": ["window", "measure"]}, MetricExt()),
        (
            "relationship",
            {"requires": ["join_type"], "join_type": "inner"},
            RelationshipExt(join_type="inner"),
        ),
        ("field", {"requires": ["v", "requires", "is_dimension"]}, FieldExt()),
        ("field", {"requires": ["join_type"]}, FieldExt()),
        ("metric", {"requires": []}, MetricExt()),
    ],
)
def test_env_req_02_implemented_required_keys_are_fine(
    carrier: Any, payload: dict[str, Any], expected: Any
) -> None:
    """Listing keys this engine implements is silent."""
    res = read(carrier, payload)
    assert res.diagnostics == ()
    assert res.payload == expected


def test_env_req_02_required_key_present_on_a_carrier_that_does_not_read_it() -> None:
    """A listed, present key this engine would drop on this carrier → key_required."""
    res = read("metric", {"requires": ["join_type"], "join_type": "inner"})
    assert codes(res) == [(REQUIRED, "error")]
    assert "not read on a metric" in res.diagnostics[0].message


@pytest.mark.parametrize(
    ("carrier", "payload", "key"),
    [
        ("metric", {"measure": {"name": "m"}}, "measure"),
        ("metric", {"v": "1.4", "requires": ["window"], "measure": {"name": "m"}}, "measure"),
    ],
)
def test_env_req_04_silent_implemented_key_without_requires_warns(
    carrier: Any, payload: dict[str, Any], key: str
) -> None:
    """ENV-REQ-04: a non-empty silent key not in requires → warning, even without v; the key
    still applies (the model compiles)."""
    res = read(carrier, payload)
    assert codes(res) == [(MISSING, "warning")]
    assert f"`{key}`" in res.diagnostics[0].message
    assert res.diagnostics[0].hint == f'add it to the entry: "requires": ["{key}"]'
    assert res.payload == MetricExt(measure_name="m")


@pytest.mark.parametrize(
    ("carrier", "key", "value"),
    [("field", "time", {"format": "%Y"}), ("relationship", "cardinality", "many_to_many")],
)
def test_env_req_04_silent_unimplemented_key_warns_twice(
    carrier: Any, key: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unimplemented silent key, not required: not_implemented + requires_missing warnings.
    Every silent key is implemented now, so the engine is made to lack one (its payload
    field removed), as an engine without the key would read it."""
    monkeypatch.delitem(PAYLOAD_FIELDS, (carrier, key))
    res = read(carrier, {key: value})
    assert codes(res) == [(NOT_IMPL, "warning"), (MISSING, "warning")]
    assert all(f"`{key}`" in d.message for d in res.diagnostics)


@pytest.mark.parametrize("value", [None, {}, [], ""])
def test_env_req_04_empty_silent_key_does_not_warn_requires_missing(value: Any) -> None:
    """Only a present, non-empty silent extension needs `requires`."""
    res = read("field", {"time": value})
    assert MISSING not in [d.code for d in res.diagnostics]


def test_env_req_04_measure_invalid_but_present_still_warns_requires_missing() -> None:
    res = read("metric", {"measure": {"name": "9bad"}})
    assert codes(res) == [(INVALID, "error"), (MISSING, "warning")]


def test_env_req_05_basic_mode_does_not_read_requires() -> None:
    """ENV-REQ-05: basic mode never reads requires: only ignored_vendor_extension."""
    res = read("field", {"requires": ["time", "made_up"], "time": {"format": "%Y"}}, "basic")
    assert codes(res) == [("ignored_vendor_extension", "warning")]


@pytest.mark.parametrize(
    ("carrier", "key", "value", "fallback_word"),
    [
        ("field", "lod", {"expr": "fixed(revenue, orders.user_id)"}, "aggregate_field_dropped"),
        ("metric", "dataset", "orders", "ownership"),
    ],
)
def test_not_implemented_key_warns_with_impact_and_fallback(
    carrier: Any, key: str, value: Any, fallback_word: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A present, unimplemented, non-required key → datus_ext_key_not_implemented naming the
    key, its impact and the fallback (from the registry); the engine is made to lack the key
    (its payload field removed), as an engine without it would read the entry."""
    monkeypatch.delitem(PAYLOAD_FIELDS, (carrier, key))
    res = read(carrier, {key: value})
    assert codes(res) == [(NOT_IMPL, "warning")]
    msg = res.diagnostics[0].message
    assert f"`{key}`" in msg and "ignore impact: degraded" in msg and fallback_word in msg


@pytest.mark.parametrize(
    ("carrier", "key", "value"),
    [
        ("metric", "join_type", "inner"),
        ("relationship", "window", {"type": "pop", "offset": "1 month"}),
        ("dataset", "time_granularity", "day"),
        ("semantic_model", "time_dimension", "d"),
        ("semantic_model", "cardinality", "many_to_many"),
        ("field", "time_dimension", "d"),
        ("metric", "lod", {"expr": "fixed(x)"}),
    ],
)
def test_registered_key_on_the_wrong_carrier_is_ignored_with_a_warning(
    carrier: Any, key: str, value: Any
) -> None:
    """A registered key on a carrier that does not read it is ignored, with a warning naming
    where it belongs (never validated, never applied)."""
    res = read(carrier, {key: value})
    assert codes(res) == [(MISPLACED, "warning")]
    assert f"`{key}`" in res.diagnostics[0].message
    assert res.payload == type(res.payload)()
