"""One conformance suite on every engine (issue 14): the shop model and data, loaded into
SQLite, chDB, DataFusion, Spark, PostgreSQL and MariaDB, each handed to dosi as a client
object; every query of the matrix (plain, every grain, time ranges, multi-fact merges with
D-FILL, every window family and modifier, streaming windows) returns on the engine, value by
value, what it returns on DuckDB (floats to 1e-9 relative). A feature an engine lacks must be a
structured `dialect_unsupported_*` error raised before any SQL runs (never wrong rows)."""

from __future__ import annotations

from typing import Any

import pytest
from conformkit import QUERIES, compare

import dosi
from dosi.errors import QueryError

_REFERENCE: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}


def _expected(reference: dosi.Engine, name: str) -> tuple[list[str], list[dict[str, Any]]]:
    if name not in _REFERENCE:
        res = reference.execute(QUERIES[name], connection="duck")
        _REFERENCE[name] = (list(res["columns"]), list(res["rows"]))
    return _REFERENCE[name]


@pytest.mark.parametrize("name", list(QUERIES))
def test_engine_matches_duckdb(
    target: tuple[str, dosi.Engine], reference: dosi.Engine, name: str
) -> None:
    kind, eng = target
    columns, want = _expected(reference, name)
    try:
        got = eng.execute(QUERIES[name], connection=kind)
    except QueryError as err:  # a gate: structured, before any SQL
        assert err.code.startswith("dialect_unsupported"), f"{kind} {name}: {err.code} {err}"
        pytest.xfail(f"{kind} refuses {name}: {err.code}")
    assert got["columns"] == columns
    compare(got["rows"], want, columns, f"{kind} {name}")


def test_matrix_has_rows(reference: dosi.Engine) -> None:
    """Guard: most queries of the matrix return rows on DuckDB, so comparisons are not
    vacuous."""
    empty = [n for n in QUERIES if not _expected(reference, n)[1]]
    assert len(empty) <= 2, f"queries without rows: {empty}"
