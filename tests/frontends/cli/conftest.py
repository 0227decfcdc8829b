"""Fixtures for the `dosi` command-line tests: the shop database, a runner, a mini model."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner, Result
from clikit import MINI_MODEL, SHOP_DIR, SHOP_MODEL

from dosi.frontends.cli import cli


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "cli_tests_shop_generate", SHOP_DIR / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scale-1 shop database, built once for the session."""
    db = tmp_path_factory.mktemp("cli_shop") / "shop.duckdb"
    return Path(_load_generator().build(db))


@pytest.fixture(scope="session")
def sql(shop_db: Path) -> Callable[[str], list[tuple[Any, ...]]]:
    """Plain DuckDB SQL over the test database (the reference answers)."""

    def run(text: str) -> list[tuple[Any, ...]]:
        con = duckdb.connect(str(shop_db), read_only=True)
        try:
            return con.sql(text).fetchall()
        finally:
            con.close()

    return run


@pytest.fixture
def mini_model(tmp_path: Path) -> Path:
    path = tmp_path / "mini.yaml"
    path.write_text(MINI_MODEL, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOSI_MODEL", raising=False)
    monkeypatch.delenv("DOSI_DB", raising=False)
    monkeypatch.delenv("DOSI_DEBUG", raising=False)


@pytest.fixture
def run() -> Callable[..., Result]:
    """`run("query", "-M", "revenue", input=None)` -> click Result (stdout / stderr apart)."""
    runner = CliRunner()

    def invoke(*args: Any, input: str | None = None, env: dict[str, str] | None = None) -> Result:
        return runner.invoke(
            cli, [str(a) for a in args], input=input, env=env, catch_exceptions=False
        )

    return invoke


@pytest.fixture
def shop(run: Callable[..., Result], shop_db: Path) -> Callable[..., Result]:
    """`shop("query", "-M", "revenue")`: run with the shop model and database."""

    def invoke(command: str, *args: Any, **kw: Any) -> Result:
        extra: list[Any] = ["-m", SHOP_MODEL]
        if command == "query":
            extra += ["--db", shop_db]
        return run(command, *extra, *args, **kw)

    return invoke
