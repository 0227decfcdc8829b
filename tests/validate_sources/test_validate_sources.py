"""Validation against the warehouse (issue 21 item 7): `Engine.validate_sources()`, `dosi
validate --db / --connections` and REST `/v1/validate` with `"sources": true` check that every
dataset's source exists and that every column a field, key or relationship names exists with
a compatible type, each problem a structured issue with the dataset, the column and close
candidates from the real table; plain `dosi validate` stays offline and says so. CHECKLIST
CORE-MOD-01 (a model loads) is the offline half. The engines' own catalogs are read on
DuckDB and SQLite here, and on every engine of the conformance suite in
tests/engines/matrix/test_matrix_filters_validate.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from enginekit import MINI_TABLES, make_db, mini_yaml

from dosi.analysis.source_check import compatible, type_family
from dosi.engine import Engine
from dosi.frontends.cli import cli


def _broken() -> str:
    """The mini shop with a misspelt column (`amountt`), a field declared Integer over a
    VARCHAR column, a relationship column that does not exist and a table that does not."""
    doc = yaml.safe_load(mini_yaml())
    sm = doc["semantic_model"][0]
    ds = {d["name"]: d for d in sm["datasets"]}
    fields = {f["name"]: f for f in ds["orders"]["fields"]}
    fields["amount"]["expression"]["dialects"][0]["expression"] = "amountt"
    fields["status"]["datatype"] = "Integer"
    rel = next(r for r in sm["relationships"] if r["name"] == "items_to_orders")
    rel["from_columns"] = ["order_no"]
    ds["refunds"]["source"] = "refundz"
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("validate_sources")
    db = make_db(d / "mini.duckdb", MINI_TABLES)
    lite = d / "mini.sqlite"
    con = sqlite3.connect(lite)
    for stmt in MINI_TABLES:
        con.execute(stmt.replace("DATE '", "'"))
    con.commit()
    con.close()
    (d / "good.yaml").write_text(mini_yaml(), encoding="utf-8")
    (d / "bad.yaml").write_text(_broken(), encoding="utf-8")
    conns = {"lite": {"type": "sqlite", "uri": str(lite), "default": True}}
    (d / "conns.yaml").write_text(yaml.safe_dump(conns), encoding="utf-8")
    return {
        "db": db,
        "sqlite": lite,
        "good": d / "good.yaml",
        "bad": d / "bad.yaml",
        "conns": d / "conns.yaml",
    }


def _issues(out: dict[str, Any]) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    return {(i["code"], i["dataset"], i.get("column")): i for i in out["issues"]}


def _check_broken(out: dict[str, Any], engine: str) -> None:
    assert out["valid"] is False and out["checked"] == "warehouse" and out["engine"] == engine
    got = _issues(out)
    missing = got[("column_not_found", "orders", "amountt")]
    assert missing["field"] == "orders.amount" and missing["candidates"][0] == "amount"
    assert missing["path"] == "datasets[orders].fields[amount]"
    key = got[("column_not_found", "order_items", "order_no")]
    assert "relationship `items_to_orders`" in key["message"] and "order_id" in key["candidates"]
    assert got[("source_not_found", "refunds", None)]["candidates"] == ["refunds"]
    wrong = got[("column_type_mismatch", "orders", "status")]  # SQLite keeps the declared name
    assert wrong["declared"] == "Integer" and wrong["actual"] == "VARCHAR"
    assert len(out["issues"]) == 4, out["issues"]


def test_a_model_that_matches_its_tables(files: dict[str, Path]) -> None:
    e = Engine(model_path=files["good"])
    try:
        out = e.validate_sources(db_path=files["db"])
    finally:
        e.close()
    assert out == {
        "valid": True,
        "checked": "warehouse",
        "engine": "duckdb",
        "datasets": dict.fromkeys(["orders", "customers", "order_items", "refunds"], "catalog"),
        "issues": [],
    }


def test_duckdb_catalog_names_each_problem(files: dict[str, Path]) -> None:
    e = Engine(model_path=files["bad"])
    try:
        _check_broken(e.validate_sources(db_path=files["db"]), "duckdb")
    finally:
        e.close()


def test_sqlite_catalog_names_each_problem(files: dict[str, Path]) -> None:
    e = Engine(model_path=files["bad"], connections=yaml.safe_load(files["conns"].read_text()))
    try:
        out = e.validate_sources()
        assert set(out["datasets"].values()) == {"catalog"}
        _check_broken(out, "sqlite")
    finally:
        e.close()


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_plain_validate_is_offline_and_says_so(files: dict[str, Path]) -> None:
    res = _cli("validate", "-m", str(files["bad"]))  # the tables are not looked at
    assert res.exit_code == 0, res.output
    assert "checked offline" in res.output and "--db" in res.output
    res = _cli("validate", "-m", str(files["good"]), "--format", "json")
    assert json.loads(res.output)["checked"] == "model"


def test_cli_validate_against_the_database(files: dict[str, Path]) -> None:
    ok = _cli("validate", "-m", str(files["good"]), "--db", str(files["db"]))
    assert ok.exit_code == 0, ok.output
    assert "checked against the warehouse (duckdb)" in ok.output
    bad = _cli("validate", "-m", str(files["bad"]), "--db", str(files["db"]))
    assert bad.exit_code == 3
    assert "[column_not_found]" in bad.output and "did you mean: amount" in bad.output
    assert "[source_not_found]" in bad.output
    out = _cli(
        "validate", "-m", str(files["bad"]), "--connections", str(files["conns"]), "-f", "json"
    )
    assert out.exit_code == 3
    body = json.loads(out.output)
    assert body["checked"] == "model and warehouse" and body["valid"] is False
    _check_broken(body["sources"], "sqlite")


def test_rest_validate_with_sources(files: dict[str, Path]) -> None:
    from fastapi.testclient import TestClient

    from dosi.frontends.rest.app import create_app

    with TestClient(create_app(files["good"], db_path=str(files["db"]))) as c:
        plain = c.post("/v1/validate", json={"model": files["bad"].read_text()}).json()
        assert plain["valid"] is True and plain["checked"] == "model"
        body = c.post(
            "/v1/validate", json={"model": files["bad"].read_text(), "sources": True}
        ).json()
        assert body["checked"] == "model and warehouse" and body["valid"] is False
        _check_broken(body["sources"], "duckdb")
        good = c.post(
            "/v1/validate", json={"model": files["good"].read_text(), "sources": True}
        ).json()
        assert good["valid"] is True and good["sources"]["issues"] == []
        wrong = c.post("/v1/validate", json={"model": "x", "sources": "yes"})
        assert wrong.status_code == 400 and wrong.json()["code"] == "invalid_request"


@pytest.mark.parametrize(
    ("declared", "actual", "dialect", "ok"),
    [
        ("Integer", "BIGINT", "duckdb", True),
        ("Decimal", "decimal128(10, 2)", "datafusion", True),
        ("Date", "TIMESTAMP WITH TIME ZONE", "postgres", True),
        ("Boolean", "tinyint", "mysql", True),
        ("Date", "TEXT", "sqlite", True),
        ("Date", "character varying", "postgres", False),
        ("Integer", "VARCHAR", "duckdb", False),
        ("String", "INTEGER", "duckdb", False),
        ("Boolean", "date32[day]", "datafusion", False),
        ("Integer", "UUID", "duckdb", True),  # a type dosi does not know is never flagged
    ],
)
def test_type_compatibility(declared: str, actual: str, dialect: str, ok: bool) -> None:
    assert compatible(declared, actual, dialect) is ok, (declared, actual, type_family(actual))
