"""D-CONFORM declarations: read once, checked once (CONF-01/02/16/17, JOIN-06).

Each variant changes the example model in one place and names the diagnostic it must give.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from netbarkit import NETBAR_MODEL, conformed_ext, field_of, netbar_doc, relationship, sm, to_yaml

from dosi.engine import Engine
from dosi.errors import ModelError
from dosi.ext import REGISTRY, read_extensions
from dosi.ext.payloads import RelationshipExt


def _errors(doc: dict[str, Any]) -> list[tuple[str, str | None]]:
    with pytest.raises(ModelError) as info:
        Engine(model_text=to_yaml(doc))
    return [(i.code, i.path) for i in info.value.issues]


def _warnings(doc: dict[str, Any]) -> list[str]:
    engine = Engine(model_text=to_yaml(doc))
    try:
        return [w["code"] for w in engine.warnings]
    finally:
        engine.close()


def test_conf_01_02_cardinality_is_implemented_and_silent() -> None:
    """CONF-01/02: `cardinality` is read on relationships (enum many_to_one | many_to_many),
    silent impact, since 1.8, and listing it in `requires` no longer refuses the model."""
    info = REGISTRY["cardinality"]
    assert (info.implemented, info.impact, info.since) == (True, "silent", "1.8")
    entry = [{"vendor_name": "DATUS", "data": json.dumps(
        {"v": "1.8", "requires": ["cardinality"], "cardinality": "many_to_many"})}]  # fmt: skip
    res = read_extensions("relationship", "relationships[r]", entry)
    assert res.diagnostics == ()
    assert res.payload == RelationshipExt(cardinality="many_to_many")


@pytest.mark.parametrize("value", ["one_to_one", "MANY_TO_MANY", 3, True, ["many_to_many"]])
def test_conf_01_cardinality_outside_the_enum_is_invalid(value: Any) -> None:
    """CONF-01: any other value is `invalid_datus_extension` naming the key."""
    entry = [{"vendor_name": "DATUS", "data": json.dumps({"v": "1.8", "cardinality": value})}]
    res = read_extensions("relationship", "relationships[r]", entry)
    assert [d.code for d in res.errors] == ["invalid_datus_extension"]
    assert "`cardinality`" in res.errors[0].message


def test_conf_02_without_requires_warns_requires_missing() -> None:
    """CONF-02: a silent key outside `requires` still applies, with a warning."""
    doc = netbar_doc()
    relationship(doc, "login_payment_conformed")["custom_extensions"] = [
        {"vendor_name": "DATUS", "data": '{"v": "1.8", "cardinality": "many_to_many"}'}
    ]
    assert "datus_ext_requires_missing" in _warnings(doc)


def test_join_06_join_type_on_many_to_many_is_invalid() -> None:
    """JOIN-06: a conformed edge is never joined, so `join_type` on it is an error."""
    doc = netbar_doc()
    relationship(doc, "login_payment_conformed")["custom_extensions"] = conformed_ext(
        join_type="inner"
    )
    assert _errors(doc) == [("invalid_datus_extension", "relationships[login_payment_conformed]")]


def test_conf_16_is_time_must_agree() -> None:
    """CONF-16: a time dimension paired with a non-time column (here also a type clash)."""
    doc = netbar_doc()
    relationship(doc, "login_payment_conformed")["to_columns"] = ["player_id", "platform_id"]
    assert _errors(doc) == [
        ("invalid_datus_extension", "relationships[login_payment_conformed]"),
        ("invalid_datus_extension", "relationships[login_payment_conformed]"),
    ]


def test_conf_16_declared_datatypes_must_agree() -> None:
    """CONF-16: both sides declare a datatype and they differ."""
    doc = netbar_doc()
    field_of(doc, "netbar_payment", "platform_id")["datatype"] = "String"
    errors = _errors(doc)
    assert errors == [("invalid_datus_extension", "relationships[login_payment_conformed]")]


def test_conf_16_an_undeclared_datatype_pairs_with_any() -> None:
    """CONF-16: the types are compared only when both sides declare one."""
    doc = netbar_doc()
    field_of(doc, "netbar_payment", "platform_id").pop("datatype")
    assert "relationship_target_not_unique" in _warnings(doc)


def test_conf_16_one_column_per_dataset_per_class() -> None:
    """CONF-16: a chain of pairs that puts two columns of one dataset in one class (the
    login date meets the login platform through a payment pair) is refused, per dataset."""
    doc = netbar_doc()
    field_of(doc, "netbar_register", "reg_date")["dimension"] = {"is_time": False}
    field_of(doc, "netbar_register", "reg_date")["datatype"] = "Integer"
    sm(doc)["relationships"].append(
        {
            "name": "payment_register_conformed",
            "from": "netbar_payment",
            "to": "netbar_register",
            "from_columns": ["platform_id"],
            "to_columns": ["reg_date"],
            "custom_extensions": conformed_ext(),
        }
    )
    relationship(doc, "login_register_conformed")["custom_extensions"] = conformed_ext()
    codes = _errors(doc)
    # login_register pairs a date with the (now integer, non-time) reg_date: two pair errors;
    # the class {stat_date, pay_date, reg_date, platform_id x2} holds two login and two
    # payment columns: one error per dataset
    assert codes.count(("invalid_datus_extension", "relationships[login_payment_conformed]")) == 2
    assert len(codes) == 4


def test_conf_16_paired_column_must_be_a_declared_field() -> None:
    """A conformed spelling is grouped by name, so it must be a field (the reference's
    `unknown_column`)."""
    doc = netbar_doc()
    relationship(doc, "login_payment_conformed")["to_columns"] = ["pay_day", "platform_id"]
    assert _errors(doc) == [("unknown_column", "relationships[login_payment_conformed].to_columns")]


def test_conf_17_relationship_target_not_unique_warning_is_kept() -> None:
    """CONF-17: model validation still warns on each many_to_many edge."""
    engine = Engine(model_path=NETBAR_MODEL)
    try:
        warned = [w for w in engine.warnings if w["code"] == "relationship_target_not_unique"]
    finally:
        engine.close()
    assert sorted(w["path"] for w in warned) == [
        "relationships[login_payment_conformed].to_columns",
        "relationships[login_register_conformed].to_columns",
    ]


def test_conf_01_explicit_many_to_one_is_an_ordinary_join() -> None:
    """CONF-01: `many_to_one` is the default: the edge stays a join and no warning is added."""
    doc = netbar_doc()
    relationship(doc, "payment_to_platforms")["custom_extensions"] = [
        {"vendor_name": "DATUS", "data": '{"v": "1.8", "cardinality": "many_to_one"}'}
    ]
    engine = Engine(model_text=to_yaml(doc))
    try:
        assert [r.name for r in engine.model.relationships] == ["payment_to_platforms"]
    finally:
        engine.close()
