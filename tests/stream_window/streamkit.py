"""Fixtures for the streaming-window tests: the hand-made event tables, the shop example and a
runner that executes a query through the public API and returns typed rows (Arrow values)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest
import stream_ref as ref

import dosi

REPO = Path(__file__).resolve().parents[2]
SHOP_MODEL = REPO / "examples" / "shop" / "model.yaml"
SHOP_GENERATOR = REPO / "examples" / "shop" / "generate.py"

Runner = Callable[[dict[str, Any]], list[dict[str, Any]]]


@pytest.fixture(scope="session")
def stream_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return ref.build_db(tmp_path_factory.mktemp("stream") / "stream.duckdb")


@pytest.fixture(scope="session")
def engine() -> Iterator[dosi.Engine]:
    e = dosi.Engine(model_text=ref.model_yaml())
    yield e
    e.close()


@pytest.fixture(scope="session")
def run(engine: dosi.Engine, stream_db: str) -> Runner:
    def _run(query: dict[str, Any]) -> list[dict[str, Any]]:
        return engine.execute(query, db_path=stream_db).arrow.to_pylist()

    return _run


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    spec = importlib.util.spec_from_file_location("shop_generate_stream", SHOP_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return str(gen.build(tmp_path_factory.mktemp("shop") / "shop.duckdb", scale=1))


@pytest.fixture(scope="session")
def shop_engine() -> Iterator[dosi.Engine]:
    e = dosi.Engine(model_path=SHOP_MODEL)
    yield e
    e.close()


@pytest.fixture(scope="session")
def shop_events(shop_db: str) -> tuple[ref.Event, ...]:
    """The shop's events as reference rows (`kind` holds event_type)."""
    con = duckdb.connect(shop_db, read_only=True)
    try:
        rows = con.execute(
            "SELECT event_id, event_ts, user_id, event_type, value FROM main.events"
        ).fetchall()
    finally:
        con.close()
    return tuple(ref.Event(*r) for r in rows)


# ------------------------------------------------------------------------------ comparison


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a.replace(tzinfo=None) == b.replace(tzinfo=None)
    return a == b


def _key(row: dict[str, Any], columns: Sequence[str]) -> tuple[Any, ...]:
    return tuple((row[c] is None, str(row[c])) for c in columns)


def assert_rows(
    actual: Sequence[dict[str, Any]],
    expected: Sequence[dict[str, Any]],
    columns: Sequence[str] | None = None,
) -> None:
    """Same multiset of rows over `columns` (default: the expected rows' keys)."""
    if columns is None:
        columns = list(expected[0]) if expected else list(actual[0]) if actual else []
    keys = [c for c in columns if c not in (*ref.METRIC_EXPRESSIONS, "event_value")]  # groups
    act = sorted(actual, key=lambda r: _key(r, keys))
    exp = sorted(expected, key=lambda r: _key(r, keys))
    assert len(act) == len(exp), (
        f"{len(act)} rows, expected {len(exp)}\nactual:   {act}\nexpected: {exp}"
    )
    for a, e in zip(act, exp, strict=True):
        bad = [c for c in columns if not _same(a[c], e[c])]
        assert not bad, f"columns {bad} differ:\nactual   {a}\nexpected {e}"
