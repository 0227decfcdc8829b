"""The envelope version gate (datus-extensions §2 `v`; CHECKLIST ENV-V-01 … ENV-V-10)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dosi.ext import MetricExt, RelationshipExt, read_extensions

INVALID = "invalid_datus_extension"
UNSUPPORTED = "unsupported_datus_ext_version"
AHEAD = "datus_ext_version_ahead"
NEWER = "datus_ext_key_newer_than_declared"


def read(carrier: Any, data: Any, mode: Any = "datus") -> Any:
    text = data if isinstance(data, str) else json.dumps(data)
    return read_extensions(carrier, "obj[x]", [{"vendor_name": "DATUS", "data": text}], mode)


def codes(res: Any) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in res.diagnostics]


@pytest.mark.parametrize(
    ("v_json", "declared"),
    [
        ('"1.0"', "1.0"),
        ('"1.1"', "1.1"),
        ('"1.9"', "1.9"),
        ('"1.10"', "1.10"),
        ('"1"', "1.0"),  # a bare major string reads as 1.0, as the reference engine does
        ("1", "1.0"),
        ("1.0", "1.0"),
        ("1.1", "1.1"),
        ("1.9", "1.9"),
    ],
)
def test_env_v_01_02_accepted_forms(v_json: str, declared: str) -> None:
    """ENV-V-01/02: canonical string, JSON number, bare integer 1 = 1.0."""
    res = read("relationship", f'{{"v": {v_json}, "join_type": "left"}}')
    assert res.declared_version == declared
    assert res.payload == RelationshipExt(join_type="left")
    assert res.diagnostics == ()


@pytest.mark.parametrize(
    ("v_json", "suggested"),
    [("1.10", "1.10"), ("1.00", "1.0"), ("1.25", "1.25"), ("1.05", "1.5"), ("2.10", "2.10")],
)
def test_env_v_03_number_with_two_decimals_rejected_with_string_hint(
    v_json: str, suggested: str
) -> None:
    """ENV-V-03: ≥2 decimals in a JSON number → invalid, hint to use the string form."""
    res = read("relationship", f'{{"v": {v_json}, "join_type": "inner"}}')
    assert codes(res) == [(INVALID, "error")]
    d = res.diagnostics[0]
    assert d.message.startswith(f"`v` {v_json} ")
    assert d.hint == f'write the version as a string, e.g. "v": "{suggested}"'
    # keys are still read (ENV-CAR-09); no version comparison happens.
    assert res.payload == RelationshipExt(join_type="inner")
    assert res.declared_version is None


def test_env_v_03_one_point_ten_hint_is_the_string_1_10() -> None:
    res = read("metric", '{"v": 1.10}')
    assert res.diagnostics[0].hint == 'write the version as a string, e.g. "v": "1.10"'


@pytest.mark.parametrize("v_json", ["null"])
def test_env_v_04_absent_or_null_is_silent(v_json: str) -> None:
    """ENV-V-04: v absent or null → silent, even with keys from any version."""
    for data in (
        '{"lod_x": 1, "window": {"type": "pop", "offset": "1 week"}}',
        f'{{"v": {v_json}, "window": {{"type": "pop", "offset": "1 week"}}}}',
    ):
        res = read("metric", data)
        assert res.diagnostics == ()
        assert res.declared_version is None
        assert isinstance(res.payload, MetricExt) and res.payload.window is not None


@pytest.mark.parametrize(
    "v_json",
    [
        '"v1.1"',
        '"1.1.0"',
        '"1.x"',
        '" 1.1"',
        '"1.01"',
        '"01.1"',
        '""',
        '"-1.0"',
        "true",
        "false",
        "[1, 1]",
        '{"major": 1}',
        "1e0",
        "1.0e1",
    ],
)
def test_env_v_05_malformed_v_is_invalid(v_json: str) -> None:
    """ENV-V-05: bad string, wrong JSON type (bool is not a number), exponent → invalid."""
    res = read("metric", f'{{"v": {v_json}, "fill_nulls_with": 0}}')
    assert codes(res) == [(INVALID, "error")]
    assert res.diagnostics[0].message.startswith("`v`")
    assert res.payload == MetricExt(fill_nulls_with=0)


@pytest.mark.parametrize("v_json", ['"0.9"', '"0.0"', "0", "0.5", "-1", "-1.5"])
def test_env_v_06_below_one_is_unsupported(v_json: str) -> None:
    """ENV-V-06: v below 1.0 → unsupported_datus_ext_version; nothing is read."""
    res = read("metric", f'{{"v": {v_json}, "fill_nulls_with": 0, "dataset": 5}}')
    assert codes(res) == [(UNSUPPORTED, "error")]
    assert "below 1.0" in res.diagnostics[0].message
    assert res.payload == MetricExt()


@pytest.mark.parametrize("v_json", ['"2.0"', '"2.11"', "2", "3.1", '"10.0"'])
def test_env_v_06_future_major_is_unsupported_blanket_rejection(v_json: str) -> None:
    """ENV-V-06: a future MAJOR is the only blanket rejection: payload not read at all."""
    res = read("metric", f'{{"v": {v_json}, "fill_nulls_with": "bad", "measure": {{}}}}')
    assert codes(res) == [(UNSUPPORTED, "error")]
    assert res.payload == MetricExt()
    assert "major" in res.diagnostics[0].message


def test_env_v_07_minor_ahead_warns_naming_dropped_keys() -> None:
    """ENV-V-07: newer minor → warning naming the keys this engine does not know; every
    known key still applies."""
    res = read(
        "metric",
        {"v": "1.13", "distinct_state": {"over": "d"}, "fill_nulls_with": 0, "zzz": 1},
    )
    assert codes(res) == [(AHEAD, "warning")]
    d = res.diagnostics[0]
    assert "distinct_state" in d.message and "zzz" in d.message
    assert "fill_nulls_with" not in d.message
    assert d.candidates == ("distinct_state", "zzz")
    assert res.payload == MetricExt(fill_nulls_with=0)
    assert res.declared_version == "1.13"


def test_env_v_07_minor_ahead_without_unknown_keys() -> None:
    res = read("relationship", {"v": "1.99", "join_type": "inner"})
    assert codes(res) == [(AHEAD, "warning")]
    assert "nothing is dropped" in res.diagnostics[0].message
    assert res.payload == RelationshipExt(join_type="inner")


def test_env_v_07_ahead_with_a_number_form() -> None:
    res = read("relationship", '{"v": 1.9}')
    assert res.diagnostics == ()  # 1.9 < 1.10: not ahead
    assert read("semantic_model", {"v": "1.13"}).diagnostics[0].code == AHEAD


@pytest.mark.parametrize(
    ("carrier", "payload", "key", "since"),
    [
        (
            "metric",
            {"v": "1.0", "window": {"type": "cumulative", "function": "sum"}},
            "window",
            "1.2",
        ),
        (
            "metric",
            {"v": "1.1", "measure": {"name": "m"}, "requires": ["measure"]},
            "measure",
            "1.4",
        ),
        ("field", {"v": "1.6", "is_dimension": True}, "is_dimension", "1.7"),
        ("dataset", {"v": "1.0", "time_dimension": "d"}, "time_dimension", "1.1"),
        ("field", {"v": 1, "time_granularity": "month"}, "time_granularity", "1.1"),
        ("metric", {"v": 1, "dataset": "orders"}, "dataset", "1.1"),
    ],
)
def test_env_v_08_key_newer_than_declared_warns_but_is_honored(
    carrier: Any, payload: dict[str, Any], key: str, since: str
) -> None:
    """ENV-V-08: a key newer than the declared v → warning; the key still applies."""
    res = read(carrier, payload)
    assert codes(res) == [(NEWER, "warning")]
    d = res.diagnostics[0]
    assert f"`{key}`" in d.message and since in d.message
    assert d.hint == f'declare "v": "{since}" (or newer) on this entry'
    assert res.payload != type(res.payload)()  # honored


def test_env_v_08_window_in_family_features_newer_than_declared() -> None:
    """ENV-V-08 for in-family window growth (§7 1.3, 1.9): rank needs 1.3, nulls 1.9."""
    res = read("metric", {"v": "1.2", "window": {"rank": {"function": "rank"}}})
    assert codes(res) == [(NEWER, "warning")]
    assert "`window.rank`" in res.diagnostics[0].message
    res = read(
        "metric",
        {"v": "1.3", "window": {"rank": {"function": "rank", "order": {"nulls": "last"}}}},
    )
    assert codes(res) == [(NEWER, "warning")]
    assert "`window.order.nulls`" in res.diagnostics[0].message
    res = read(
        "metric",
        {"v": "1.0", "window": {"frame": {"function": "count", "scope": "partition"}}},
    )
    assert [d.message.split("`")[1] for d in res.diagnostics] == ["window", "window.frame.scope"]
    res = read(
        "metric",
        {
            "v": "1.2",
            "window": {
                "offset": {"count": 1, "granularity": "month", "direction": "forward"},
                "calculation": "value",
            },
        },
    )
    assert "`window.offset.direction`" in res.diagnostics[0].message
    res = read(
        "metric", {"v": "1.2", "window": {"type": "rolling", "function": "var_pop", "periods": 2}}
    )
    assert "W2" in res.diagnostics[0].message


def test_env_v_08_no_warning_for_invalid_key() -> None:
    """A key that failed validation is not honored, so no 'still honored' warning."""
    res = read("metric", {"v": "1.0", "window": {"type": "nope"}})
    assert codes(res) == [(INVALID, "error")]


@pytest.mark.parametrize(
    "payload",
    [
        {"v": "1.10", "window": {"rank": {"function": "rank", "order": {"nulls": "first"}}}},
        {"v": "1.9", "window": {"frame": {"function": "count", "scope": "partition"}}},
        {"v": "1.4", "measure": {"name": "x"}, "requires": ["measure"], "fill_nulls_with": 0},
        {"v": "1.2", "window": {"type": "pop", "offset": "1 year"}},
        {"v": "1.1", "time_dimension": "a.b", "dataset": "a"},
    ],
)
def test_env_v_09_older_or_equal_minor_with_keys_in_range_is_silent(
    payload: dict[str, Any],
) -> None:
    """ENV-V-09: a minor ≤ ours whose keys are all in range → silent."""
    assert read("metric", payload).diagnostics == ()


def test_env_v_10_version_is_per_entry_not_per_document() -> None:
    """ENV-V-10: a model-level v is not a default for other objects: each call gates only
    its own entry (a metric without v stays silent even if the model declared 1.0)."""
    model = read("semantic_model", {"v": "1.0"})
    assert model.diagnostics == ()
    metric = read("metric", {"window": {"type": "pop", "offset": "1 month"}})
    assert metric.diagnostics == ()
    assert metric.declared_version is None


def test_basic_mode_has_no_version_diagnostics() -> None:
    """ENV-MODE-04: basic mode never runs the gate."""
    for v in ('"9.0"', '"x"', "1.10", '"0.1"', '"1.99"'):
        res = read(
            "metric", f'{{"v": {v}, "window": {{"type": "pop", "offset": "1 month"}}}}', "basic"
        )
        assert codes(res) == [("ignored_vendor_extension", "warning")]
