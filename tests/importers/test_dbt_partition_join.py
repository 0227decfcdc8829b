"""`dosi import dbt` of MetricFlow's partition joins (issue 20/22 bed, `partition_join`): two
semantic models that both have an `is_partition` dimension of one name join on it as well as
on the entity. The importer writes the partition as a second key pair of the (Ossie composite)
relationship, and the planner joins on every pair.

The dimension model is a daily snapshot (one row per user per partition day), so a join on the
user alone repeats each view once per snapshot; the expected values come from plain Python over
the rows below (a view reads the snapshot of its own partition day, or none).
Requirement IDs: CORE-MOD-01 (the imported model loads), CORE-FAN-01 (no fan-out).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from dosi.engine import Engine
from dosi.importers.dbt import import_dbt

#: (user_id, ds_partitioned, home_state): user 1 moves on 01-02, user 2 has no 01-02 snapshot
SNAPSHOTS = [(1, "2024-01-01", "CA"), (1, "2024-01-02", "NY"), (2, "2024-01-01", "TX")]
#: (view_id, user_id, ds_partitioned)
VIEWS = [(1, 1, "2024-01-01"), (2, 1, "2024-01-02"), (3, 1, "2024-01-02"), (4, 2, "2024-01-02")]
VIEWS += [(5, 3, "2024-01-01")]  # a user with no snapshot at all

_DAY = {"time_granularity": "day"}
PROJECT: dict[str, Any] = {
    "views.yaml": {
        "semantic_model": {
            "name": "views",
            "node_relation": {"schema_name": "$source_schema", "alias": "pj_views"},
            "defaults": {"agg_time_dimension": "ds_partitioned"},
            "entities": [
                {"name": "view", "type": "primary", "expr": "view_id"},
                {"name": "user", "type": "foreign", "expr": "user_id"},
            ],
            "dimensions": [
                {
                    "name": "ds_partitioned",
                    "type": "time",
                    "type_params": _DAY,
                    "is_partition": True,
                }
            ],
            "measures": [{"name": "views", "agg": "count", "expr": "view_id"}],
        }
    },
    "users.yaml": {
        "semantic_model": {
            "name": "users",
            "node_relation": {"schema_name": "$source_schema", "alias": "pj_users"},
            "defaults": {"agg_time_dimension": "ds_partitioned"},
            "entities": [{"name": "user", "type": "primary", "expr": "user_id"}],
            "dimensions": [
                {
                    "name": "ds_partitioned",
                    "type": "time",
                    "type_params": _DAY,
                    "is_partition": True,
                },
                {"name": "home_state", "type": "categorical"},
            ],
        }
    },
}
METRICS = [{"metric": {"name": "views", "type": "simple", "type_params": {"measure": "views"}}}]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dbt_partition")
    for name, doc in PROJECT.items():
        (root / name).write_text(yaml.safe_dump(doc, sort_keys=False))
    (root / "metrics.yaml").write_text(yaml.safe_dump_all(METRICS, sort_keys=False))
    con = duckdb.connect(str(root / "data.duckdb"))
    con.execute("CREATE TABLE pj_users (user_id INT, ds_partitioned DATE, home_state TEXT)")
    con.executemany("INSERT INTO pj_users VALUES (?, CAST(? AS DATE), ?)", SNAPSHOTS)
    con.execute("CREATE TABLE pj_views (view_id INT, user_id INT, ds_partitioned DATE)")
    con.executemany("INSERT INTO pj_views VALUES (?, ?, CAST(? AS DATE))", VIEWS)
    con.close()
    return root


@pytest.fixture(scope="module")
def model(project: Path) -> dict[str, Any]:
    return import_dbt(project, schema="main").plain()


@pytest.fixture(scope="module")
def engine(model: dict[str, Any], project: Path) -> Engine:
    return Engine(
        model_text=yaml.safe_dump(model),
        connections={"db": {"type": "duckdb", "uri": str(project / "data.duckdb")}},
    )


def test_partition_is_a_second_key_pair(model: dict[str, Any]) -> None:
    """The relationship pairs the entity and then the shared partition; the DBT extension
    names the partitions it added."""
    (rel,) = model["semantic_model"][0]["relationships"]
    assert (rel["from"], rel["to"]) == ("views", "users")
    assert rel["from_columns"] == ["user", "ds_partitioned"]
    assert rel["to_columns"] == ["user", "ds_partitioned"]
    dbt = json.loads(rel["custom_extensions"][0]["data"])
    assert dbt == {"entity": "user", "partitions": ["ds_partitioned"]}


def test_views_by_snapshot_state_join_their_own_partition(engine: Engine) -> None:
    """Each view reads its own day's snapshot: no fan-out over user 1's two snapshots, and a
    view without a snapshot that day is the NULL group (LEFT join)."""
    state = {(u, d): s for u, d, s in SNAPSHOTS}
    want = Counter(state.get((u, d)) for _, u, d in VIEWS)
    got = engine.execute({"metrics": ["views"], "group_by": ["users.home_state"]})["rows"]
    assert {r["home_state"]: r["views"] for r in got} == dict(want)
    assert dict(want) == {"CA": 1, "NY": 2, None: 2}


def test_total_is_not_fanned_out(engine: Engine) -> None:
    got = engine.execute({"metrics": ["views"], "group_by": ["users.home_state"]})["rows"]
    assert sum(r["views"] for r in got) == len(VIEWS)
