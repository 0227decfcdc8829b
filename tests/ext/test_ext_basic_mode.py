"""Basic mode (--osi-basic): the DATUS envelope is inert (datus-extensions §5;
CHECKLIST ENV-MODE-02 … ENV-MODE-06, CORE-MODE-02, WM "Engine modes")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dosi.ext import REGISTRY, read_extensions

IGNORED = "ignored_vendor_extension"


def read(carrier: Any, data: Any, mode: Any = "basic") -> Any:
    text = data if isinstance(data, str) else json.dumps(data)
    return read_extensions(carrier, "obj[x]", [{"vendor_name": "DATUS", "data": text}], mode)


def only_warning(res: Any) -> Any:
    assert [(d.code, d.severity) for d in res.diagnostics] == [(IGNORED, "warning")]
    return res.diagnostics[0]


@pytest.mark.parametrize(
    ("carrier", "payload"),
    [
        ("semantic_model", {"v": "1.10"}),
        ("dataset", {"time_dimension": "d"}),
        ("field", {"time_granularity": "month", "is_dimension": False}),
        ("relationship", {"join_type": "inner"}),
        ("metric", {"fill_nulls_with": 0, "dataset": "orders"}),
    ],
)
def test_env_mode_02_every_carrier_gets_one_warning_and_defaults(
    carrier: Any, payload: dict[str, Any]
) -> None:
    """ENV-MODE-02: one ignored_vendor_extension per carrying element; payload = defaults."""
    res = read(carrier, payload)
    only_warning(res)
    assert res.present is True
    assert res.payload == type(res.payload)()
    assert res.diagnostics[0].path == "obj[x]"


@pytest.mark.parametrize(
    ("carrier", "key", "value", "phrase"),
    [
        ("relationship", "join_type", "inner", "LEFT"),
        ("metric", "fill_nulls_with", 0, "S-FAN-6"),
        ("dataset", "time_dimension", "d", "single-is_time inference"),
        ("metric", "time_dimension", "o.d", "single-is_time inference"),
        ("field", "time_granularity", "month", "any query grain"),
        ("metric", "dataset", "orders", "metric SQL only"),
        ("metric", "window", {"type": "pop", "offset": "1 month"}, "plain base aggregate"),
        ("field", "time", {"format": "%Y%m"}, "native date"),
        ("field", "lod", {"expr": "fixed(x)"}, "aggregate_field_dropped"),
        ("relationship", "cardinality", "many_to_many", "many-to-one join"),
        ("metric", "measure", {"name": "m"}, "S-MEASURE-1"),
        ("field", "is_dimension", True, "inferred"),
        ("metric", "params", [], "no parameters"),
        ("metric", "derive", {"type": "compose", "expr": "a"}, "no derivation"),
    ],
)
def test_env_mode_03_warning_names_the_fallback(
    carrier: Any, key: str, value: Any, phrase: str
) -> None:
    """ENV-MODE-03: the warning names the default that applies (registry fallback text)."""
    d = only_warning(read(carrier, {key: value}))
    assert REGISTRY[key].fallback in d.message
    assert phrase in d.message
    assert REGISTRY[key].extension in d.message


def test_env_mode_06_window_metric_warning_says_no_window_derivation() -> None:
    """ENV-MODE-06: a window metric compiles as its plain base aggregate, one warning."""
    d = only_warning(read("metric", {"v": 1, "window": {"type": "pop", "offset": "1 month"}}))
    assert "no window derivation applies" in d.message
    assert "plain base aggregate" in d.message


@pytest.mark.parametrize(
    "data",
    ["not json", "[1]", '{"window": {"type": "bogus"}}', '{"v": "9.0", "join_type": 7}'],
)
def test_env_mode_04_malformed_payload_only_warns(data: str) -> None:
    """ENV-MODE-04: payload not parsed (even malformed), no version diagnostics."""
    res = read("metric", data)
    only_warning(res)
    assert res.payload == type(res.payload)()


def test_env_mode_04_unparseable_metric_payload_uses_generic_text_with_window_note() -> None:
    d = only_warning(read("metric", "{oops"))
    assert "plain Ossie default" in d.message
    assert "no window derivation applies" in d.message
    d = only_warning(read("relationship", "{oops"))
    assert "window" not in d.message


def test_env_mode_02_two_entries_still_one_warning() -> None:
    """Exactly one warning per element even with two DATUS entries (keys merged)."""
    exts = [
        {"vendor_name": "DATUS", "data": '{"fill_nulls_with": 0}'},
        {"vendor_name": "datus", "data": '{"dataset": "o"}'},
    ]
    res = read_extensions("metric", "m", exts, "basic")
    d = only_warning(res)
    assert "D-FILL" in d.message and "D-DATASET" in d.message


def test_other_vendors_are_silent_in_basic_mode_too() -> None:
    res = read_extensions("metric", "m", [{"vendor_name": "SNOWFLAKE", "data": "x"}], "basic")
    assert res.diagnostics == () and res.present is False


def test_semantic_model_and_unknown_keys_text() -> None:
    d = only_warning(read("semantic_model", {"v": "1.10"}))
    assert "no extension keys" in d.message
    d = only_warning(read("metric", {"distinct_state": {}}))
    assert "distinct_state → ignored" in d.message
    d = only_warning(read("metric", {"join_type": "inner"}))
    assert "join_type → ignored" in d.message


def test_env_req_05_silent_keys_hint_against_basic_mode() -> None:
    """ENV-REQ-05: a model with silent keys should not run in basic mode: the hint says so."""
    d = only_warning(read("metric", {"measure": {"name": "m"}}))
    assert d.hint is not None and "silent" in d.hint and "measure" in d.hint
    d = only_warning(read("metric", {"fill_nulls_with": 0}))
    assert d.hint is not None and "silent" not in d.hint


def test_core_mode_02_same_file_valid_in_both_modes() -> None:
    """CORE-MODE-02: the same payload is valid in both modes; only semantics differ."""
    payload = {
        "v": "1.10",
        "requires": ["measure"],
        "measure": {"name": "m"},
        "window": {"type": "rolling", "function": "sum", "periods": 7},
    }
    datus = read("metric", payload, "datus")
    basic = read("metric", payload, "basic")
    assert datus.errors == () and basic.errors == ()
    assert datus.payload != basic.payload
