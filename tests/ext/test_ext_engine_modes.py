"""Engine modes, warnings and the version gate through the Engine (issue 3).

Basic mode (`mode="basic"`) makes every DATUS entry inert with one `ignored_vendor_extension`
warning per carrying element; the same model is valid in both modes; warnings are on
Engine.warnings and in every result; version-gate errors raise ModelError at construction and
its warnings land in the warnings list.

Requirement IDs: CORE-MODE-01..03, ENV-MODE-02..06, JOIN-08, FILL-09, TIME-09, GRAIN-07,
ENV-V-02..09, ENV-REQ-02/04, ENV-CAR-09.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import SHOP_MODEL, by_key, metric, mini_yaml

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError

Make = Callable[..., Any]
IGNORED = "ignored_vendor_extension"

# one payload on every kind of carrier
EVERYWHERE: dict[str, Any] = {
    "model_ext": {"v": "1.10"},
    "dataset_ext": {"orders": {"v": "1.1", "time_dimension": "order_date"}},
    "field_ext": {
        "orders.order_date": {"v": "1.1", "time_granularity": "month"},
        "orders.amount": {"v": "1.7", "is_dimension": True},
    },
    "rel_ext": {"orders_to_customers": {"v": "1.0", "join_type": "inner"}},
    "metric_ext": {
        "refund_total": {"v": "1.0", "fill_nulls_with": 0},
        "units": {"v": "1.4", "measure": {"name": "units_sum"}, "requires": ["measure"]},
    },
    "extra_metrics": [
        metric(
            "rev_mom",
            "SUM(orders.amount)",
            {"v": "1.3", "window": {"type": "pop", "offset": "1 month", "calculation": "delta"}},
        ),
        metric("lines", "COUNT(order_items.line)", {"v": "1.1", "dataset": "order_items"}),
    ],
}
CARRIERS = {
    "semantic_model",
    "datasets[orders]",
    "datasets[orders].fields[order_date]",
    "datasets[orders].fields[amount]",
    "relationships[orders_to_customers]",
    "metrics[refund_total]",
    "metrics[units]",
    "metrics[rev_mom]",
    "metrics[lines]",
}


@pytest.fixture
def basic(mini_engine: Make) -> tuple[Engine, Callable[..., Any]]:
    return mini_engine(mode="basic", **EVERYWHERE)


@pytest.fixture
def datus(mini_engine: Make) -> tuple[Engine, Callable[..., Any]]:
    return mini_engine(mode="datus", **EVERYWHERE)


# ------------------------------------------------------------------------------ basic mode


def test_env_mode_02_one_warning_per_carrying_element(basic: Any) -> None:
    """ENV-MODE-02: exactly one ignored_vendor_extension per element carrying DATUS."""
    engine, _ = basic
    warnings = engine.warnings
    assert [w["code"] for w in warnings] == [IGNORED] * len(CARRIERS)
    assert sorted(w["path"] for w in warnings) == sorted(CARRIERS)
    assert all(w["severity"] == "warning" and w["message"] for w in warnings)


def test_core_mode_02_same_model_valid_in_both_modes(datus: Any, basic: Any) -> None:
    """CORE-MODE-02: the model loads in datus mode (no diagnostics) and in basic mode."""
    assert datus[0].warnings == []
    assert basic[0].warnings


def test_env_mode_04_basic_mode_does_not_parse_payloads(mini_engine: Make) -> None:
    """ENV-MODE-04: a malformed payload is only ignored (with the warning) in basic mode, and
    is invalid_datus_extension in datus mode."""
    text = mini_yaml(extra_metrics=[metric("broken", "SUM(orders.amount)")]).replace(
        "  - name: broken\n",
        "  - name: broken\n    custom_extensions:\n"
        "    - vendor_name: DATUS\n      data: '{not json'\n",
    )
    assert "{not json" in text
    engine = Engine(model_text=text, mode="basic")
    assert [(w["code"], w["path"]) for w in engine.warnings] == [(IGNORED, "metrics[broken]")]
    with pytest.raises(ModelError) as info:
        Engine(model_text=text, mode="datus")
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "metrics[broken]")
    ]


def test_env_mode_04_basic_mode_has_no_version_diagnostics(mini_engine: Make) -> None:
    """ENV-MODE-04: `v: "9.0"` is an error in datus mode, only the ignore warning in basic."""
    kw = {"metric_ext": {"revenue": {"v": "9.0", "fill_nulls_with": 0}}}
    engine, _ = mini_engine(mode="basic", **kw)
    assert [w["code"] for w in engine.warnings] == [IGNORED]
    with pytest.raises(ModelError):
        mini_engine(mode="datus", **kw)


def test_join_08_basic_mode_falls_back_to_left(basic: Any, datus: Any) -> None:
    """JOIN-08: in basic mode `inner` is inert: the orphan is back in the NULL region."""
    q = {"metrics": ["revenue"], "group_by": ["customers.region"]}
    assert by_key(basic[1](q), "region")[None]["revenue"] == 70.0
    assert by_key(datus[1](q), "region")[None]["revenue"] == 30.0


def test_fill_09_basic_mode_keeps_only_the_count_default(basic: Any, datus: Any) -> None:
    """FILL-09: no fill except S-FAN-6 — refund_total is NULL in January (no refunds), while
    the pure count refund_count still reads 0."""
    q = {"metrics": ["revenue", "refund_total", "refund_count"], "group_by": ["metric_time:month"]}
    jan = "2024-01-01"
    b = by_key(basic[1](q), "metric_time__month")[jan]
    d = by_key(datus[1](q), "metric_time__month")[jan]
    assert (b["refund_total"], b["refund_count"]) == (None, 0)
    assert (d["refund_total"], d["refund_count"]) == (0, 0)


def test_grain_07_basic_mode_allows_any_grain(basic: Any, datus: Any) -> None:
    """GRAIN-07: the month grain declaration is inert in basic mode, so :day works."""
    q = {"metrics": ["revenue"], "group_by": ["orders.order_date:day"]}
    assert basic[1](q)["row_count"] == 7
    with pytest.raises(QueryError) as info:
        datus[0].compile(q)
    assert info.value.code == "grain_too_fine"


def test_time_09_basic_mode_uses_single_is_time_inference_only(mini_engine: Make) -> None:
    """TIME-09: a dataset D-TIME choosing between two time fields is inert in basic mode, so
    metric_time has no primary time there."""
    kw = {"ship_is_time": True, "dataset_ext": {"orders": {"time_dimension": "ship_date"}}}
    q = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
    datus_engine, _ = mini_engine(**kw)
    basic_engine, _ = mini_engine(mode="basic", **kw)
    assert datus_engine.compile(q)["sql"]
    with pytest.raises(QueryError) as info:
        basic_engine.compile(q)
    assert info.value.code == "no_primary_time_dimension"


def test_core_mode_03_single_is_time_inference_works_in_basic_mode(
    basic: Any, mini_run: Callable[..., Any]
) -> None:
    """CORE-MODE-03: metric_time still works when plain Ossie gives a unique time axis."""
    q = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
    assert basic[1](q)["rows"] == mini_run(q)["rows"]


def test_env_mode_06_window_metric_is_its_base_aggregate_in_basic_mode(basic: Any) -> None:
    """ENV-MODE-06: in basic mode the window metric returns its plain base aggregate."""
    res = basic[1]({"metrics": ["revenue", "rev_mom"], "group_by": ["metric_time:month"]})
    assert all(r["rev_mom"] == r["revenue"] for r in res["rows"])


def test_measure_and_dim_are_inert_in_basic_mode(basic: Any, datus: Any) -> None:
    """ENV-MODE-03: D-MEASURE falls back to the stem; D-DIM to the inferred role."""
    b, d = basic[0], datus[0]
    assert b.metric("units")["measures"] == ["order_items_qty_sum"]
    assert d.metric("units")["measures"] == ["units_sum"]
    b_amount = next(x for x in b.dimensions() if x["name"] == "orders.amount")
    d_amount = next(x for x in d.dimensions() if x["name"] == "orders.amount")
    assert (b_amount["is_dimension"], b_amount["source"]) == (False, "inferred:measure")
    assert (d_amount["is_dimension"], d_amount["source"]) == (True, "declared")


def test_other_vendors_get_no_basic_mode_warning(mini_engine: Make) -> None:
    """ENV-MODE-02: only DATUS entries are reported (another vendor stays silent)."""
    text = mini_yaml().replace(
        "  - name: revenue\n",
        "  - name: revenue\n    custom_extensions:\n"
        "    - vendor_name: ACME\n      data: '{\"fill_nulls_with\": 0}'\n",
    )
    assert "ACME" in text
    assert Engine(model_text=text, mode="basic").warnings == []


def test_core_mode_02_shop_model_loads_in_basic_mode() -> None:
    """CORE-MODE-02 / ENV-MODE-03: the shop model is valid in basic mode too; its COUNT(*)
    metric pinned only by D-DATASET is unavailable there, with a warning at load and a
    structured error naming the cause when queried."""
    engine = Engine(model_path=SHOP_MODEL, mode="basic")
    codes = [w["code"] for w in engine.warnings]
    assert "metric_unavailable_in_basic_mode" in codes
    with pytest.raises(QueryError) as info:
        engine.compile({"metrics": ["order_line_count"]})
    assert info.value.code == "count_star_needs_dataset"
    assert engine.compile({"metrics": ["revenue"]})["sql"]


# ------------------------------------------------------------------------------ warnings


def test_warnings_are_on_the_engine_and_in_every_result(basic: Any) -> None:
    """Issue 3: model warnings appear on Engine.warnings and in every compile/execute result."""
    engine, run = basic
    for q in ({"metrics": ["revenue"]}, {"metrics": ["units"], "group_by": ["orders.status"]}):
        assert run(q)["warnings"] == engine.warnings
        assert engine.compile(q)["warnings"] == engine.warnings


def test_datus_mode_warning_reaches_results(mini_engine: Make) -> None:
    """ENV-REQ-04: a silent key (measure) missing from `requires` warns
    `datus_ext_requires_missing`; the model still compiles and results carry the warning."""
    engine, run = mini_engine(metric_ext={"units": {"measure": {"name": "units_sum"}}})
    codes = [w["code"] for w in engine.warnings]
    assert codes == ["datus_ext_requires_missing"]
    assert engine.warnings[0]["path"] == "metrics[units]"
    assert run({"metrics": ["units"]})["warnings"] == engine.warnings


# ------------------------------------------------------------------------------ version gate


@pytest.mark.parametrize("v", [None, "1.0", "1.1", "1.10", 1, 1.1])
def test_env_v_04_09_supported_versions_are_silent(mini_engine: Make, v: Any) -> None:
    """ENV-V-02/04/09: absent/null `v`, strings and 1-decimal numbers up to 1.10 are silent."""
    payload: dict[str, Any] = {"fill_nulls_with": 0}
    if v is not None:
        payload["v"] = v
    engine, _ = mini_engine(metric_ext={"revenue": payload})
    assert engine.warnings == []


@pytest.mark.parametrize(
    ("v", "code"),
    [
        (1.25, "invalid_datus_extension"),  # ENV-V-03: number with two decimals
        ("abc", "invalid_datus_extension"),  # ENV-V-05
        ("1.1.1", "invalid_datus_extension"),
        (True, "invalid_datus_extension"),
        ("0.9", "unsupported_datus_ext_version"),  # ENV-V-06: below 1.0
        ("2.0", "unsupported_datus_ext_version"),  # ENV-V-06: future major
        (2, "unsupported_datus_ext_version"),
    ],
)
def test_env_v_version_gate_errors_raise_model_error(v: Any, code: str) -> None:
    """ENV-V-03/05/06: version-gate errors surface as ModelError from Engine construction."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(metric_ext={"revenue": {"v": v, "fill_nulls_with": 0}}))
    assert [(d.code, d.path) for d in info.value.issues] == [(code, "metrics[revenue]")]


def test_env_v_07_newer_minor_is_a_warning(mini_engine: Make) -> None:
    """ENV-V-07: a newer minor loads with `datus_ext_version_ahead`, known keys still apply."""
    engine, run = mini_engine(metric_ext={"refund_total": {"v": "1.13", "fill_nulls_with": 0}})
    assert [(w["code"], w["path"]) for w in engine.warnings] == [
        ("datus_ext_version_ahead", "metrics[refund_total]")
    ]
    rows = run({"metrics": ["revenue", "refund_total"], "group_by": ["metric_time:month"]})["rows"]
    assert rows[0]["refund_total"] == 0  # the fill still applies


def test_env_v_08_key_newer_than_declared_is_honoured_with_a_warning(mini_engine: Make) -> None:
    """ENV-V-08: `measure` (1.4) under `v: "1.0"` warns and still names the measure."""
    engine, _ = mini_engine(
        metric_ext={
            "units": {"v": "1.0", "measure": {"name": "units_sum"}, "requires": ["measure"]}
        }
    )
    assert [w["code"] for w in engine.warnings] == ["datus_ext_key_newer_than_declared"]
    assert engine.metric("units")["measures"] == ["units_sum"]


def test_env_req_02_required_unknown_key_is_an_error() -> None:
    """ENV-REQ-02: a key listed in `requires` that the engine does not implement."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(metric_ext={"revenue": {"requires": ["distinct_state"]}}))
    assert [d.code for d in info.value.issues] == ["datus_ext_key_required"]


def test_env_car_09_every_extension_problem_in_one_model_error() -> None:
    """ENV-CAR-09: one pass reports every bad payload (relationship, dataset and metrics),
    keeping the warnings of the same pass on the error."""
    text = mini_yaml(
        rel_ext={"orders_to_customers": {"join_type": "outer"}},
        dataset_ext={"orders": {"time_dimension": "status"}},
        metric_ext={
            "revenue": {"v": "2.0"},
            "refund_total": {"fill_nulls_with": "zero"},
            "units": {"v": "1.13", "fill_nulls_with": 0},
        },
    )
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    err = info.value
    assert sorted((d.code, d.path) for d in err.issues) == sorted(
        [
            ("invalid_datus_extension", "datasets[orders]"),
            ("invalid_datus_extension", "relationships[orders_to_customers]"),
            ("unsupported_datus_ext_version", "metrics[revenue]"),
            ("invalid_datus_extension", "metrics[refund_total]"),
        ]
    )
    assert [(w.code, w.path) for w in err.warnings] == [
        ("datus_ext_version_ahead", "metrics[units]")
    ]
