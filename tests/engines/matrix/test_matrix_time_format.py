"""D-FORMAT on every engine (issue 12, Deliver items 4 and 7): encoded time columns grouped,
truncated and range-filtered on SQLite, chDB, DataFusion, Spark, PostgreSQL (and MariaDB when
enabled), value by value against DuckDB. DuckDB itself is checked against hand-written SQL in
tests/time_format/test_time_format.py. Requirement IDs: FMT-GRP-05/06, FMT-FLT-01,
FMT-DEC-20 (decoded values), and the dialect facts of dosi.sql.dialects.time_format."""

from __future__ import annotations

from typing import Any

import pytest
from conformkit import compare
from fmtkit import FMT_QUERIES

import dosi

_REFERENCE: dict[str, Any] = {}


def _expected(reference: dosi.Engine, name: str) -> tuple[list[str], list[dict[str, Any]]]:
    if name not in _REFERENCE:
        res = reference.execute(FMT_QUERIES[name], connection="duck")
        _REFERENCE[name] = (list(res["columns"]), list(res["rows"]))
    return _REFERENCE[name]


@pytest.mark.parametrize("name", list(FMT_QUERIES))
def test_fmt_query_matches_duckdb(
    fmt_target: tuple[str, dosi.Engine], fmt_reference: dosi.Engine, name: str
) -> None:
    kind, eng = fmt_target
    columns, want = _expected(fmt_reference, name)
    got = eng.execute(FMT_QUERIES[name], connection=kind)
    assert got["columns"] == columns
    compare(got["rows"], want, columns, f"{kind} {name}")
