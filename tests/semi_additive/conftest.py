"""Fixtures for the D-SEMI tests: the account-balance model of tests/kit/semikit.py on DuckDB."""

from __future__ import annotations

from pathlib import Path

import pytest
import semikit

import dosi


@pytest.fixture(scope="session")
def semi_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("semi") / "semi.duckdb"
    semikit.build_semi(path)
    return path


@pytest.fixture(scope="session")
def semi_engine(semi_db: Path) -> dosi.Engine:
    return dosi.Engine(
        model_text=semikit.semi_model_text(),
        connections={"db": {"type": "duckdb", "uri": str(semi_db)}},
    )
