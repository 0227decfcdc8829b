"""Fixtures for the D-LOD field tests: the sessions model of lodfieldkit on DuckDB."""

from __future__ import annotations

from pathlib import Path

import lodfieldkit
import pytest

import dosi


@pytest.fixture(scope="session")
def lodf_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lodf") / "lod.duckdb"
    lodfieldkit.build_db(path)
    return path


@pytest.fixture(scope="session")
def lodf(lodf_db: Path) -> dosi.Engine:
    return dosi.Engine(
        model_text=lodfieldkit.model_text(),
        connections={"db": {"type": "duckdb", "uri": str(lodf_db)}},
    )
