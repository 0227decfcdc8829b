"""Fixtures for the upstream TPC-DS example: the model (copied from the Ossie spec into
tests/fixtures), a small generated database and a hand-written-SQL reference over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import norm
from tpcdskit import MODEL, build

from dosi.engine import Engine


class TpcdsRef:
    """Hand-written SQL over the same tables, with `public` as the default schema."""

    def __init__(self, path: Path) -> None:
        self.con = duckdb.connect(str(path), read_only=True)
        self.con.execute("SET schema = 'public'")

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(norm(v) for v in r) for r in self.con.execute(sql).fetchall()]


@pytest.fixture(scope="session")
def tpcds_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("tpcds"))


@pytest.fixture(scope="session")
def tpcds_ref(tpcds_db: Path) -> Iterator[TpcdsRef]:
    ref = TpcdsRef(tpcds_db)
    yield ref
    ref.con.close()


@pytest.fixture(scope="session")
def tpcds() -> Iterator[Engine]:
    engine = Engine(model_path=MODEL)
    yield engine
    engine.close()
