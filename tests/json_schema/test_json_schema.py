"""The model's JSON Schema (`dosi schema`, `dosi/exporters/model.schema.json`): a valid 2020-12
schema, shipped as built, accepting every example, fixture and generated model, and
rejecting the malformed DATUS payloads the engine rejects (`invalid_datus_extension`), so
an editor's squiggle and the engine's error agree. tests/json_schema/conftest.py checks
every model the rest of the suite compiles the same way."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from schemakit import schema_errors

from dosi.compiler.model_compiler import compile_model_text
from dosi.errors import ModelError
from dosi.exporters.json_schema import SCHEMA_FILE, build_schema, schema_text, shipped_text
from dosi.importers.common import datus_entry, document_obj, field_obj, metric_obj, relationship_obj
from dosi.importers.cube import import_cube
from dosi.importers.lookml import import_lookml
from dosi.importers.yaml_writer import to_yaml

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "importers" / "data"
MODELS = sorted([*REPO.glob("examples/*/*.yaml"), *REPO.glob("tests/fixtures/*.yaml")])


def test_schema_is_valid_2020_12_and_shipped_as_built() -> None:
    jsonschema.Draft202012Validator.check_schema(build_schema())
    assert shipped_text() == schema_text(), (
        "run: python -m dosi.exporters.json_schema > src/dosi/exporters/model.schema.json"
    )
    assert (REPO / "src" / "dosi" / "exporters" / SCHEMA_FILE).read_text() == schema_text()


@pytest.mark.parametrize("path", MODELS, ids=lambda p: str(p.relative_to(REPO)))
def test_examples_and_fixtures_validate(path: Path) -> None:
    assert schema_errors(yaml.safe_load(path.read_text())) == []


def test_examples_point_their_editors_at_the_schema() -> None:
    """`# yaml-language-server: $schema=...` names the schema file in this repository."""
    for path in REPO.glob("examples/*/*.yaml"):
        first = path.read_text().splitlines()[0]
        m = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert m, f"{path} has no $schema line"
        target = (path.parent / m.group(1)).resolve()
        assert target == (REPO / "src" / "dosi" / "exporters" / SCHEMA_FILE).resolve()


@pytest.mark.parametrize(
    "converted",
    [
        lambda: import_cube(DATA / "cube_shop"),
        lambda: import_cube(DATA / "cube_shop", view="sales"),
        lambda: import_cube(DATA / "cube_docs"),
        lambda: import_lookml(DATA / "lookml_thelook", dialect="bigquery"),
        lambda: import_lookml(DATA / "lookml_shop"),
    ],
    ids=["cube_shop", "cube_view", "cube_docs", "lookml_thelook", "lookml_shop"],
)
def test_imported_models_validate(converted: Any) -> None:
    assert schema_errors(yaml.safe_load(converted().yaml())) == []


# -- malformed payloads: the schema and the engine agree ------------------------------------------
def _model(carrier: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A small model with `payload` on one object of `carrier`."""
    ext = {"datus": payload}
    ds_payload = payload if carrier == "dataset" else None
    fields = [
        field_obj("id", "id", datatype="Integer"),
        field_obj("day", "day", datatype="Date", datus=payload if carrier == "field" else None),
        field_obj("amount", "amount", datatype="Decimal"),
    ]
    sales = {"name": "sales", "source": "main.sales", "primary_key": ["id"], "fields": fields}
    if ds_payload is not None:
        sales["custom_extensions"] = [datus_entry(ds_payload)]
    shops = {
        "name": "shops",
        "source": "main.shops",
        "primary_key": ["id"],
        "fields": [field_obj("id", "id")],
    }
    rel = relationship_obj(
        "sales_to_shops",
        "sales",
        "shops",
        ["id"],
        ["id"],
        **(ext if carrier == "relationship" else {}),
    )
    metrics = [
        metric_obj("revenue", "SUM(sales.amount)"),
        metric_obj("m", "SUM(sales.amount)", **(ext if carrier == "metric" else {})),
    ]
    return document_obj("bad", [sales, shops], [rel], metrics)


BAD = [
    ("relationship", {"join_type": "outer"}),
    ("relationship", {"cardinality": "one_to_one"}),
    ("metric", {"fill_nulls_with": "0"}),
    ("metric", {"window": {"type": "pop"}}),
    ("metric", {"window": {"type": "rolling", "function": "sum"}}),
    ("metric", {"window": {"type": "rolling", "function": "corr", "periods": 3}}),
    ("metric", {"window": {"type": "cumulative", "function": "sum", "reset": "day"}}),
    (
        "metric",
        {"window": {"frame": {"function": "percentile_cont", "preceding": 1, "fraction": 2}}},
    ),
    ("metric", {"window": {"frame": {"function": "sum", "preceding": -1}}}),
    ("metric", {"window": {"frame": {"function": "sum", "preceding": 1, "colour": "red"}}}),
    ("metric", {"window": {"rank": {"function": "ntile"}}}),
    ("metric", {"window": {"rank": {"function": "rank", "buckets": 2}}}),
    ("metric", {"window": {"offset": "1 month"}}),
    ("metric", {"window": {"offset": "1 fortnight", "calculation": "delta"}}),
    (
        "metric",
        {"window": {"frame": {"function": "sum", "preceding": 1}, "rank": {"function": "rank"}}},
    ),
    ("metric", {"window": {"value": {"function": "first_value", "order": {"by": "size"}}}}),
    (
        "metric",
        {
            "window": {
                "rank": {"function": "rank", "partition": {"mode": "query_dimensions_except"}}
            }
        },
    ),
    ("metric", {"measure": {"name": "1bad"}}),
    ("metric", {"measure": {"name": "ok", "extra": 1}}),
    ("metric", {"derive": {"type": "reagg"}}),
    ("metric", {"derive": {"type": "filter", "base": "revenue"}}),
    ("metric", {"derive": {"type": "compose", "expr": "revenue", "fill": "zero"}}),
    ("metric", {"params": [{"name": "N", "type": "int", "default": 3}]}),
    ("metric", {"params": [{"name": "n", "type": "integer", "default": 3}]}),
    ("field", {"time_granularity": "fortnight"}),
    ("field", {"is_dimension": "no"}),
    ("field", {"lod": {"expr": "include(revenue, sales.id)"}}),
    ("field", {"time": {"format": "date", "storage": "float"}}),
    ("field", {"time": {"format": "date", "colour": 1}}),
    ("dataset", {"time_dimension": 5}),
]


@pytest.mark.parametrize(("carrier", "payload"), BAD, ids=[json.dumps(p)[:60] for _, p in BAD])
def test_malformed_payloads_are_rejected_by_both(carrier: str, payload: dict[str, Any]) -> None:
    doc = _model(carrier, payload)
    assert schema_errors(doc), "the schema accepted a payload the engine rejects"
    with pytest.raises(ModelError) as err:
        compile_model_text(to_yaml(doc))
    assert any(d.code in ("invalid_datus_extension", "not_implemented") for d in err.value.issues)


GOOD = [
    ("relationship", {"join_type": "inner"}),
    ("metric", {"fill_nulls_with": 0}),
    (
        "metric",
        {
            "window": {
                "type": "pop",
                "offset": {"count": 1, "granularity": "year", "direction": "forward"},
            }
        },
    ),
    (
        "metric",
        {
            "window": {
                "type": "rolling",
                "function": "stddev_samp",
                "periods": 3,
                "require_full_window": True,
            }
        },
    ),
    (
        "metric",
        {
            "window": {
                "frame": {"function": "sum", "scope": "partition", "partition": {"mode": "none"}}
            }
        },
    ),
    (
        "metric",
        {
            "window": {
                "rank": {
                    "function": "ntile",
                    "buckets": 4,
                    "order": {"by": "value", "nulls": "last"},
                }
            }
        },
    ),
    ("metric", {"window": {"value": {"function": "nth_value", "n": 2}}}),
    (
        "metric",
        {
            "window": {
                "base": "revenue",
                "rank": {
                    "function": "dense_rank",
                    "partition": {"mode": "query_dimensions_except", "exclude": ["sales.day"]},
                },
            }
        },
    ),
    (
        "metric",
        {
            "params": [{"name": "n", "type": "int", "default": 3, "min": 1}],
            "window": {"type": "rolling", "function": "avg", "periods": {"param": "n"}},
        },
    ),
    ("metric", {"measure": {"name": "my_measure"}}),
    ("metric", {"time_dimension": "sales.day", "dataset": "sales"}),
    ("field", {"time_granularity": "day", "is_dimension": True}),
    ("field", {"time": {"format": "date"}}),
    ("dataset", {"time_dimension": "day"}),
    ("metric", {"brand_new_key_of_a_later_version": {"x": 1}}),
    (
        "metric",
        {"v": "1.15", "window": {"offset": {"period_start": "month"}, "calculation": "value"}},
    ),
]


@pytest.mark.parametrize(("carrier", "payload"), GOOD, ids=[json.dumps(p)[:60] for _, p in GOOD])
def test_wellformed_payloads_are_accepted_by_both(carrier: str, payload: dict[str, Any]) -> None:
    doc = _model(carrier, payload)
    assert schema_errors(doc) == []
    compile_model_text(to_yaml(doc))


def test_plain_string_expression_is_a_schema_error_naming_the_form() -> None:
    doc = _model("metric", {})
    doc["semantic_model"][0]["metrics"][0]["expression"] = "SUM(sales.amount)"
    errors = schema_errors(doc)
    assert errors and "is not of type 'object'" in errors[0]
    assert "dialects" in build_schema()["$defs"]["Expression"]["description"]


def test_null_optional_keys_load_in_both() -> None:
    """The engine reads an optional key written as null as absent; so does the schema."""
    doc = _model("metric", {})
    model = doc["semantic_model"][0]
    model["datasets"][0]["fields"][0]["datatype"] = None
    model["datasets"][0]["description"] = None
    model["metrics"][0]["custom_extensions"] = None
    assert schema_errors(doc) == []
    compile_model_text(to_yaml(doc))
    model["datasets"][0]["name"] = None
    assert schema_errors(doc)
