"""Fixtures for the D-CONVERSION tests: the visits -> buys funnel of tests/kit/convkit.py."""

from __future__ import annotations

from pathlib import Path

import convkit
import pytest

import dosi


@pytest.fixture(scope="session")
def conv_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("conv") / "conv.duckdb"
    convkit.build_conv(path)
    return path


@pytest.fixture(scope="session")
def conv_engine(conv_db: Path) -> dosi.Engine:
    return dosi.Engine(
        model_text=convkit.conv_model_text(),
        connections={"db": {"type": "duckdb", "uri": str(conv_db)}},
    )
