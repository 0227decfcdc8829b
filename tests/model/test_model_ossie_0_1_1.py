"""Ossie 0.1.1 documents load, upgraded in memory (issue 8, item 3).

0.1.1 (apache/ossie tag osi-0.1.1-rc1) differs from 0.2.0.dev0 by: top-level `dialects` /
`vendors` listings, no BIGQUERY dialect, `vendor_name` limited to an enum, and no `datatype`
on fields and metrics. A document keeping those rules loads with one `model_version_upgraded`
warning; one breaking them is a ModelError (stage `parse`, as any schema violation).
Requirement IDs: CORE-MOD-01 (loading), CORE-MOD-06 (dialect enum), CORE-MOD-09 (extensions).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from enginekit import assert_rows_equal, result_rows

from dosi.engine import Engine, validate
from dosi.errors import ModelError
from dosi.frontends.cli import cli

V011 = textwrap.dedent(
    """\
    version: "0.1.1"
    dialects: [ANSI_SQL, SNOWFLAKE]
    vendors: [COMMON, DBT]
    semantic_model:
      - name: shop_011
        description: written against the 0.1.1 schema (no datatype anywhere)
        custom_extensions:
          - vendor_name: DBT
            data: '{"project_name": "shop"}'
        datasets:
          - name: orders
            source: orders
            primary_key: [order_id]
            fields:
              - name: customer_id
                expression: {dialects: [{dialect: ANSI_SQL, expression: customer_id}]}
              - name: order_date
                expression: {dialects: [{dialect: ANSI_SQL, expression: order_date}]}
                dimension: {is_time: true}
              - name: ship_date
                expression: {dialects: [{dialect: ANSI_SQL, expression: ship_date}]}
              - name: amount
                expression:
                  dialects:
                    - {dialect: ANSI_SQL, expression: amount}
                    - {dialect: SNOWFLAKE, expression: "amount::NUMBER(10, 2)"}
          - name: customers
            source: customers
            primary_key: [id]
            fields:
              - name: region
                expression: {dialects: [{dialect: ANSI_SQL, expression: region}]}
                dimension: {is_time: false}
                custom_extensions:
                  - vendor_name: COMMON
                    data: '{}'
        relationships:
          - name: orders_to_customers
            from: orders
            to: customers
            from_columns: [customer_id]
            to_columns: [id]
        metrics:
          - name: revenue
            expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
            description: total order amount
    """
)


def upgraded_warnings(engine: Engine) -> list[str]:
    return [w["code"] for w in engine.warnings]


def test_core_mod_01_a_0_1_1_model_loads_with_one_upgrade_warning(
    mini_db: Path, mini_ref: Any
) -> None:
    """CORE-MOD-01: a 0.1.1 document loads, warns once, and answers like hand-written SQL."""
    engine = Engine(model_text=V011)
    assert upgraded_warnings(engine) == ["model_version_upgraded"]
    q = {"metrics": ["revenue"], "group_by": ["customers.region"]}
    got = engine.execute(q, db_path=mini_db)
    expected = mini_ref.rows(
        "SELECT c.region, SUM(o.amount) FROM orders o "
        "LEFT JOIN customers c ON o.customer_id = c.id GROUP BY 1"
    )
    assert_rows_equal(result_rows(got, ["region", "revenue"]), expected)


def test_0_1_1_is_time_keeps_its_meaning(mini_db: Path, mini_ref: Any) -> None:
    """CORE-MOD-08: 0.1.1 has no datatype, so is_time alone marks time fields: order_date (is_time true) is
    the metric_time axis; ship_date (unset) is no time field before or after the upgrade."""
    engine = Engine(model_text=V011)
    q = {"metrics": ["revenue"], "group_by": ["metric_time:month"]}
    got = engine.execute(q, db_path=mini_db)
    expected = mini_ref.rows(
        "SELECT DATE_TRUNC('month', order_date), SUM(amount) FROM orders GROUP BY 1"
    )
    assert_rows_equal(result_rows(got, ["metric_time__month", "revenue"]), expected)
    times = {d["name"]: d["is_time"] for d in engine.dimensions()}
    assert times["orders.order_date"] is True
    assert times["orders.ship_date"] is False


def test_core_mod_01_a_0_1_1_json_document_loads_the_same(mini_db: Path) -> None:
    """CORE-MOD-01: the same 0.1.1 document as JSON gives the same SQL and one warning."""
    from_yaml = Engine(model_text=V011)
    from_json = Engine(model_text=json.dumps(yaml.safe_load(V011)))
    q = {"metrics": ["revenue"], "group_by": ["customers.region"]}
    assert from_json.compile(q)["sql"] == from_yaml.compile(q)["sql"]
    assert upgraded_warnings(from_json) == ["model_version_upgraded"]


def test_validate_says_which_version_it_read(tmp_path: Path) -> None:
    """`dosi validate` and validate() name the version read; a current document reads as
    0.2.0.dev0 without the upgrade warning."""
    result = validate(V011)
    assert (result["valid"], result["version"]) == (True, "0.1.1")
    assert [w["code"] for w in result["warnings"]] == ["model_version_upgraded"]
    path = tmp_path / "m.yaml"
    path.write_text(V011, encoding="utf-8")
    out = CliRunner().invoke(cli, ["validate", "-m", str(path)])
    assert out.exit_code == 0
    assert "Ossie 0.1.1, upgraded in memory to 0.2.0.dev0" in out.output
    current = V011.replace('version: "0.1.1"', 'version: "0.2.0.dev0"').replace(
        "dialects: [ANSI_SQL, SNOWFLAKE]\nvendors: [COMMON, DBT]\n", ""
    )
    assert validate(current)["version"] == "0.2.0.dev0"
    assert validate(current)["warnings"] == []


BREAKS: list[tuple[str, str, str, str, str]] = [
    # (name, needle, replacement, code, path)
    (
        "datatype_on_a_field",
        "          - name: ship_date\n",
        "          - name: ship_date\n            datatype: Date\n",
        "unknown_model_key",
        "datasets[orders].fields[ship_date].datatype",
    ),
    (
        "datatype_on_a_metric",
        "        description: total order amount\n",
        "        description: total order amount\n        datatype: Decimal\n",
        "unknown_model_key",
        "metrics[revenue].datatype",
    ),
    (
        "bigquery_dialect",
        '{dialect: SNOWFLAKE, expression: "amount::NUMBER(10, 2)"}',
        "{dialect: BIGQUERY, expression: amount}",
        "invalid_model_value",
        "datasets[orders].fields[amount].expression.dialects[1].dialect",
    ),
    (
        "vendor_outside_the_enum",
        "vendor_name: COMMON",
        "vendor_name: DATUS",
        "invalid_model_value",
        "datasets[customers].fields[region].custom_extensions[0].vendor_name",
    ),
    (
        "listing_value_outside_the_enum",
        "dialects: [ANSI_SQL, SNOWFLAKE]",
        "dialects: [ANSI_SQL, BIGQUERY]",
        "invalid_model_value",
        "dialects[1]",
    ),
    (
        "listing_not_a_list",
        "vendors: [COMMON, DBT]",
        "vendors: COMMON",
        "invalid_model_value",
        "vendors",
    ),
    (
        "key_neither_version_allows",
        "        primary_key: [id]\n",
        "        primary_key: [id]\n        owner: bi\n",
        "unknown_model_key",
        "datasets[customers].owner",
    ),
]


@pytest.mark.parametrize(
    ("name", "needle", "replacement", "code", "path"), BREAKS, ids=[b[0] for b in BREAKS]
)
def test_core_mod_what_0_1_1_does_not_allow_stays_an_error(
    name: str, needle: str, replacement: str, code: str, path: str
) -> None:
    """CORE-MOD-06 / CORE-MOD-09 as of 0.1.1: each break is one issue, with its path and
    line, under stage `parse`."""
    assert needle in V011
    text = V011.replace(needle, replacement)
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    err = info.value
    assert err.code == "parse"
    assert [(d.code, d.path) for d in err.issues] == [(code, path)]
    assert err.issues[0].line is not None
    assert "0.1.1" in err.issues[0].message or code == "unknown_model_key"
    assert [w.code for w in err.warnings] == ["model_version_upgraded"]


def test_0_1_1_breaks_are_all_reported_at_once() -> None:
    """Every 0.1.1 violation and every ordinary schema issue land in one ModelError."""
    text = V011.replace("vendor_name: COMMON", "vendor_name: DATUS").replace(
        "          - name: ship_date\n",
        "          - name: ship_date\n            datatype: Date\n",
    )
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert sorted(d.code for d in info.value.issues) == [
        "invalid_model_value",
        "unknown_model_key",
    ]


def test_0_1_1_listings_are_not_part_of_the_current_schema() -> None:
    """A 0.2.0.dev0 document cannot carry the 0.1.1 top-level listings."""
    text = V011.replace('version: "0.1.1"', 'version: "0.2.0.dev0"')
    with pytest.raises(ModelError) as info:
        Engine(model_text=text)
    assert sorted((d.code, d.path) for d in info.value.issues) == [
        ("unknown_model_key", "dialects"),
        ("unknown_model_key", "vendors"),
    ]
