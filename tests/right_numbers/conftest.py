"""Fixtures of the right-numbers tests (issue 20): the shop, conform and lod worlds, built once
per session into DuckDB files, and an engine per world. Public API only."""

from __future__ import annotations

from pathlib import Path

import pytest
from rightkit import FIX, build

import dosi


@pytest.fixture(scope="session")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("i20")
    return {n: build(tmp, n) for n in ("shop", "conform", "lod")}


@pytest.fixture(scope="session")
def shop() -> dosi.Engine:
    return dosi.Engine(model_path=FIX / "shop.yaml")


@pytest.fixture(scope="session")
def conform() -> dosi.Engine:
    return dosi.Engine(model_path=FIX / "conform.yaml")


@pytest.fixture(scope="session")
def lod() -> dosi.Engine:
    return dosi.Engine(model_path=FIX / "lod.yaml")
