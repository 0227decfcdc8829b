"""Fixtures for the D-LOD metric tests: the worked-example orders model on DuckDB."""

from __future__ import annotations

from pathlib import Path

import lodmetrickit
import pytest
from enginekit import shop_db, shop_ref  # noqa: F401 - fixtures

import dosi


@pytest.fixture(scope="session")
def lod_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lodm") / "lod.duckdb"
    lodmetrickit.build_db(path)
    return path


@pytest.fixture(scope="session")
def lod_engine(lod_db: Path) -> dosi.Engine:
    return dosi.Engine(
        model_text=lodmetrickit.model_text(),
        connections={"db": {"type": "duckdb", "uri": str(lod_db)}},
    )
