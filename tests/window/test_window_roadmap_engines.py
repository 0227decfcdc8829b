"""The 1.14 window shapes on every engine of the conformance matrix: DuckDB, SQLite,
DataFusion, chDB, Spark, and PostgreSQL / MariaDB when a server is given (DOSI_TEST_POSTGRES,
DOSI_TEST_MARIADB). The same SALES rows are loaded into each; every shape either answers the
plain-Python reference (roadmap_ref) or is refused before any SQL with the structured
`dialect_unsupported_window_function` (WIN-REG-03), and which of the two is stated here per
engine, so a gate that opens or closes is noticed. An engine whose package, Java runtime or
server is missing is skipped with the reason. CHECKLIST: WIN-FRM-01, WIN-FRM-15, WIN-QRY-05,
WIN-VAL-01, WIN-REG-02, WIN-REG-03."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import conformkit
import pytest
from roadmap_ref import framed, navigate
from test_window_roadmap import WINDOWS
from test_window_share_streak_engines import _bucket, _keyed, _postgres
from wm_common import D, assert_series, build_db, key_date, model_yaml, series

import dosi

ENGINES = ("duckdb", "sqlite", "datafusion", "chdb", "spark", "postgres", "mariadb")
TABLES = ("sales", "returns")
MARIADB_DATABASE = os.environ.get("DOSI_TEST_DB_PREFIX", "") + "dosi_window_roadmap"

BASE = series("month", ("region",))
CNT = series("month", ("region",), measure="count")
MONTH = lambda k: key_date(k)  # noqa: E731
EVERYONE = lambda k: ()  # noqa: E731
#: metric -> its reference over (region, month)
EXPECTED: dict[str, Any] = {
    "c3": framed(BASE, "sum", 1, 1),
    "rest": framed(BASE, "sum", 0, None),
    "c3full": framed(BASE, "count", 1, 1, require_full=True),
    "c3x": framed(BASE, "sum", 1, 1, exclusion="current_row"),
    "grp": framed(BASE, "sum", 1, 0, units="groups", partition=EVERYONE, order=MONTH),
    "first_nn": navigate(BASE, "first_value", ignore_nulls=True),
    "last_nn": navigate(BASE, "last_value", ignore_nulls=True),
    "second_nn": navigate(BASE, "nth_value", 2, ignore_nulls=True),
    "regr_slope": framed(BASE, "regr_slope", 2, 0, second=CNT),
    "regr_r2": framed(BASE, "regr_r2", 2, 0, second=CNT),
    "regr_count": framed(BASE, "regr_count", 2, 0, second=CNT),
    "regr_sxy": framed(BASE, "regr_sxy", 2, 0, second=CNT),
    "med3": framed(BASE, "median", 1, 1),
    "p25": framed(BASE, "percentile_cont", 2, 0, fraction=0.25),
    "p90d": framed(BASE, "percentile_disc", 2, 0, fraction=0.9),
}
_IGNORE = {"first_nn", "last_nn", "second_nn"}
_REGR = {"regr_slope", "regr_r2", "regr_count", "regr_sxy"}
_PCT = {"med3", "p25", "p90d"}
#: engine -> the shapes it refuses (WIN-REG-03); everything else must answer the reference
GATED: dict[str, set[str]] = {
    "duckdb": set(),
    "sqlite": _IGNORE | _REGR | _PCT,
    "datafusion": {"c3x", "p90d"} | _IGNORE,
    "chdb": {"c3x"} | _IGNORE | _PCT,
    "spark": {"grp", "c3x", "p90d"},
    "postgres": _IGNORE | _PCT,
    "mariadb": {"grp", "c3x"} | _IGNORE | _REGR | _PCT,
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("roadmap_engines")
    db = Path(build_db(folder / "w.duckdb"))
    return db, conformkit.export_parquet(db, folder, TABLES)


@pytest.fixture(scope="module", params=ENGINES)
def target(
    request: pytest.FixtureRequest,
    files: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dosi.Engine]]:
    kind = request.param
    db, parquet = files
    why = conformkit.unavailable(kind)
    if why is not None:
        pytest.skip(why)
    schema = MARIADB_DATABASE if kind == "mariadb" else "main"
    text = model_yaml(WINDOWS).replace("source: sales", f"source: {schema}.sales")
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
    elif kind == "datafusion":
        conn = {"type": kind, "client": conformkit.load_datafusion(parquet, TABLES)}
    elif kind == "spark":
        spark = conformkit.load_spark(parquet, tmp, TABLES)
        conn, close = {"type": kind, "client": spark}, spark.stop
    elif kind == "postgres":
        conn, close = _postgres(db)
    else:
        import pymysql

        from dosi.execute.mysql_runner import parse_mysql_uri

        con = pymysql.connect(**parse_mysql_uri(os.environ["DOSI_TEST_MARIADB"]))
        conformkit.load_mysql(db, con, TABLES, database=MARIADB_DATABASE)
        conn, close = {"type": "mariadb", "client": con}, con.close
    eng = dosi.Engine(model_text=text, connections={kind: conn})
    try:
        yield kind, eng
    finally:
        eng.close()
        close()


RM = ("region", "metric_time__month")
GROUP_BY = ["sales.region", "metric_time:month"]


def _run(target: tuple[str, dosi.Engine], metrics: list[str], **kw: Any) -> list[dict]:
    kind, eng = target
    q = {"metrics": metrics, "group_by": GROUP_BY, **kw}
    return eng.execute(q, connection=kind)["rows"]


def test_every_shape_answers_or_is_gated(target: tuple[str, dosi.Engine]) -> None:
    """Each shape alone: the reference values, or the structured gate naming the metric."""
    kind, eng = target
    admitted = [m for m in EXPECTED if m not in GATED[kind]]
    for metric in sorted(GATED[kind]):
        with pytest.raises(dosi.QueryError) as info:
            eng.compile({"metrics": [metric], "group_by": GROUP_BY}, dialect=kind)
        assert info.value.code == "dialect_unsupported_window_function", (kind, metric)
        assert metric in info.value.message
    frames = [m for m in admitted if m not in _IGNORE]
    values = [m for m in admitted if m in _IGNORE]
    for group in (frames, values):
        if not group:
            continue
        rows = _run(target, group)
        for metric in group:
            assert_series(_keyed(rows, RM, metric), EXPECTED[metric], f"{kind} {metric}")


def test_following_under_a_time_range(target: tuple[str, dosi.Engine]) -> None:
    """WIN-QRY-05 on every engine: the last in-range month's centered sum reads the month
    after the range, the first reads in-range rows only; the output is trimmed."""
    start, end = D("2023-10-01"), D("2024-03-01")
    tr = {"start": start.isoformat(), "end": end.isoformat()}
    from_start = series("month", ("region",), start=start)
    rows = _run(target, ["c3", "rest"], time_range=tr)
    for metric, (p, f) in {"c3": (1, 1), "rest": (0, None)}.items():
        want = {k: v for k, v in framed(from_start, "sum", p, f).items() if key_date(k) < end}
        assert_series(_keyed(rows, RM, metric), want, f"{target[0]} {metric}")
    assert {_bucket(r["metric_time__month"]) for r in rows} <= {
        (start + dt.timedelta(days=31 * i)).replace(day=1).isoformat() for i in range(5)
    }
