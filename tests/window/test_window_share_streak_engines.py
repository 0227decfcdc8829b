"""The share and streak families on the embedded engines of the engine matrix (SQLite,
DataFusion, chDB) beside DuckDB: the same tables loaded into each engine, the same queries,
every value compared with the plain-Python references of test_window_share / test_window_streak
(never with another engine's answer). An engine whose Python package is missing is skipped
with the reason shown, never silently."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformkit
import duckdb
import pytest
from test_window_share import shared
from test_window_streak import STREAK_SALES, streaked
from wm_common import SALES, Key, assert_series, build_db, model_yaml, series

import dosi

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb")
ROWS = (*SALES, *(dataclasses.replace(s, sale_id=1000 + s.sale_id) for s in STREAK_SALES))
WINDOWS: dict[str, Any] = {
    "sh": {"share": {}},
    "sh_none": {"type": "share", "partition": {"mode": "none"}},
    "pos": {"streak": {"op": ">"}},
    "growth": {"type": "streak", "compare": "change", "op": ">"},
    "flat_or_up": {"streak": {"compare": "change", "op": ">=", "target": 0}},
    "mom": {"type": "pop", "offset": "1 month", "calculation": "value"},
}
TABLES = ("sales", "returns")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("share_streak_engines")
    db = Path(build_db(folder / "w.duckdb", ROWS))
    parquet = folder / "parquet"
    parquet.mkdir()
    con = duckdb.connect(str(db))
    try:
        for t in TABLES:
            con.execute(
                f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT PARQUET)"
            )
    finally:
        con.close()
    return db, parquet


@pytest.fixture(scope="module", params=ENGINES)
def target(
    request: pytest.FixtureRequest,
    files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dosi.Engine]]:
    kind = request.param
    db, parquet = files
    if kind in ("datafusion", "chdb") and importlib.util.find_spec(kind) is None:
        pytest.skip(
            f"{kind}: the Python package `{kind}` is not installed (pip install 'dosi[{kind}]')"
        )
    text = model_yaml(WINDOWS).replace("source: sales", "source: main.sales")
    tmp = tmp_path_factory.mktemp(kind)
    close: Any = lambda: None  # noqa: E731
    if kind == "duckdb":
        conn: dict[str, Any] = {"type": "duckdb", "uri": str(db)}
    elif kind == "sqlite":
        client = conformkit.load_sqlite(db, tmp / "w.sqlite", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    elif kind == "chdb":
        client = conformkit.load_chdb(parquet, tmp / "chdb", TABLES)
        conn, close = {"type": kind, "client": client}, client.close
    else:
        conn = {"type": kind, "client": conformkit.load_datafusion(parquet, TABLES)}
    eng = dosi.Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


def _bucket(v: Any) -> Any:
    """A bucket as the references spell it (engines return DATE, TIMESTAMP or ISO text)."""
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()[:10]
    if isinstance(v, str) and len(v) >= 10 and v[4] == "-":
        return v[:10]
    return v


def _run(
    target: tuple[str, dosi.Engine], metrics: list[str], group_by: list[str], **kw: Any
) -> list[dict[str, Any]]:
    kind, eng = target
    return eng.execute({"metrics": metrics, "group_by": group_by, **kw}, connection=kind)["rows"]


def _keyed(rows: list[dict[str, Any]], cols: tuple[str, ...], metric: str) -> dict[Key, Any]:
    out: dict[Key, Any] = {}
    for r in rows:
        k = tuple(_bucket(r[c]) for c in cols)
        assert k not in out, f"duplicate row {k}"
        v = r[metric]
        out[k] = float(v) if v is not None and not isinstance(v, (int, float)) else v
    return out


RM = ("region", "metric_time__month")
RD = ("region", "metric_time__day")


def test_share_on_every_engine(target: tuple[str, dosi.Engine]) -> None:
    """Per month (with the zero-total west 2023-10 and the all-NULL 2023-06 as NULL), of the
    grand total, and of the whole range without a time bucket."""
    base = series("month", ("region",), rows=ROWS)
    rows = _run(target, ["sh", "sh_none"], ["sales.region", "metric_time:month"])
    assert_series(_keyed(rows, RM, "sh"), shared(base, lambda k: k[-1]), f"{target[0]} sh")
    assert_series(_keyed(rows, RM, "sh_none"), shared(base, lambda k: ()), f"{target[0]} none")
    by_region = series(None, ("region",), rows=ROWS)
    rows = _run(target, ["sh"], ["sales.region"])
    assert_series(_keyed(rows, ("region",), "sh"), shared(by_region, lambda k: ()), target[0])


def test_streak_on_every_engine(target: tuple[str, dosi.Engine]) -> None:
    """Daily runs broken by a missing day, a NULL, a tie (growth) and negatives; monthly runs
    broken by the SALES month gaps."""
    for grain, cols in (("day", RD), ("week", ("region", "metric_time__week")), ("month", RM)):
        base = series(grain, ("region",), rows=ROWS)
        rows = _run(
            target, ["pos", "growth", "flat_or_up"], ["sales.region", f"metric_time:{grain}"]
        )
        label = f"{target[0]} {grain}"
        assert_series(_keyed(rows, cols, "pos"), streaked(base, grain, ">"), f"{label} pos")
        assert_series(
            _keyed(rows, cols, "growth"), streaked(base, grain, ">", compare="change"), label
        )
        assert_series(
            _keyed(rows, cols, "flat_or_up"), streaked(base, grain, ">=", compare="change"), label
        )


def test_share_and_streak_under_a_widened_scan_on_every_engine(
    target: tuple[str, dosi.Engine],
) -> None:
    """Beside a month-over-month metric (its lookback widens the scan), the share's grand
    total and the streak's runs still cover the queried range only."""
    start, end = dt.date(2024, 1, 1), dt.date(2024, 5, 1)
    base = series("month", ("region",), rows=ROWS, start=start, end=end)
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    rows = _run(
        target, ["sh_none", "pos", "mom"], ["sales.region", "metric_time:month"], time_range=tr
    )
    assert_series(_keyed(rows, RM, "sh_none"), shared(base, lambda k: ()), f"{target[0]} share")
    assert_series(_keyed(rows, RM, "pos"), streaked(base, "month", ">"), f"{target[0]} streak")
