"""Keys are columns, not fields (issue 8, item 1).

Ossie "Datasets" / "Relationships": `primary_key`, `unique_keys` and relationship
`from_columns` / `to_columns` name columns of the dataset's source. A model need not declare
every key column as a field; such columns join as qualified physical columns. Requirement IDs:
CORE-MOD-02 (datasets, keys), CORE-MOD-03 (relationships).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from enginekit import (
    assert_rows_equal,
    dataset,
    field,
    metric,
    model_doc,
    rel,
    result_rows,
    to_yaml,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError


def lean_doc(**over: Any) -> dict[str, Any]:
    """The mini shop with every key column left undeclared: orders has no order_id or
    customer_id field, customers no id, order_items no order_id or line."""
    datasets = [
        dataset(
            "orders",
            [field("amount", datatype="Decimal"), field("channel", datatype="String")],
            primary_key=["order_id"],
        ),
        dataset("customers", [field("region", datatype="String")], primary_key=["id"]),
        dataset(
            "order_items",
            [field("product", datatype="String"), field("qty", datatype="Integer")],
            primary_key=["order_id", "line"],
        ),
    ]
    datasets[1]["unique_keys"] = [["id"]]
    relationships = [
        rel("orders_to_customers", "orders", "customers", ["customer_id"], ["id"]),
        rel("items_to_orders", "order_items", "orders", ["order_id"], ["order_id"]),
    ]
    metrics = [
        metric("revenue", "SUM(orders.amount)"),
        metric("units", "SUM(order_items.qty)"),
        metric("orders_with_region", "COUNT(DISTINCT customers.region)"),
    ]
    doc = model_doc(datasets, relationships, metrics)
    doc["semantic_model"][0].update(over)
    return doc


@pytest.fixture
def lean() -> Engine:
    return Engine(model_text=to_yaml(lean_doc()))


def test_core_mod_02_undeclared_key_columns_load_without_warnings(lean: Engine) -> None:
    """CORE-MOD-02: primary_key / unique_keys naming undeclared columns are accepted."""
    assert lean.warnings == []
    assert {d["name"]: d["primary_key"] for d in lean.datasets()} == {
        "orders": ["order_id"],
        "customers": ["id"],
        "order_items": ["order_id", "line"],
    }


def test_core_mod_03_join_on_undeclared_columns_renders_qualified_physical_columns(
    lean: Engine, mini_db: Path, mini_ref: Any
) -> None:
    """CORE-MOD-03: the ON clause reads the physical columns, qualified by dataset alias,
    and the answer matches hand-written SQL."""
    q = {"metrics": ["revenue"], "group_by": ["customers.region"]}
    sql = lean.compile(q)["sql"]
    assert "orders.customer_id = customers.id" in sql
    expected = mini_ref.rows(
        "SELECT c.region, SUM(o.amount) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY c.region"
    )
    got = lean.execute(q, db_path=mini_db)
    assert_rows_equal(result_rows(got, ["region", "revenue"]), expected)


def test_core_mod_03_two_hop_join_through_undeclared_keys(
    lean: Engine, mini_db: Path, mini_ref: Any
) -> None:
    """CORE-MOD-03: order_items -> orders -> customers, every key column undeclared."""
    q = {"metrics": ["units"], "group_by": ["customers.region", "orders.channel"]}
    expected = mini_ref.rows(
        "SELECT c.region, o.channel, SUM(i.qty) FROM order_items i "
        "LEFT JOIN orders o ON i.order_id = o.order_id "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1, 2"
    )
    got = lean.execute(q, db_path=mini_db)
    assert_rows_equal(result_rows(got, ["region", "channel", "units"]), expected)


def test_core_mod_03_undeclared_keys_keep_the_many_to_one_direction(lean: Engine) -> None:
    """CORE-MOD-03: from is the many side whether or not its columns are fields: grouping
    an orders metric by an order_items field is still a fan-out."""
    with pytest.raises(QueryError) as info:
        lean.compile({"metrics": ["revenue"], "group_by": ["order_items.product"]})
    assert info.value.code == "fan_out_risk"


def test_core_mod_03_duplicate_insensitive_aggregate_reaches_through_undeclared_keys(
    lean: Engine, mini_db: Path, mini_ref: Any
) -> None:
    """A COUNT DISTINCT over a dataset reached many-to-one is evaluated through the join,
    exactly as with declared key fields."""
    q = {"metrics": ["orders_with_region"], "group_by": ["orders.channel"]}
    expected = mini_ref.rows(
        "SELECT o.channel, COUNT(DISTINCT c.region) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    got = lean.execute(q, db_path=mini_db)
    assert_rows_equal(result_rows(got, ["channel", "orders_with_region"]), expected)


def test_declared_field_of_the_key_name_stands_for_the_column(mini_db: Path) -> None:
    """A relationship column that is a declared field joins on the field's expression (as the
    reference does), so a field renaming a column keeps working."""
    doc = lean_doc()
    customers = doc["semantic_model"][0]["datasets"][1]
    customers["fields"].append(field("id", "id + 0", datatype="Integer"))
    engine = Engine(model_text=to_yaml(doc))
    sql = engine.compile({"metrics": ["revenue"], "group_by": ["customers.region"]})["sql"]
    assert "orders.customer_id = customers.id + 0" in sql


def test_field_that_is_a_key_column_is_not_a_dimension() -> None:
    """D-DIM inference reads keys as columns: a field whose expression is the primary-key
    column plays the primary_key role even under another name."""
    doc = lean_doc()
    customers = doc["semantic_model"][0]["datasets"][1]
    customers["fields"].append(field("customer_key", "id", datatype="Integer"))
    engine = Engine(model_text=to_yaml(doc))
    roles = {d["name"]: (d["is_dimension"], d["source"]) for d in engine.dimensions()}
    assert roles["customers.customer_key"] == (False, "inferred:primary_key")
    assert roles["customers.region"][0] is True


def test_core_mod_03_arity_mismatch_is_still_an_invalid_model() -> None:
    """CORE-MOD-03: from/to columns pair one to one, declared or not."""
    doc = lean_doc()
    doc["semantic_model"][0]["relationships"][0]["from_columns"] = ["customer_id", "x"]
    with pytest.raises(ModelError) as info:
        Engine(model_text=to_yaml(doc))
    assert info.value.code == "invalid_model"
    assert [d.code for d in info.value.issues] == ["column_count_mismatch"]


def test_core_mod_03_relationship_to_a_missing_dataset_is_still_an_invalid_model() -> None:
    """CORE-MOD-03: relationship endpoints must be datasets of the model."""
    doc = lean_doc()
    doc["semantic_model"][0]["relationships"][0]["to"] = "clients"
    with pytest.raises(ModelError) as info:
        Engine(model_text=to_yaml(doc))
    assert info.value.code == "invalid_model"
    assert [(d["code"], d["path"]) for d in info.value.compile_errors] == [
        ("unknown_dataset", "relationships[orders_to_customers]")
    ]


def test_core_mod_02_repeated_key_columns_warn() -> None:
    """CORE-MOD-02: a column listed twice in a key, or a unique key declared twice, loads
    (the schema allows it) with a warning naming it."""
    doc = lean_doc()
    ds = doc["semantic_model"][0]["datasets"]
    ds[0]["primary_key"] = ["order_id", "order_id"]
    ds[1]["unique_keys"] = [["id"], ["id"]]
    engine = Engine(model_text=to_yaml(doc))
    assert [(w["code"], w["path"]) for w in engine.warnings] == [
        ("duplicate_key_column", "datasets[orders].primary_key"),
        ("duplicate_key", "datasets[customers].unique_keys"),
    ]


def test_undeclared_column_names_are_quoted_only_when_they_must_be() -> None:
    """An undeclared key column reads like a field expression naming it: a plain identifier
    stays unquoted (so the warehouse's case rules apply), anything else is quoted."""
    doc = lean_doc()
    rel_ = doc["semantic_model"][0]["relationships"][0]
    rel_["from_columns"], rel_["to_columns"] = ["CustKey"], ["customer id"]
    sql = Engine(model_text=to_yaml(doc)).compile(
        {"metrics": ["revenue"], "group_by": ["customers.region"]}
    )["sql"]
    assert 'orders.CustKey = customers."customer id"' in sql


KEY_COLUMNS = [
    ("orders", "order_id"),
    ("orders", "customer_id"),
    ("customers", "id"),
    ("order_items", "order_id"),
    ("order_items", "line"),
]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(declared=st.sets(st.sampled_from(KEY_COLUMNS)))
def test_declaring_key_columns_as_fields_changes_no_answer(
    declared: set[tuple[str, str]], mini_db: Path, mini_ref: Any
) -> None:
    """Property (CORE-MOD-02/03): whichever key columns a model also declares as fields,
    every answer is the one hand-written SQL gives."""
    doc = lean_doc()
    by_name = {d["name"]: d for d in doc["semantic_model"][0]["datasets"]}
    for ds, col in sorted(declared):
        by_name[ds]["fields"].append(field(col, datatype="Integer"))
    engine = Engine(model_text=to_yaml(doc))
    q = {"metrics": ["units", "revenue"], "group_by": ["customers.region"]}
    got = engine.execute(q, db_path=mini_db)
    expected = mini_ref.rows(
        "WITH u AS (SELECT c.region, SUM(i.qty) AS units FROM order_items i "
        "LEFT JOIN orders o ON i.order_id = o.order_id "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1), "
        "r AS (SELECT c.region, SUM(o.amount) AS revenue FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1) "
        "SELECT COALESCE(u.region, r.region), u.units, r.revenue "
        "FROM u FULL JOIN r ON u.region IS NOT DISTINCT FROM r.region"
    )
    assert_rows_equal(result_rows(got, ["region", "units", "revenue"]), expected)
