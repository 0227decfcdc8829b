"""SQL snapshots per dialect (issue 19, Deliver item 4): the SQL `compile` gives for a fixed
query set (tests/kit/snapshotkit.py: every window family, merges, D-LOD fields and metrics,
streaming windows, D-FORMAT, D-CONFORM, D-DERIVE, D-PARAM, time_ranges) in every dialect dosi
renders, one file per dialect under tests/sql/snapshots/. A query a dialect refuses is recorded
as its error code and message. Any byte difference fails: a refactor must leave the SQL as it
was. These are an addition to the execution tests (which assert the numbers), never instead.

Regenerate after a deliberate SQL change, and review the diff:
    DOSI_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/sql/test_sql_snapshots.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from snapshotkit import SQL_QUERIES, render

from dosi.sql.dialects import DIALECTS

SNAPSHOTS = Path(__file__).parent / "snapshots"

# Every dialect name dosi renders (aliases such as `pg` or `chdb` resolve to one of these).
DIALECT_NAMES = (
    "athena",
    "bigquery",
    "clickhouse",
    "databricks",
    "datafusion",
    "doris",
    "duckdb",
    "hive",
    "mariadb",
    "mysql",
    "oracle",
    "postgres",
    "presto",
    "redshift",
    "snowflake",
    "spark",
    "sqlite",
    "starrocks",
    "tidb",
    "trino",
    "tsql",
)


def snapshot_text(dialect: str) -> str:
    parts = [f"-- SQL snapshot: dialect {dialect} ({len(SQL_QUERIES)} queries)\n"]
    for name, (model, query) in SQL_QUERIES.items():
        parts.append(f"\n-- query {name} (model {model})\n{render(model, query, dialect)}\n")
    return "".join(parts)


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
def test_sql_snapshot(dialect: str) -> None:
    text = snapshot_text(dialect)
    path = SNAPSHOTS / f"{dialect}.sql"
    if os.environ.get("DOSI_UPDATE_SNAPSHOTS"):
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"no snapshot {path.name}: run with DOSI_UPDATE_SNAPSHOTS=1"
    expected = path.read_bytes().decode("utf-8")
    if text != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), text.splitlines(), f"{path.name} (snapshot)", "now", lineterm=""
        )
        pytest.fail("SQL differs from the snapshot:\n" + "\n".join(list(diff)[:80]))


def test_every_dialect_has_a_snapshot() -> None:
    """The list above is the registry: a new dialect needs its snapshot file, a removed one
    leaves none behind."""
    assert set(DIALECT_NAMES) == set(DIALECTS)
    assert {p.stem for p in SNAPSHOTS.glob("*.sql")} == set(DIALECT_NAMES)
