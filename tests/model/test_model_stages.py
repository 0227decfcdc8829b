"""ModelError.code is the loading stage, as the reference reports it (issue 8, item 5).

`io` (the file cannot be read), `parse` (not YAML/JSON of the schema's shape), `invalid_model`
(shape fine, a structural rule broken: version, names, relationships), `compile_error`
(a field, metric or extension does not compile). The precise per-issue codes travel in
`compile_errors` (dicts) and `issues` (the same list as Diagnostics). Each case below was
checked against the reference engine. Requirement IDs: CORE-MOD-01..06.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_model_loading import GOOD

from dosi.engine import Engine, validate
from dosi.errors import ModelError

METRIC = "expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}"

CASES: list[tuple[str, str, str, list[str]]] = [
    # (name, model text, stage, per-issue codes)
    ("yaml_syntax", "version: 0.2.0.dev0\nsemantic_model: [\n  - name: x\n  : :\n", "parse", []),
    ("not_a_mapping", "- a\n- b\n", "parse", ["invalid_model"]),
    (
        "missing_version",
        GOOD.replace("version: 0.2.0.dev0\n", ""),
        "parse",
        ["missing_model_key"],
    ),
    (
        "unknown_key",
        GOOD.replace("source: customers", "source: customers\n        owner: bi"),
        "parse",
        ["unknown_model_key"],
    ),
    (
        "missing_source",
        GOOD.replace("        source: customers\n", ""),
        "parse",
        ["missing_model_key"],
    ),
    (
        # issue 20: a word-like name outside the enum loads with a warning; an expression with
        # no entry dosi reads is an error on that metric (the reference refuses FOO at parse)
        "dialect_outside_enum",
        GOOD.replace("dialect: ANSI_SQL, expression: SUM", "dialect: FOO, expression: SUM"),
        "compile_error",
        ["no_usable_expression"],
    ),
    (
        "dialect_not_a_name",
        GOOD.replace("dialect: ANSI_SQL, expression: SUM", "dialect: 7, expression: SUM"),
        "parse",
        ["invalid_model_value"],
    ),
    (
        "key_not_a_list",
        GOOD.replace("primary_key: [id]", "primary_key: id"),
        "parse",
        ["invalid_model_value"],
    ),
    (
        "no_semantic_model",
        "version: 0.2.0.dev0\nsemantic_model: []\n",
        "parse",
        ["invalid_model_value"],
    ),
    (
        "unsupported_version",
        GOOD.replace("version: 0.2.0.dev0", "version: '9.9'"),
        "invalid_model",
        ["unsupported_version"],
    ),
    (
        "empty_datasets",
        "version: 0.2.0.dev0\nsemantic_model:\n  - name: m\n    datasets: []\n",
        "invalid_model",
        ["empty_datasets"],
    ),
    (
        "duplicate_field",
        GOOD.replace("name: region", "name: id"),
        "invalid_model",
        ["duplicate_name"],
    ),
    (
        "duplicate_metric",
        GOOD + f"      - name: revenue\n        {METRIC}\n",
        "invalid_model",
        ["duplicate_name"],
    ),
    (
        "relationship_unknown_dataset",
        GOOD.replace("to: customers", "to: custs"),
        "invalid_model",
        ["unknown_dataset"],
    ),
    (
        "relationship_arity",
        GOOD.replace("to_columns: [id]", "to_columns: [id, region]"),
        "invalid_model",
        ["column_count_mismatch"],
    ),
    (
        "metric_unknown_field",
        GOOD.replace("SUM(orders.amount)", "SUM(orders.amt)"),
        "compile_error",
        ["unknown_field"],
    ),
    (
        "metric_unknown_dataset",
        GOOD.replace("SUM(orders.amount)", "SUM(ordrs.amount)"),
        "compile_error",
        ["unknown_dataset"],
    ),
    (
        "metric_without_aggregate",
        GOOD.replace("SUM(orders.amount)", "orders.amount"),
        "compile_error",
        ["not_an_aggregate"],
    ),
    (
        "metric_unparseable",
        GOOD.replace("SUM(orders.amount)}", "'SUM(orders.amount'}"),
        "compile_error",
        ["unparseable_expression"],
    ),
    (
        "field_unparseable",
        GOOD.replace("expression: region}", "expression: 'region +'}"),
        "compile_error",
        ["unparseable_expression"],
    ),
    (
        "datus_payload_not_json",
        GOOD.replace(
            METRIC, METRIC + "\n        custom_extensions: [{vendor_name: DATUS, data: x}]"
        ),
        "compile_error",
        ["invalid_datus_extension"],
    ),
]


@pytest.mark.parametrize(("name", "text", "stage", "codes"), CASES, ids=[c[0] for c in CASES])
def test_model_error_code_is_the_reference_stage(
    name: str, text: str, stage: str, codes: list[str]
) -> None:
    """Each kind of model problem carries the stage code the reference gives it, with the
    precise codes per issue."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    err = info.value
    assert err.code == stage
    assert err.to_dict()["code"] == stage
    if codes:
        assert [d["code"] for d in err.compile_errors] == codes
    assert err.compile_errors == [d.to_dict() for d in err.issues]
    assert [d["code"] for d in err.issues] == [d.code for d in err.issues]


def test_unreadable_file_is_io(tmp_path: Path) -> None:
    """A model path that cannot be read is stage `io` (reference: io)."""
    with pytest.raises(ModelError) as info:
        Engine(model_path=tmp_path / "missing.yaml")
    assert info.value.code == "io"
    assert [d.code for d in info.value.issues] == ["model_not_found"]


def test_earliest_stage_wins_when_stages_mix() -> None:
    """dosi reports every problem at once; the code is the earliest stage among them (the
    reference would stop there), and every issue keeps its own code."""
    text = GOOD.replace("to: customers", "to: custs").replace(
        "SUM(orders.amount)", "SUM(orders.amt)"
    )
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert info.value.code == "invalid_model"
    assert [d["code"] for d in info.value.compile_errors] == ["unknown_dataset", "unknown_field"]


def test_validate_reports_the_stage_and_the_version_read() -> None:
    """validate(): `stage` for an invalid model; `version` for a valid one."""
    bad = validate(GOOD.replace("SUM(orders.amount)", "SUM(orders.amt)"))
    assert (bad["valid"], bad["stage"]) == (False, "compile_error")
    assert [i["code"] for i in bad["compile_errors"]] == ["unknown_field"]
    good = validate(GOOD)
    assert (good["valid"], good["version"]) == (True, "0.2.0.dev0")
