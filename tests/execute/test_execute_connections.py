"""Connection profiles (dosi.execute.connections) and execution through them (issue 2 item 7:
DuckDB in process, a database file or in memory; results as rows and as an Arrow table)."""

from __future__ import annotations

from pathlib import Path

import pytest
from enginekit import Ref, mini_yaml

from dosi.engine import Engine
from dosi.errors import ExecuteError
from dosi.execute.connections import parse_connections


def test_reference_shape_with_default() -> None:
    c = parse_connections(
        {
            "shop": {"type": "duckdb", "uri": "/data/shop.duckdb", "default": True},
            "wh": {"type": "postgres", "uri": "postgresql://x"},
        }
    )
    assert c.duckdb == {"shop": "/data/shop.duckdb"}
    assert c.other == {"wh": "postgres"}
    assert c.path_for(None) == "/data/shop.duckdb"


def test_single_duckdb_profile_is_the_default_and_strings_are_paths() -> None:
    assert parse_connections({"a": "x.duckdb"}).path_for(None) == "x.duckdb"


def test_agent_yml_datasources_and_relative_paths(tmp_path: Path) -> None:
    c = parse_connections(
        {"agent": {"datasources": {"local": {"type": "duckdb", "uri": "duckdb:////data/s.db"}}}},
        base_dir=tmp_path,
    )
    assert c.path_for("local") == "/data/s.db"
    rel = parse_connections({"datasources": {"l": {"type": "duckdb", "path": "s.db"}}}, tmp_path)
    assert rel.path_for("l") == str(tmp_path / "s.db")


def test_list_form() -> None:
    c = parse_connections([{"name": "a", "type": "duckdb", "uri": "a.db", "default": True}])
    assert c.path_for(None) == "a.db"


def test_unknown_and_non_duckdb_profiles_are_structured_errors() -> None:
    c = parse_connections({"shop": "s.db", "wh": {"type": "snowflake"}})
    with pytest.raises(ExecuteError) as unknown:
        c.path_for("shpo")
    assert unknown.value.code == "config"
    assert "shop" in unknown.value.candidates
    with pytest.raises(ExecuteError) as other:
        c.path_for("wh")
    assert other.value.code == "config" and "snowflake" in other.value.message


def test_execute_through_a_named_profile_and_as_arrow(mini_db: Path, mini_ref: Ref) -> None:
    eng = Engine(model_text=mini_yaml(), connections={"m": {"type": "duckdb", "uri": str(mini_db)}})
    q = {"metrics": ["revenue"], "group_by": ["orders.status"]}
    res = eng.execute(q, connection="m")
    want = dict(mini_ref.rows("SELECT status, SUM(amount) FROM orders GROUP BY 1"))
    assert {r["status"]: r["revenue"] for r in res["rows"]} == {
        k: float(v) for k, v in want.items()
    }
    table = eng.execute_arrow(q)  # the single profile is the default
    assert table.column_names == ["status", "revenue"]
    assert table.schema.field("revenue").metadata[b"dosi.metric"] == b"revenue"
    assert table.num_rows == res["row_count"]
