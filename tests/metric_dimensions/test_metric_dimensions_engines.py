"""Metric dimensions and min_max_only on the in-process engines (SQLite, DataFusion): the SQL
dosi compiles for them runs and answers what DuckDB answers on the same shop rows (issue 23 bed
features; a compile that succeeds must produce SQL that runs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conformkit import build_shop, load_datafusion, load_sqlite, norm, unavailable
from enginekit import SHOP_MODEL

import dosi

QUERIES = [
    {
        "metrics": ["revenue", "order_count"],
        "group_by": ["customers.segment"],
        "metric_dimensions": {
            "customer_orders": {"metric": "order_count", "by": ["customers.customer_id"]}
        },
        "where_sql": "customer_orders >= 2",
    },
    {
        "metrics": ["order_count"],
        "group_by": ["lines"],
        "metric_dimensions": {"lines": {"metric": "order_line_count", "by": ["orders.order_id"]}},
    },
    {
        "metrics": [],
        "group_by": ["orders.order_date:month", "orders.channel"],
        "min_max_only": True,
    },
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_shop(tmp_path_factory.mktemp("md_engines"))


def _rows(res: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(norm(v) for v in r.values()) for r in res["rows"]),
        key=lambda r: tuple((v is None, str(v)) for v in r),
    )


@pytest.fixture(scope="module", params=["sqlite", "datafusion"])
def other(
    request: pytest.FixtureRequest,
    files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    kind = request.param
    why = unavailable(kind)
    if why is not None:
        pytest.skip(why)
    db, parquet = files
    if kind == "sqlite":
        client = load_sqlite(db, tmp_path_factory.mktemp("sq") / "s.sqlite")
    else:
        client = load_datafusion(parquet)
    text = SHOP_MODEL.read_text(encoding="utf-8")
    engine = dosi.Engine(model_text=text, connections={kind: {"type": kind, "client": client}})
    yield engine
    engine.close()


@pytest.mark.parametrize("query", QUERIES, ids=["filter", "group_by", "min_max_only"])
def test_same_rows_as_duckdb(other: Any, files: tuple[Path, Path], query: dict[str, Any]) -> None:
    duck = dosi.Engine(model_path=SHOP_MODEL)
    want = _rows(duck.execute(query, db_path=files[0]))
    duck.close()
    got = _rows(other.execute(query))
    assert len(got) == len(want) and want
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            assert a == b or (
                isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-6
            ), (g, w)
