"""The conformance suite's kit (loaded by tests/engines/matrix/conftest.py): the shop example at a
small scale, loaded from one DuckDB build into every engine, the query matrix, and the value
comparison (floats to 1e-9 relative, timestamps as wall-clock text, NULL only equal to NULL).

Every engine is handed to dosi as the client object an application would have: a sqlite3
connection, a chDB session, a DataFusion SessionContext, a SparkSession, a psycopg connection,
a PyMySQL connection."""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import json
import math
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import yaml

REPO = Path(__file__).resolve().parents[2]
SHOP_MODEL = REPO / "examples" / "shop" / "model.yaml"
SHOP_GENERATOR = REPO / "examples" / "shop" / "generate.py"
TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")
SCALE = 0.25  # ~1000 orders: small enough for Spark to stay fast



#: the Python package each engine's runner needs, and the variable naming a server's DSN
ENGINE_PACKAGES = {
    "datafusion": "datafusion",
    "chdb": "chdb",
    "spark": "pyspark",
    "postgres": "psycopg",
    "mariadb": "pymysql",
}
ENGINE_SERVERS = {"postgres": "DOSI_TEST_POSTGRES", "mariadb": "DOSI_TEST_MARIADB"}


def unavailable(kind: str) -> str | None:
    """Why engine `kind` cannot run here (a missing package, Java or server), or None."""
    module = ENGINE_PACKAGES.get(kind)
    if module is not None and importlib.util.find_spec(module) is None:
        return f"{kind}: the Python package `{module}` is not installed"
    if kind == "spark" and shutil.which("java") is None:
        return "spark: no Java runtime"
    env = ENGINE_SERVERS.get(kind)
    if env is not None and not os.environ.get(env):
        return f"{kind}: set {env} (bash scripts/{kind}.sh) to run"
    return None


def export_parquet(db: Path, folder: Path, tables: Sequence[str]) -> Path:
    """`folder`/parquet holding each of `tables` of DuckDB file `db` (what chDB, DataFusion
    and Spark read)."""
    parquet = folder / "parquet"
    parquet.mkdir()
    con = duckdb.connect(str(db))
    try:
        for t in tables:
            con.execute(
                f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT PARQUET)"
            )
    finally:
        con.close()
    return parquet

def build_shop(folder: Path) -> tuple[Path, Path]:
    """The shop at SCALE: a DuckDB file and a folder with one Parquet file per table."""
    spec = importlib.util.spec_from_file_location("shop_generate_conformance", SHOP_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    parquet = folder / "parquet"
    db = gen.build(folder / "shop.duckdb", scale=SCALE, out_dir=parquet)
    return Path(db), parquet


def duck_tables(
    db: Path, tables: Sequence[str] = TABLES
) -> dict[str, tuple[list[tuple[str, str]], list[tuple[Any, ...]]]]:
    """table -> ([(column, DuckDB type)], rows)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in tables:
            cols = [(r[0], r[1]) for r in con.sql(f"DESCRIBE main.{t}").fetchall()]
            out[t] = (cols, con.sql(f"SELECT * FROM main.{t}").fetchall())
        return out
    finally:
        con.close()


# ------------------------------------------------------------------------------ loaders


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def _sqlite_type(duck_type: str) -> str:
    if duck_type in ("INTEGER", "BIGINT", "SMALLINT", "BOOLEAN"):
        return "INTEGER"
    if duck_type in ("DOUBLE", "FLOAT") or duck_type.startswith("DECIMAL"):
        return "REAL"
    return "TEXT"


def load_sqlite(db: Path, path: Path, tables: Sequence[str] = TABLES) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), check_same_thread=False)
    for t, (cols, rows) in duck_tables(db, tables).items():
        ddl = ", ".join(f'"{c}" {_sqlite_type(ty)}' for c, ty in cols)
        con.execute(f"CREATE TABLE main.{t} ({ddl})")
        marks = ", ".join("?" for _ in cols)
        con.executemany(
            f"INSERT INTO main.{t} VALUES ({marks})",
            [tuple(_sqlite_value(v) for v in r) for r in rows],
        )
    con.commit()
    return con


def load_chdb(parquet: Path, path: Path, tables: Sequence[str] = TABLES) -> Any:
    import chdb.session

    session = chdb.session.Session(str(path))
    session.query("CREATE DATABASE IF NOT EXISTS main")
    for t in tables:
        session.query(
            f"CREATE TABLE main.{t} ENGINE = MergeTree ORDER BY tuple() AS "
            f"SELECT * FROM file('{(parquet / f'{t}.parquet').as_posix()}', Parquet)"
        )
    return session


def load_datafusion(parquet: Path, tables: Sequence[str] = TABLES) -> Any:
    import datafusion

    ctx = datafusion.SessionContext()
    ctx.sql("CREATE SCHEMA main")
    for t in tables:
        ctx.register_parquet(f"main.{t}", str(parquet / f"{t}.parquet"))
    return ctx


def load_spark(parquet: Path, folder: Path, tables: Sequence[str] = TABLES) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("dosi-conformance")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(folder / "warehouse"))
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sql("CREATE DATABASE IF NOT EXISTS main")
    for t in tables:
        table_dir = folder / "spark" / t
        table_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(parquet / f"{t}.parquet", table_dir / f"{t}.parquet")
        spark.sql(f"CREATE TABLE main.{t} USING parquet LOCATION '{table_dir.as_posix()}'")
    return spark


_MYSQL_TYPES = {
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "VARCHAR(200)",
    "DATE": "DATE",
    "TIMESTAMP": "DATETIME(6)",
}


def load_mysql(
    db: Path, con: Any, tables: Sequence[str] = TABLES, database: str = "main"
) -> None:
    """The shop tables into `database` of a MySQL/MariaDB server (replaced). A test module
    with tables of its own names its own database: replacing `main` under the conformance
    matrix's open session would wait on its metadata lock, and drop its tables."""
    with con.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"CREATE DATABASE {database}")
        for t, (cols, rows) in duck_tables(db, tables).items():
            ddl = ", ".join(f"`{c}` {_MYSQL_TYPES.get(ty, ty)}" for c, ty in cols)
            cur.execute(f"CREATE TABLE {database}.{t} ({ddl})")
            marks = ", ".join("%s" for _ in cols)
            cur.executemany(f"INSERT INTO {database}.{t} VALUES ({marks})", rows)
    con.commit()


def load_postgres_tables(db: Path, con: Any, tables: Sequence[str], pg_type: Any) -> None:
    """More tables into schema `main` of a PostgreSQL database (psycopg, autocommit)."""
    with con.cursor() as cur:
        for t, (cols, rows) in duck_tables(db, tables).items():
            ddl = ", ".join(f'"{c}" {pg_type(ty)}' for c, ty in cols)
            cur.execute(f"CREATE TABLE main.{t} ({ddl})")
            marks = ", ".join("%s" for _ in cols)
            cur.executemany(f"INSERT INTO main.{t} VALUES ({marks})", rows)


# ------------------------------------------------------------------------------ comparing

_TEMPORAL = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}:\d{2}(\.\d+)?)?")


def norm(value: Any) -> Any:
    """One comparable form: floats, `YYYY-MM-DD HH:MM:SS.ffffff` wall-clock strings, None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, dt.date):
        return f"{value.isoformat()} 00:00:00.000000"
    if isinstance(value, str) and _TEMPORAL.fullmatch(value):
        return norm(dt.datetime.fromisoformat(value))
    return value


def same(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
    return a == b


def compare(
    got: Sequence[dict[str, Any]],
    want: Sequence[dict[str, Any]],
    columns: Sequence[str],
    label: str,
) -> None:
    """Row for row (dosi always emits ORDER BY, so the sequence must match too)."""
    act = [tuple(norm(r.get(c)) for c in columns) for r in got]
    exp = [tuple(norm(r.get(c)) for c in columns) for r in want]
    assert len(act) == len(exp), (
        f"{label}: {len(act)} rows, DuckDB {len(exp)}\n{act[:8]}\n{exp[:8]}"
    )
    for i, (a, e) in enumerate(zip(act, exp, strict=True)):
        bad = [c for c, x, y in zip(columns, a, e, strict=True) if not same(x, y)]
        assert not bad, (
            f"{label}: row {i} differs in {bad}\n  got    {dict(zip(columns, a, strict=True))}\n"
            f"  duckdb {dict(zip(columns, e, strict=True))}"
        )


# ------------------------------------------------------------------------------ the matrix

_REV = "SUM(orders.amount)"


def _w(payload: dict[str, Any]) -> dict[str, Any]:
    return {"window": payload}


# window metrics beyond the shop's eight: every family and modifier
WINDOW_METRICS: dict[str, tuple[str, dict[str, Any]]] = {
    "w_mom_pct": (_REV, _w({"type": "pop", "offset": "1 month", "calculation": "percent_change"})),
    "w_qoq_delta": (_REV, _w({"type": "pop", "offset": "1 quarter", "calculation": "delta"})),
    "w_wow_value": (_REV, _w({"type": "pop", "offset": "1 week", "calculation": "value"})),
    "w_dod_ratio": (_REV, _w({"type": "pop", "offset": "1 day", "calculation": "ratio"})),
    "w_fwd_delta": (
        _REV,
        _w(
            {
                "offset": {"count": 1, "granularity": "month", "direction": "forward"},
                "calculation": "delta",
            }
        ),
    ),
    "w_users_mom": (
        "COUNT(DISTINCT orders.customer_id)",
        _w({"type": "pop", "offset": "1 month", "calculation": "percent_change"}),
    ),
    "w_roll3_full": (
        _REV,
        _w({"type": "rolling", "function": "sum", "periods": 3, "require_full_window": True}),
    ),
    "w_roll2_min": (_REV, _w({"type": "rolling", "function": "min", "periods": 2})),
    "w_roll3_count": (_REV, _w({"type": "rolling", "function": "count", "periods": 3})),
    "w_cum_avg": (_REV, _w({"type": "cumulative", "function": "avg"})),
    "w_qtd": (_REV, _w({"type": "cumulative", "function": "sum", "reset": "quarter"})),
    "w_wtd": (_REV, _w({"type": "cumulative", "function": "sum", "reset": "week"})),
    "w_cum_desc": (
        _REV,
        _w(
            {
                "frame": {
                    "function": "sum",
                    "preceding": "unbounded",
                    "order": {"by": "time", "direction": "desc"},
                }
            }
        ),
    ),
    "w_byval_range": (
        _REV,
        _w(
            {
                "frame": {
                    "function": "sum",
                    "preceding": "unbounded",
                    "units": "range",
                    "order": {"by": "value", "direction": "asc"},
                    "partition": {"mode": "none"},
                }
            }
        ),
    ),
    "w_scope_tb": (
        _REV,
        _w(
            {
                "frame": {
                    "function": "sum",
                    "scope": "partition",
                    "partition": {"mode": "time_bucket"},
                }
            }
        ),
    ),
    "w_sd_pop": (_REV, _w({"frame": {"function": "stddev_pop", "preceding": 2}})),
    "w_var_samp": (_REV, _w({"frame": {"function": "var_samp", "preceding": 2}})),
    "w_corr": (
        _REV,
        _w({"frame": {"function": "corr", "preceding": 3, "second": "order_count"}}),
    ),
    "w_covar_pop": (
        _REV,
        _w({"frame": {"function": "covar_pop", "preceding": "unbounded", "second": "order_count"}}),
    ),
    "w_row_number": (_REV, _w({"rank": {"function": "row_number"}})),
    "w_rank_asc": (
        _REV,
        _w({"rank": {"function": "rank", "order": {"by": "value", "direction": "asc"}}}),
    ),
    "w_ntile3": (_REV, _w({"rank": {"function": "ntile", "buckets": 3}})),
    "w_percent_rank": (_REV, _w({"rank": {"function": "percent_rank"}})),
    "w_cume_dist": (_REV, _w({"rank": {"function": "cume_dist"}})),
    "w_rank_tb": (_REV, _w({"rank": {"function": "rank", "partition": {"mode": "time_bucket"}}})),
    "w_rank_nulls_first": (
        _REV,
        _w(
            {
                "rank": {
                    "function": "rank",
                    "order": {"by": "value", "direction": "desc", "nulls": "first"},
                }
            }
        ),
    ),
    "w_last_value": (_REV, _w({"value": {"function": "last_value"}})),
    "w_nth2": (_REV, _w({"value": {"function": "nth_value", "n": 2}})),
    "w_fv_none": (_REV, _w({"value": {"function": "first_value", "partition": {"mode": "none"}}})),
}


def conformance_model_text() -> str:
    """The shop model plus WINDOW_METRICS."""
    doc = yaml.safe_load(SHOP_MODEL.read_text())
    metrics = doc["semantic_model"][0]["metrics"]
    for name, (expression, ext) in WINDOW_METRICS.items():
        metrics.append(
            {
                "name": name,
                "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expression}]},
                "custom_extensions": [{"vendor_name": "DATUS", "data": json.dumps(ext)}],
            }
        )
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def q(metrics: list[str], *group_by: Any, **kw: Any) -> dict[str, Any]:
    return {"metrics": metrics, "group_by": list(group_by), **kw}


Y2025 = {"start": "2025-01-01", "end": "2026-01-01"}
EVENTS = ["event_count", "active_users", "event_value"]

QUERIES: dict[str, dict[str, Any]] = {
    # plain
    "plain-total": q(["revenue", "order_count", "customer_count"]),
    "plain-channel": q(["revenue", "order_count", "avg_order_value"], "orders.channel"),
    "plain-region-orphans": q(["revenue", "customer_count"], "regions.region_name"),
    "plain-segment-where": q(
        ["completed_revenue", "net_revenue"],
        "customers.segment",
        where_sql="orders.channel IN ('web', 'mobile') AND orders.amount > 20",
    ),
    "plain-category": q(["items_sold", "line_revenue", "order_line_count"], "products.category"),
    "plain-order-limit": q(
        ["revenue"], "customers.customer_name", order_by=[{"key": "revenue", "desc": True}], limit=7
    ),
    "plain-nulls-first": q(
        ["revenue"],
        "regions.country",
        order_by=[{"key": "regions.country", "desc": True, "nulls": "first"}],
    ),
    "plain-events": q(EVENTS, "events.event_type"),
    # grains (Date and DateTime columns, every grain, week starts)
    "grain-day": q(
        ["revenue", "order_count"],
        "metric_time:day",
        time_range={"start": "2025-03-01", "end": "2025-04-15"},
    ),
    "grain-week": q(["revenue"], "metric_time:week", time_range=Y2025),
    "grain-month": q(["revenue", "customer_count"], "metric_time:month"),
    "grain-quarter": q(["revenue"], "orders.channel", "metric_time:quarter"),
    "grain-year": q(["revenue", "order_count"], "metric_time:year"),
    "grain-order-date-plain": q(
        ["revenue"], "orders.order_date", time_range={"start": "2025-06-01", "end": "2025-06-20"}
    ),
    "grain-event-day": q(
        EVENTS,
        "events.event_ts:day",
        time_range={"start": "2025-11-20T06:00:00", "end": "2025-11-29T18:30:00"},
    ),
    "grain-event-month": q(EVENTS, "events.event_ts:month"),
    "grain-event-week": q(EVENTS, "events.event_ts:week"),
    "grain-event-day-type": q(
        ["event_count"],
        "events.event_type",
        "metric_time:day",
        time_range={"start": "2025-08-01", "end": "2025-08-20"},
    ),
    # time ranges
    "range-open-end": q(["revenue"], "metric_time:month", time_range={"start": "2025-06-01"}),
    "range-open-start": q(["revenue"], "orders.status", time_range={"end": "2023-07-01"}),
    "range-dimension": q(
        ["revenue"],
        "orders.channel",
        time_range={"start": "2024-01-01", "end": "2024-07-01", "dimension": "orders.order_date"},
    ),
    # multi-fact merges (fan-out safe, D-FILL)
    "merge-month-fill": q(["revenue", "refund_total", "refund_count"], "metric_time:month"),
    "merge-channel": q(["revenue", "refund_total"], "orders.channel"),
    "merge-channel-quarter": q(
        ["revenue", "refund_total"], "orders.channel", "metric_time:quarter"
    ),
    "merge-events-orders": q(["revenue", "event_count"], "metric_time:quarter"),
    "merge-three": q(["order_count", "refund_count", "event_count"], "metric_time:year"),
    "merge-total": q(["revenue", "refund_total", "event_count"]),
    # the shop's window metrics
    "win-shop-pop": q(
        ["revenue", "revenue_mom", "revenue_yoy"],
        "metric_time:month",
        time_range={"start": "2024-01-01", "end": "2026-01-01"},
    ),
    "win-shop-ytd": q(
        ["revenue", "revenue_ytd"],
        "metric_time:month",
        time_range={"start": "2024-06-01", "end": "2025-03-01"},
    ),
    "win-shop-running": q(
        ["revenue", "revenue_running", "first_month_revenue"],
        "orders.channel",
        "metric_time:quarter",
    ),
    "win-shop-rank": q(
        ["revenue", "revenue_rank"],
        "customers.segment",
        order_by=[{"key": "revenue_rank", "desc": False}],
        limit=10,
    ),
    "win-shop-rolling": q(
        ["revenue", "revenue_rolling_3m", "revenue_next_month"],
        "orders.channel",
        "metric_time:month",
        time_range=Y2025,
    ),
    # a window metric beside metrics of another fact dataset (issue 10): merge, then window
    "win-cross-fact-pop": q(
        ["revenue", "revenue_mom", "refund_total"],
        "metric_time:month",
        time_range={"start": "2024-01-01", "end": "2025-01-01"},
    ),
    "win-cross-fact-frames": q(
        ["revenue_rolling_3m", "revenue_running", "refund_count"],
        "metric_time:month",
    ),
    "win-cross-fact-rank": q(
        ["revenue_rank", "refund_total"],
        "orders.channel",
        "metric_time:quarter",
        where_sql="refund_total > 100",
    ),
    # streaming windows as portable SQL
    "stream-tumble": q(
        EVENTS,
        "metric_time:tumble(1 hour)",
        time_range={"start": "2025-11-28", "end": "2025-11-29"},
    ),
    "stream-tumble-type": q(
        ["event_count", "active_users"],
        "events.event_type",
        "metric_time:tumble(6 hours)",
        time_range={"start": "2025-06-01", "end": "2025-06-15"},
    ),
    "stream-hop": q(
        EVENTS,
        "metric_time:hop(1 minute, 30 seconds)",
        time_range={"start": "2025-11-28T12:00:00", "end": "2025-11-28T12:10:00"},
    ),
    "stream-hop-day": q(
        ["event_count"],
        "metric_time:hop(2 days, 1 day)",
        time_range={"start": "2025-05-01", "end": "2025-05-15"},
    ),
    "stream-cumulate": q(
        EVENTS,
        {
            "field": "metric_time",
            "window": {"type": "cumulate", "size": "1 day", "step": "6 hours"},
        },
        time_range={"start": "2025-11-27", "end": "2025-11-29"},
    ),
    "stream-session-user": q(
        ["event_count", "event_value"],
        "events.user_id",
        {"field": "metric_time", "window": {"type": "session", "gap": "1 day"}},
        time_range={"start": "2025-06-01", "end": "2025-07-01"},
    ),
    "stream-session-global": q(
        EVENTS,
        "metric_time:session(30 minutes)",
        time_range={"start": "2025-11-28", "end": "2025-11-29"},
    ),
    "stream-tumble-orders": q(
        ["revenue", "order_count"],
        "metric_time:tumble(7 days)",
        time_range={"start": "2025-01-01", "end": "2025-03-01"},
    ),
}
WINDOW_SHAPES: dict[str, dict[str, Any]] = {
    "month": {
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2025-09-01"},
    },
    "channel-quarter": {"group_by": ["orders.channel", "metric_time:quarter"]},
    "week": {  # bounds on Mondays: a window reaching past a mid-week bound is grain_too_fine
        "group_by": ["metric_time:week"],
        "time_range": {"start": "2025-04-28", "end": "2025-09-01"},
    },
    "day": {
        "group_by": ["metric_time:day"],
        "time_range": {"start": "2025-06-20", "end": "2025-08-10"},
    },
}
# the shapes each window metric is valid with (offsets land on the grain, resets are coarser)
_INVALID = {
    "w_mom_pct": ("channel-quarter", "week"),
    "w_qoq_delta": ("week",),
    "w_wow_value": ("month", "channel-quarter"),
    "w_dod_ratio": ("month", "channel-quarter", "week"),
    "w_fwd_delta": ("channel-quarter", "week"),
    "w_users_mom": ("channel-quarter", "week"),
    "w_wtd": ("month", "channel-quarter"),
}
for _name in WINDOW_METRICS:
    for _shape, _body in WINDOW_SHAPES.items():
        if _shape == "day" and _name not in ("w_dod_ratio", "w_wtd", "w_roll3_full", "w_rank_tb"):
            continue
        if _shape not in _INVALID.get(_name, ()):
            QUERIES[f"win-{_name}-{_shape}"] = {"metrics": ["revenue", _name], **_body}


def category(name: str) -> str:
    """The matrix row a query counts in (the report's engines x categories table)."""
    head = name.split("-")[0]
    if head == "win" and name.startswith("win-shop"):
        return "window (shop)"
    return {
        "plain": "plain",
        "grain": "grain",
        "range": "time range",
        "merge": "multi-fact / D-FILL",
        "win": "window families",
        "stream": "streaming window",
    }[head]
