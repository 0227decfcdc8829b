"""Fixtures of the conformance suite: the shop built once into DuckDB (the reference) and
loaded into each engine, each engine handed to a dosi Engine as a client object. An engine
whose Python package (or Java, for Spark; or server, for PostgreSQL / MariaDB) is missing is
skipped with the reason shown in pytest's summary (`-rs`), never silently."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

for _name in ("conformkit", "extkit", "fmtkit", "semikit", "convkit"):
    if _name not in sys.modules:
        _spec = importlib.util.spec_from_file_location(
            _name, Path(__file__).resolve().parents[2] / "kit" / f"{_name}.py"
        )
        assert _spec is not None and _spec.loader is not None
        _mod = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = _mod
        _spec.loader.exec_module(_mod)

import conformkit  # noqa: E402
import convkit  # noqa: E402
import extkit  # noqa: E402
import fmtkit  # noqa: E402
import semikit  # noqa: E402

import dosi  # noqa: E402

ENGINES = ("sqlite", "chdb", "datafusion", "spark", "postgres", "mariadb")
_PACKAGES = {
    "chdb": ("chdb", "chdb"),
    "datafusion": ("datafusion", "datafusion"),
    "spark": ("pyspark", "spark"),
    "postgres": ("psycopg", "postgres"),
    "mariadb": ("pymysql", "mysql"),
}


@pytest.fixture(scope="session")
def shop_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shop and the extension matrix's `x_*` tables: one DuckDB file, one Parquet folder."""
    db, parquet = conformkit.build_shop(tmp_path_factory.mktemp("conformance"))
    extkit.build_ext(db, parquet)
    fmtkit.build_fmt(db, parquet)  # D-FORMAT's encoded time columns
    semikit.build_semi(db, parquet)  # D-SEMI balances
    convkit.build_conv(db, parquet)  # D-CONVERSION visits and buys
    return db, parquet


FEATURE_TABLES = (
    extkit.EXT_TABLES + fmtkit.FMT_TABLES + semikit.SEMI_TABLES + convkit.CONV_TABLES
)
TABLES = conformkit.TABLES + FEATURE_TABLES


@pytest.fixture(scope="session")
def model_text() -> str:
    return conformkit.conformance_model_text()


@pytest.fixture(scope="session")
def reference(model_text: str, shop_files: tuple[Path, Path]) -> Iterator[dosi.Engine]:
    eng = dosi.Engine(
        model_text=model_text, connections={"duck": {"type": "duckdb", "uri": str(shop_files[0])}}
    )
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def ext_model_text() -> str:
    return extkit.ext_model_text()


@pytest.fixture(scope="session")
def ext_reference(ext_model_text: str, shop_files: tuple[Path, Path]) -> Iterator[dosi.Engine]:
    eng = dosi.Engine(
        model_text=ext_model_text,
        connections={"duck": {"type": "duckdb", "uri": str(shop_files[0])}},
    )
    yield eng
    eng.close()


def _unavailable(kind: str) -> str | None:
    if kind in _PACKAGES:
        module, extra = _PACKAGES[kind]
        if importlib.util.find_spec(module) is None:
            return f"{kind}: the Python package `{module}` is not installed (pip install 'dosi[{extra}]')"
    if kind == "spark" and shutil.which("java") is None:
        return "spark: no Java runtime (apt-get install openjdk-17-jre-headless)"
    if kind == "postgres" and not os.environ.get("DOSI_TEST_POSTGRES"):
        return "postgres: set DOSI_TEST_POSTGRES (bash scripts/postgres.sh) to run"
    if kind == "mariadb" and not os.environ.get("DOSI_TEST_MARIADB"):
        return "mariadb: set DOSI_TEST_MARIADB (bash scripts/mariadb.sh) to run"
    return None


def _client(kind: str, shop_files: tuple[Path, Path], tmp: Path) -> tuple[Any, Any]:
    """(client object, closer) for one engine, loaded with the shop and the `x_*` tables."""
    db, parquet = shop_files
    if kind == "sqlite":
        con = conformkit.load_sqlite(db, tmp / "shop.sqlite", TABLES)
        return con, con.close
    if kind == "chdb":
        session = conformkit.load_chdb(parquet, tmp / "chdb", TABLES)
        return session, session.close
    if kind == "datafusion":
        return conformkit.load_datafusion(parquet, TABLES), lambda: None
    if kind == "spark":
        spark = conformkit.load_spark(parquet, tmp, TABLES)
        return spark, spark.stop
    if kind == "postgres":
        import psycopg

        portkit = _portkit()
        holder = portkit.session_database(os.environ["DOSI_TEST_POSTGRES"])
        dsn = holder.__enter__()
        portkit.load_into_postgres(db, dsn, tmp)
        con = psycopg.connect(dsn, autocommit=True)
        conformkit.load_postgres_tables(db, con, FEATURE_TABLES, portkit.pg_type)

        def close() -> None:
            con.close()
            holder.__exit__(None, None, None)

        return con, close
    import pymysql

    from dosi.execute.mysql_runner import parse_mysql_uri

    con = pymysql.connect(**parse_mysql_uri(os.environ["DOSI_TEST_MARIADB"]))
    conformkit.load_mysql(db, con, TABLES)
    return con, con.close


def _portkit() -> Any:
    if "portkit" not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "kit" / "portkit.py"
        spec = importlib.util.spec_from_file_location("portkit", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["portkit"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["portkit"]


@pytest.fixture(scope="session", params=ENGINES)
def loaded(
    request: pytest.FixtureRequest,
    shop_files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Any]]:
    """(engine kind, its client object loaded with every table), one per engine and session:
    the shop matrix and the extension matrix share it (Spark starts once)."""
    kind = request.param
    why = _unavailable(kind)
    if why is not None:
        pytest.skip(why)
    client, close = _client(kind, shop_files, tmp_path_factory.mktemp(kind))
    try:
        yield kind, client
    finally:
        close()


@pytest.fixture(scope="session")
def target(loaded: tuple[str, Any], model_text: str) -> Iterator[tuple[str, dosi.Engine]]:
    """(engine kind, a dosi Engine over the shop model whose only connection is that
    engine's client object)."""
    kind, client = loaded
    eng = dosi.Engine(model_text=model_text, connections={kind: {"type": kind, "client": client}})
    try:
        yield kind, eng
    finally:
        eng.close()


@pytest.fixture(scope="session")
def ext_target(loaded: tuple[str, Any], ext_model_text: str) -> Iterator[tuple[str, dosi.Engine]]:
    """(engine kind, a dosi Engine over the extension model on the same client object)."""
    kind, client = loaded
    eng = dosi.Engine(
        model_text=ext_model_text, connections={kind: {"type": kind, "client": client}}
    )
    try:
        yield kind, eng
    finally:
        eng.close()


@pytest.fixture(scope="session")
def fmt_reference(shop_files: tuple[Path, Path]) -> Iterator[dosi.Engine]:
    """The D-FORMAT model on DuckDB (the values every other engine is compared with)."""
    eng = dosi.Engine(
        model_text=fmtkit.fmt_model_text(),
        connections={"duck": {"type": "duckdb", "uri": str(shop_files[0])}},
    )
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def fmt_target(loaded: tuple[str, Any]) -> Iterator[tuple[str, dosi.Engine]]:
    """(engine kind, a dosi Engine over the D-FORMAT model on the same client object)."""
    kind, client = loaded
    eng = dosi.Engine(
        model_text=fmtkit.fmt_model_text(), connections={kind: {"type": kind, "client": client}}
    )
    try:
        yield kind, eng
    finally:
        eng.close()


def _feature_engine(text: str, client: tuple[str, Any] | Path) -> dosi.Engine:
    if isinstance(client, Path):
        return dosi.Engine(model_text=text, connections={"duck": {"type": "duckdb", "uri": str(client)}})
    kind, obj = client
    return dosi.Engine(model_text=text, connections={kind: {"type": kind, "client": obj}})


@pytest.fixture(scope="session")
def semi_reference(shop_files: tuple[Path, Path]) -> Iterator[dosi.Engine]:
    """The D-SEMI balances model on DuckDB (the values every other engine is compared with)."""
    eng = _feature_engine(semikit.semi_model_text(), shop_files[0])
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def semi_target(loaded: tuple[str, Any]) -> Iterator[tuple[str, dosi.Engine]]:
    eng = _feature_engine(semikit.semi_model_text(), loaded)
    yield loaded[0], eng
    eng.close()


@pytest.fixture(scope="session")
def conv_reference(shop_files: tuple[Path, Path]) -> Iterator[dosi.Engine]:
    """The D-CONVERSION funnel model on DuckDB."""
    eng = _feature_engine(convkit.conv_model_text(), shop_files[0])
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def conv_target(loaded: tuple[str, Any]) -> Iterator[tuple[str, dosi.Engine]]:
    eng = _feature_engine(convkit.conv_model_text(), loaded)
    yield loaded[0], eng
    eng.close()
