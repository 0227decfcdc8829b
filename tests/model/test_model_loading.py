"""Model loading (issue 2): YAML or JSON, schema-strict keys, cross-checks, one ModelError.

Requirement IDs: CORE-MOD-01..06 (Ossie core model), CORE-MOD-09 (custom_extensions).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from enginekit import assert_rows_equal, mini_doc, mini_yaml, to_yaml

from dosi.engine import Engine
from dosi.errors import ModelError

GOOD = textwrap.dedent(
    """\
    version: 0.2.0.dev0
    semantic_model:
      - name: m
        datasets:
          - name: orders
            source: orders
            primary_key: [order_id]
            fields:
              - name: order_id
                expression: {dialects: [{dialect: ANSI_SQL, expression: order_id}]}
              - name: customer_id
                expression: {dialects: [{dialect: ANSI_SQL, expression: customer_id}]}
              - name: amount
                expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}
          - name: customers
            source: customers
            primary_key: [id]
            fields:
              - name: id
                expression: {dialects: [{dialect: ANSI_SQL, expression: id}]}
              - name: region
                expression: {dialects: [{dialect: ANSI_SQL, expression: region}]}
        relationships:
          - name: orders_to_customers
            from: orders
            to: customers
            from_columns: [customer_id]
            to_columns: [id]
        metrics:
          - name: revenue
            expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
    """
)


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the n-th line containing `needle` (computed from the text itself)."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    assert len(hits) >= occurrence, (needle, hits)
    return hits[occurrence - 1]


def model_error(text: str, mode: str = "datus") -> ModelError:
    with pytest.raises(ModelError) as info:
        Engine(model_text=text, mode=mode)
    return info.value


def issues(err: ModelError) -> list[tuple[str, str | None]]:
    return [(d.code, d.path) for d in err.issues]


# ------------------------------------------------------------------------------ formats


def test_core_mod_01_yaml_model_loads_and_answers(mini_db: Path, mini_ref: Any) -> None:
    """CORE-MOD-01: a YAML model loads and a query over it runs."""
    engine = Engine(model_text=mini_yaml())
    res = engine.execute({"metrics": ["revenue"]}, db_path=mini_db)
    assert_rows_equal(
        [(r["revenue"],) for r in res["rows"]], mini_ref.rows("SELECT SUM(amount) FROM orders")
    )


def test_core_mod_01_json_model_loads_like_yaml(mini_db: Path) -> None:
    """CORE-MOD-01: the same document as JSON text compiles to the same SQL and rows."""
    doc = mini_doc()
    from_yaml = Engine(model_text=to_yaml(doc))
    from_json = Engine(model_text=json.dumps(doc, indent=2))
    q = {"metrics": ["revenue", "order_count"], "group_by": ["customers.region"]}
    assert from_json.compile(q)["sql"] == from_yaml.compile(q)["sql"]
    assert (
        from_json.execute(q, db_path=mini_db)["rows"]
        == from_yaml.execute(q, db_path=mini_db)["rows"]
    )


def test_core_mod_01_model_path_reads_a_file(tmp_path: Path) -> None:
    """CORE-MOD-01: model_path reads the document from disk (YAML and .json alike)."""
    p = tmp_path / "m.json"
    p.write_text(json.dumps(yaml.safe_load(GOOD)), encoding="utf-8")
    assert [m["name"] for m in Engine(model_path=p).metrics()] == ["revenue"]


def test_model_file_missing_is_a_model_error(tmp_path: Path) -> None:
    """A model path that does not exist is a ModelError, not an OSError."""
    with pytest.raises(ModelError):
        Engine(model_path=tmp_path / "nope.yaml")


def test_model_text_that_is_not_yaml_is_a_model_error() -> None:
    """Unparseable YAML is a ModelError carrying the YAML line."""
    err = model_error("version: 0.2.0.dev0\nsemantic_model: [\n  - name: x\n  : :\n")
    assert err.issues and err.issues[0].line is not None


def test_engine_requires_exactly_one_model_source() -> None:
    """Engine() needs model_path or model_text, not both (reference: ValueError)."""
    with pytest.raises(ValueError):
        Engine()
    with pytest.raises(ValueError):
        Engine(model_path="x.yaml", model_text=GOOD)
    with pytest.raises(ValueError):
        Engine(model_text=GOOD, mode="strict")


# ------------------------------------------------------------------------------ schema


def test_core_mod_04_extra_key_on_a_field_is_rejected_with_path_and_line() -> None:
    """CORE-MOD-04 / schema additionalProperties false: an unknown field key is an error."""
    text = GOOD.replace(
        "expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}",
        "expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}\n"
        "            aggregation: sum",
    )
    err = model_error(text)
    assert [(d.code, d.path) for d in err.issues] == [
        ("unknown_model_key", "datasets[orders].fields[amount].aggregation")
    ]
    assert err.issues[0].line == line_of(text, "aggregation: sum")


@pytest.mark.parametrize(
    ("needle", "replacement", "path"),
    [
        ("source: customers", "source: customers\n        owner: bi", "datasets[customers].owner"),
        (
            "to_columns: [id]",
            "to_columns: [id]\n        kind: fk",
            "relationships[orders_to_customers].kind",
        ),
        (
            "expression: SUM(orders.amount)}]}",
            "expression: SUM(orders.amount)}]}\n        format: currency",
            "metrics[revenue].format",
        ),
    ],
)
def test_core_mod_extra_keys_rejected_on_every_object(
    needle: str, replacement: str, path: str
) -> None:
    """CORE-MOD-02/03/05: datasets, relationships and metrics reject undeclared keys."""
    err = model_error(GOOD.replace(needle, replacement))
    assert issues(err) == [("unknown_model_key", path)]


def test_core_mod_06_dialect_outside_the_enum_is_an_error_for_that_field_only() -> None:
    """CORE-MOD-06 (issue 20): a dialect name outside the Ossie enumeration loads with a
    warning; a field whose only entry is one dosi cannot read is `no_usable_expression` on that
    field alone (tests/engine/test_engine_expression_dialects.py covers the usable ones)."""
    err = model_error(
        GOOD.replace("dialect: ANSI_SQL, expression: region", "dialect: T_SQL, expression: region")
    )
    assert issues(err) == [("no_usable_expression", "datasets[customers].fields[region]")]
    assert [w.code for w in err.warnings] == ["unknown_expression_dialect"]


def test_core_mod_01_missing_required_key_is_reported() -> None:
    """CORE-MOD-02: `source` is required on a dataset."""
    err = model_error(GOOD.replace("        source: customers\n", ""))
    assert [d.code for d in err.issues] == ["missing_model_key"]
    assert err.issues[0].path == "datasets[customers]"


def test_schema_errors_are_all_reported_in_one_model_error() -> None:
    """Issue 2: ONE ModelError lists every schema problem."""
    text = GOOD.replace("source: customers", "source: customers\n        owner: bi").replace(
        "from: orders", "from: orders\n        weight: 1"
    )
    err = model_error(text)
    assert issues(err) == [
        ("unknown_model_key", "datasets[customers].owner"),
        ("unknown_model_key", "relationships[orders_to_customers].weight"),
    ]
    assert [d.line for d in err.issues] == [line_of(text, "owner: bi"), line_of(text, "weight: 1")]


def test_version_other_than_0_2_0_dev0_or_0_1_1_is_rejected() -> None:
    """OSI 0.2.0.dev0, or 0.1.1 upgraded (issue 8); anything else is unsupported_version
    (reference: invalid_model)."""
    err = model_error(GOOD.replace("version: 0.2.0.dev0", "version: 0.3.0"))
    assert [(d.code, d.path) for d in err.issues] == [("unsupported_version", "version")]
    assert err.code == "invalid_model"


def test_custom_extensions_of_other_vendors_are_accepted() -> None:
    """CORE-MOD-09 / ENV-CAR-07: a foreign vendor's extension (even non-JSON) is ignored."""
    text = GOOD.replace(
        "        source: customers\n",
        "        source: customers\n"
        "        custom_extensions:\n"
        "          - vendor_name: DBT\n"
        "            data: 'not json at all'\n",
    )
    engine = Engine(model_text=text)
    assert engine.warnings == []


# ------------------------------------------------------------------------------ cross-checks


def test_duplicate_dataset_name_is_reported_at_the_duplicate() -> None:
    """Issue 2 cross-check: dataset names are unique; the issue points at the second one."""
    text = GOOD.replace(
        "    relationships:",
        "      - name: orders\n        source: orders_v2\n    relationships:",
    )
    err = model_error(text)
    assert issues(err) == [("duplicate_name", "datasets[orders]")]
    assert err.issues[0].line == line_of(text, "- name: orders", occurrence=2)


def test_duplicate_field_name_is_reported_at_the_duplicate() -> None:
    """Issue 2 cross-check: field names are unique within a dataset."""
    text = GOOD.replace(
        "          - name: region\n",
        "          - name: region\n"
        "            expression: {dialects: [{dialect: ANSI_SQL, expression: region}]}\n"
        "          - name: region\n",
    )
    err = model_error(text)
    assert issues(err) == [("duplicate_name", "datasets[customers].fields[region]")]
    assert err.issues[0].line == line_of(text, "- name: region", occurrence=2)


def test_duplicate_metric_and_relationship_names_are_reported() -> None:
    """Issue 2 cross-check: metric and relationship names are unique too."""
    text = GOOD.replace(
        "    metrics:",
        "      - name: orders_to_customers\n        from: orders\n        to: customers\n"
        "        from_columns: [customer_id]\n        to_columns: [id]\n    metrics:",
    ) + (
        "      - name: revenue\n"
        "        expression: {dialects: [{dialect: ANSI_SQL, expression: COUNT(orders.order_id)}]}\n"
    )
    err = model_error(text)
    assert issues(err) == [
        ("duplicate_name", "relationships[orders_to_customers]"),
        ("duplicate_name", "metrics[revenue]"),
    ]


def test_relationship_to_unknown_dataset() -> None:
    """Issue 2 cross-check: relationship endpoints must be datasets of the model."""
    err = model_error(GOOD.replace("to: customers", "to: cusomers"))
    assert issues(err) == [("unknown_dataset", "relationships[orders_to_customers]")]
    assert "customers" in err.issues[0].candidates


def test_relationship_column_need_not_be_a_field() -> None:
    """Issue 8 (keys are columns): from/to columns name source columns; an undeclared one
    joins as the qualified physical column (more in tests/joins/test_join_key_columns.py)."""
    engine = Engine(model_text=GOOD.replace("to_columns: [id]", "to_columns: [cust_id]"))
    sql = engine.compile({"metrics": ["revenue"], "group_by": ["customers.region"]})["sql"]
    assert "orders.customer_id = customers.cust_id" in sql


def test_core_mod_03_from_and_to_column_counts_must_match() -> None:
    """CORE-MOD-03: the two column arrays have the same length."""
    err = model_error(
        GOOD.replace("from_columns: [customer_id]", "from_columns: [customer_id, order_id]")
    )
    assert issues(err) == [("column_count_mismatch", "relationships[orders_to_customers]")]


def test_field_expression_must_parse() -> None:
    """Issue 2 cross-check: every expression parses."""
    text = GOOD.replace("expression: region}", "expression: 'region +* )'}")
    err = model_error(text)
    assert issues(err) == [("unparseable_expression", "datasets[customers].fields[region]")]
    assert err.issues[0].line == line_of(text, "- name: region")


def test_metric_expression_must_parse() -> None:
    """Issue 2 cross-check: metric expressions parse too."""
    err = model_error(GOOD.replace("SUM(orders.amount)}", "'SUM(orders.amount'}"))
    assert issues(err) == [("unparseable_expression", "metrics[revenue]")]


def test_every_cross_check_problem_is_listed_in_one_model_error() -> None:
    """Issue 2: ONE ModelError listing every issue, each with its path and YAML line."""
    text = (
        GOOD.replace("expression: region}", "expression: 'region +* )'}")
        .replace("to_columns: [id]", "to_columns: [id, region]")
        .replace("SUM(orders.amount)}", "SUM(orders.nope)}")
    )
    err = model_error(text)
    assert issues(err) == [
        ("unparseable_expression", "datasets[customers].fields[region]"),
        ("column_count_mismatch", "relationships[orders_to_customers]"),
        ("unknown_field", "metrics[revenue]"),
    ]
    assert [d.line for d in err.issues] == [
        line_of(text, "- name: region"),
        line_of(text, "- name: orders_to_customers"),
        line_of(text, "- name: revenue"),
    ]
    for d in err.issues:
        assert d.path in str(err)
    assert err.to_dict()["code"] == err.code


def test_every_problem_is_reported_for_a_json_model_too() -> None:
    """Issue 2: JSON models get the same paths (lines follow the JSON text)."""
    doc = yaml.safe_load(GOOD)
    doc["semantic_model"][0]["relationships"][0]["to"] = "clients"
    doc["semantic_model"][0]["metrics"][0]["expression"]["dialects"][0]["expression"] = "SUM(x.y)"
    text = json.dumps(doc, indent=2)
    err = model_error(text)
    assert issues(err) == [
        ("unknown_dataset", "relationships[orders_to_customers]"),
        ("unknown_dataset", "metrics[revenue]"),
    ]
    name_line = line_of(text, '"name": "orders_to_customers"')
    assert err.issues[0].line in (name_line - 1, name_line)  # the object's `{` or its name
