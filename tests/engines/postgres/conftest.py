"""Fixtures for the PostgreSQL portability tests: the shop example in DuckDB and in a throwaway
PostgreSQL database, the engine (plus an extended model with extra ratio metrics) and the
`port` / `port_ext` harnesses that compare both engines (see portkit)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_KIT = Path(__file__).resolve().parents[2] / "kit" / "portkit.py"
if "portkit" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("portkit", _KIT)
    assert _spec is not None and _spec.loader is not None
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["portkit"] = _mod
    _spec.loader.exec_module(_mod)

import portkit  # noqa: E402

import dosi  # noqa: E402


@pytest.fixture(scope="session")
def pg_admin_dsn() -> str:
    why = portkit.pg_unavailable()
    if why is not None:
        pytest.skip(why)
    return portkit.PG_DSN


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return portkit.build_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="session")
def pg_dsn(
    pg_admin_dsn: str, shop_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of its own for this session holding the shop tables in schema `main`."""
    with portkit.session_database(pg_admin_dsn) as dsn:
        portkit.load_into_postgres(shop_db, dsn, tmp_path_factory.mktemp("csv"))
        yield dsn


@pytest.fixture(scope="session")
def shop_engine() -> Iterator[dosi.Engine]:
    e = dosi.Engine(model_path=portkit.SHOP_MODEL)
    yield e
    e.close()


@pytest.fixture(scope="session")
def ext_engine() -> Iterator[dosi.Engine]:
    e = dosi.Engine(model_text=portkit.extended_model_text(portkit.EXTRA_METRICS))
    yield e
    e.close()


@pytest.fixture(scope="session")
def port(shop_engine: dosi.Engine, shop_db: Path, pg_dsn: str) -> portkit.Portability:
    return portkit.Portability(shop_engine, shop_db, pg_dsn)


@pytest.fixture(scope="session")
def port_ext(ext_engine: dosi.Engine, shop_db: Path, pg_dsn: str) -> portkit.Portability:
    return portkit.Portability(ext_engine, shop_db, pg_dsn)
