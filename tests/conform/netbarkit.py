"""Shared D-CONFORM test kit: the netbar example (three conformed facts), its variants and fixtures.

Expected values come from hand-written SQL on the same DuckDB file (`Ref`), never from dosi.
"""

from __future__ import annotations

import copy
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from enginekit import REPO, Ref

from dosi.engine import Engine

NETBAR_MODEL = REPO / "examples" / "netbar" / "model.yaml"
NETBAR_GENERATOR = REPO / "examples" / "netbar" / "generate.py"


def netbar_doc() -> dict[str, Any]:
    """The example model as a document, for variants (a fresh copy each call)."""
    return copy.deepcopy(_DOC)


_DOC: dict[str, Any] = yaml.safe_load(NETBAR_MODEL.read_text())


def sm(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["semantic_model"][0]


def relationship(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in sm(doc)["relationships"] if r["name"] == name)


def field_of(doc: dict[str, Any], dataset: str, name: str) -> dict[str, Any]:
    ds = next(d for d in sm(doc)["datasets"] if d["name"] == dataset)
    return next(f for f in ds["fields"] if f["name"] == name)


def conformed_ext(**extra: Any) -> list[dict[str, str]]:
    import json

    payload = {"v": "1.8", "requires": ["cardinality"], "cardinality": "many_to_many", **extra}
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def to_yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


@pytest.fixture(scope="session")
def netbar_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location("netbar_generate", NETBAR_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return Path(gen.build(tmp_path_factory.mktemp("netbar") / "netbar.duckdb"))


@pytest.fixture(scope="session")
def netbar_ref(netbar_db: Path) -> Iterator[Ref]:
    ref = Ref(netbar_db)
    yield ref
    ref.close()


@pytest.fixture(scope="session")
def netbar() -> Iterator[Engine]:
    engine = Engine(model_path=NETBAR_MODEL)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def netbar_run(netbar: Engine, netbar_db: Path) -> Callable[..., Any]:
    def run(query: dict[str, Any]) -> Any:
        return netbar.execute(query, db_path=netbar_db)

    return run


@pytest.fixture(scope="session")
def variant_run(netbar_db: Path) -> Callable[..., Any]:
    """Run a query on a variant of the example model (text), on the example data."""

    def run(model_text: str, query: dict[str, Any], mode: str = "datus") -> Any:
        engine = Engine(model_text=model_text, mode=mode)
        try:
            return engine.execute(query, db_path=netbar_db)
        finally:
            engine.close()

    return run
