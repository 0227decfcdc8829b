"""Fixtures of the access-policy tests (issue 30): the full database, and `only_rows`, one
database per user holding only the rows that user may see (`accesskit`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from accesskit import USER_ROWS, write_db


@pytest.fixture(scope="session")
def acl_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_db(tmp_path_factory.mktemp("acl") / "all.duckdb")


@pytest.fixture(scope="session")
def only_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """user -> a database whose orders hold only that user's rows (customers whole)."""
    base = tmp_path_factory.mktemp("acl_only")
    return {u: write_db(base / f"{u}.duckdb", keep) for u, keep in USER_ROWS.items()}
