"""The 1.15 offset shapes and grained filters on the engines that run in-process (DuckDB,
SQLite, DataFusion, chDB; issue 22 item 8): `offset.period_start`, an offset's `period_value`
sum, and `dataset.field:grain` in where_sql, each compared with plain Python over grainkit's
orders. A calendar-table grain on an engine that cannot group by the calendar lookup is the
structured `dialect_unsupported_calendar_table` before any SQL runs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conformkit import load_chdb, load_datafusion, load_sqlite
from enginekit import metric
from grainkit import ORDERS, TABLES, build, calendar_days, model, sprint

import dosi

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb")
_PACKAGES = {"sqlite": "sqlite3", "datafusion": "datafusion", "chdb": "chdb"}
_METRICS = [
    metric(
        "rev_mstart",
        "SUM(orders.amount)",
        {"v": "1.15", "window": {"offset": {"period_start": "month"}, "calculation": "value"}},
    ),
    metric(
        "rev_lag5",
        "SUM(orders.amount)",
        {
            "v": "1.15",
            "window": {
                "offset": {"count": 5, "granularity": "day"},
                "calculation": "value",
                "period_value": "sum",
            },
        },
    ),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("offset_engines")
    parquet = folder / "parquet"
    parquet.mkdir()
    return build(folder / "g.duckdb", parquet), parquet


@pytest.fixture(params=ENGINES)
def engine(
    request: pytest.FixtureRequest, files: tuple[Path, Path], tmp_path: Path
) -> Iterator[tuple[str, dosi.Engine]]:
    kind = request.param
    db, parquet = files
    text = model(_METRICS)
    close: Any = lambda: None  # noqa: E731
    if kind == "duckdb":
        conn: dict[str, Any] = {"type": "duckdb", "uri": str(db)}
    else:
        pytest.importorskip(_PACKAGES[kind])
        if kind == "sqlite":
            client: Any = load_sqlite(db, tmp_path / "g.sqlite", TABLES)
            close = client.close
        elif kind == "datafusion":
            client = load_datafusion(parquet, TABLES)
        else:
            client = load_chdb(parquet, tmp_path, TABLES)
            close = client.close
        conn = {"type": kind, "client": client}
    eng = dosi.Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


def _day(v: Any) -> dt.date:
    return dt.date.fromisoformat(str(v)[:10])


def _num(v: Any) -> int | None:
    return None if v is None else int(v)


def _by_day() -> dict[dt.date, int]:
    out: dict[dt.date, int] = {}
    for _, _c, d, a in ORDERS:
        if d is not None and a is not None:
            out[d] = out.get(d, 0) + a
    return out


def test_period_start_by_day(engine: tuple[str, dosi.Engine]) -> None:
    _, eng = engine
    res = eng.execute({"metrics": ["rev_mstart"], "group_by": ["metric_time:day"]})
    got = {
        _day(r["metric_time__day"]): _num(r["rev_mstart"])
        for r in res["rows"]
        if r["metric_time__day"] is not None
    }
    days = _by_day()
    dated = {d for _, _c, d, _a in ORDERS if d is not None}
    assert got == {d: days.get(d.replace(day=1)) for d in dated}


def test_offset_summed_by_month(engine: tuple[str, dosi.Engine]) -> None:
    _, eng = engine
    res = eng.execute({"metrics": ["rev_lag5"], "group_by": ["metric_time:month"]})
    got = {
        _day(r["metric_time__month"]): _num(r["rev_lag5"])
        for r in res["rows"]
        if r["metric_time__month"] is not None and r["rev_lag5"] is not None
    }
    want: dict[dt.date, int] = {}
    for d, v in _by_day().items():
        m = (d + dt.timedelta(days=5)).replace(day=1)
        want[m] = want.get(m, 0) + v
    assert got == want


def test_grained_where(engine: tuple[str, dosi.Engine]) -> None:
    kind, eng = engine
    res = eng.execute({"metrics": ["revenue"], "where_sql": "orders.d:month >= '2024-01-15'"})
    assert _num(res["rows"][0]["revenue"]) == 28  # February on
    q = {"metrics": ["revenue"], "where_sql": "orders.d:sprint >= '2024-01-12'"}
    if kind in ("datafusion", "chdb"):
        with pytest.raises(dosi.QueryError) as info:
            eng.execute(q)
        assert info.value.code == "dialect_unsupported_calendar_table"
        return
    listed = set(calendar_days())
    want = sum(
        a
        for _, _c, d, a in ORDERS
        if d is not None and a is not None and d in listed and sprint(d) >= dt.date(2024, 1, 12)
    )
    assert _num(eng.execute(q)["rows"][0]["revenue"]) == want
