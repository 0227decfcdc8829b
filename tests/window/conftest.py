"""Fixtures for the D-WINDOW value tests: one temp DuckDB file per test module."""

from __future__ import annotations

import pytest
from wm_common import build_db


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The module's own temp DuckDB file holding `SALES` and `RETURNS` (wm_common)."""
    return build_db(tmp_path_factory.mktemp("win") / "win.duckdb")
