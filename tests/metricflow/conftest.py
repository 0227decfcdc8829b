"""Fixtures for the MetricFlow test bed: one DuckDB file holding every fixture table."""

from __future__ import annotations

from pathlib import Path

import pytest
from mfbed import build_database


@pytest.fixture(scope="session")
def mf_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_database(tmp_path_factory.mktemp("metricflow") / "mf.duckdb")
