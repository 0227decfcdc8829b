"""Helpers for the right-numbers tests (issue 20): the fixture worlds (model YAML + DuckDB data
SQL in fixtures/) and hand-SQL truth run directly on their DuckDB files, never through the
engine; rows compared by value (floats with a tolerance, dates as ISO days)."""

from __future__ import annotations

import decimal
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

FIX = Path(__file__).resolve().parent / "fixtures"


def build(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute((FIX / f"{name}.sql").read_text())
    finally:
        con.close()
    return path


def norm(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return float(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()[:10]
    return v


def key(row: Sequence[Any]) -> str:
    return repr([round(v, 6) if isinstance(v, float) else v for v in row])


def truth(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted((tuple(norm(v) for v in r) for r in con.execute(sql).fetchall()), key=key)
    finally:
        con.close()


def rows(res: dict[str, Any], columns: Iterable[str] | None = None) -> list[tuple[Any, ...]]:
    cols = list(columns) if columns is not None else res["columns"]
    return sorted((tuple(norm(r[c]) for c in cols) for r in res["rows"]), key=key)


def assert_rows(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> None:
    assert len(got) == len(want), f"{len(got)} rows, expected {len(want)}:\n{got}\n{want}"
    for g, w in zip(got, want, strict=True):
        assert len(g) == len(w)
        for a, b in zip(g, w, strict=True):
            if isinstance(a, float) or isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-9, abs=1e-12), (g, w)
            else:
                assert a == b, (g, w)
