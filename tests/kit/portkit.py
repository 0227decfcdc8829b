"""Helpers for the PostgreSQL portability tests (loaded by tests/engines/postgres/conftest.py).

The shop example is built once into DuckDB, every table is copied into a throwaway PostgreSQL
database (schema `main`, matching column types, loaded with COPY from CSV that DuckDB writes),
and each query is run twice: the engine's `dialect="postgres"` SQL on PostgreSQL (through the
`psql` client, no driver needed) and `engine.execute` on DuckDB. Rows are compared after
normalising types: numbers as floats within 1e-9 relative, dates and timestamps as
`YYYY-MM-DD HH:MM:SS` wall-clock strings, NULL only equal to NULL.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import yaml

import dosi

REPO = Path(__file__).resolve().parents[2]
SHOP_MODEL = REPO / "examples" / "shop" / "model.yaml"
SHOP_GENERATOR = REPO / "examples" / "shop" / "generate.py"
TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")

ENV = "DOSI_TEST_POSTGRES"
PG_DSN = os.environ.get(ENV, "").strip()


def pg_unavailable() -> str | None:
    """Why the PostgreSQL tests cannot run, or None."""
    if not PG_DSN:
        return f"set {ENV} to a psql connection string (bash scripts/postgres.sh) to run"
    if shutil.which("psql") is None:
        return "the psql client is not installed"
    return None


# ------------------------------------------------------------------------------ psql


class PsqlError(AssertionError):
    pass


def psql(dsn: str, sql: str, *, timezone: str | None = None, timeout: float = 120) -> str:
    """Run `sql` with psql (stop on the first error); tuples-only, unaligned output."""
    env = dict(os.environ)
    if timezone is not None:
        env["PGTZ"] = timezone
    done = subprocess.run(
        ["psql", dsn, "-qAtX", "-v", "ON_ERROR_STOP=1", "-f", "-"],
        input=sql,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if done.returncode != 0:
        raise PsqlError(f"PostgreSQL rejected the SQL: {done.stderr.strip()}\n--- SQL ---\n{sql}")
    return done.stdout


def with_dbname(dsn: str, dbname: str) -> str:
    """The connection string pointed at another database (a later keyword wins in libpq)."""
    if "://" in dsn:  # URI form
        head, sep, query = dsn.partition("?")
        scheme, _, rest = head.partition("://")
        authority = rest.split("/", 1)[0]
        return f"{scheme}://{authority}/{dbname}{sep}{query}"
    return f"{dsn} dbname={dbname}"


def pg_rows(dsn: str, sql: str, *, timezone: str | None = None) -> list[dict[str, Any]]:
    """Rows of a SELECT as dicts in column order, typed through JSON (numeric stays exact)."""
    body = sql.strip().rstrip(";")
    out = psql(dsn, f"SELECT row_to_json(q)::text FROM (\n{body}\n) AS q;\n", timezone=timezone)
    return [
        json.loads(line, parse_float=decimal.Decimal, object_pairs_hook=_no_duplicates)
        for line in out.splitlines()
        if line
    ]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        assert k not in out, f"duplicate output column {k!r}"
        out[k] = v
    return out


# ------------------------------------------------------------------------------ loading

_PG_TYPES = {
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "SMALLINT": "smallint",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "VARCHAR": "text",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "BOOLEAN": "boolean",
}


def pg_type(duck_type: str) -> str:
    m = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", duck_type)
    if m:
        return f"numeric({m.group(1)},{m.group(2)})"
    return _PG_TYPES[duck_type]


def build_shop(db_path: Path) -> Path:
    spec = importlib.util.spec_from_file_location("shop_generate_portability", SHOP_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return Path(gen.build(db_path, scale=1))


def load_into_postgres(duck_path: Path, dsn: str, csv_dir: Path) -> dict[str, int]:
    """Create schema `main` with every shop table (matching types) and COPY the rows in.
    Returns the row count per table."""
    con = duckdb.connect(str(duck_path), read_only=True)
    script = ["CREATE SCHEMA main;"]
    counts: dict[str, int] = {}
    try:
        for table in TABLES:
            cols = con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
            ddl = ", ".join(f"{name} {pg_type(kind)}" for name, kind in cols)
            target = csv_dir / f"{table}.csv"
            con.execute(f"COPY main.{table} TO '{target.as_posix()}' (FORMAT csv, HEADER true)")
            counts[table] = con.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
            script.append(f"CREATE TABLE main.{table} ({ddl});")
            script.append(
                f"\\copy main.{table} FROM '{target.as_posix()}' WITH (FORMAT csv, HEADER true)"
            )
    finally:
        con.close()
    script.append("ANALYZE;")
    psql(dsn, "\n".join(script) + "\n")
    return counts


# ------------------------------------------------------------------------------ normalising

_TEMPORAL = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}(:?\d{2})?|Z)?)?")


def norm(value: Any) -> Any:
    """One comparable form: floats, `YYYY-MM-DD HH:MM:SS` wall-clock strings, None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None, microsecond=0).isoformat(sep=" ")
    if isinstance(value, dt.date):
        return f"{value.isoformat()} 00:00:00"
    if isinstance(value, str):
        if _TEMPORAL.fullmatch(value):
            return norm(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        if value in ("NaN", "Infinity", "-Infinity"):  # PostgreSQL JSON spells these as text
            return float(value)
        return value
    return value


def same(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
    return a == b


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is None, type(v).__name__, v if v is not None else 0) for v in row)


def compare_rows(
    pg: Sequence[dict[str, Any]],
    duck: Sequence[dict[str, Any]],
    columns: Sequence[str],
    *,
    ordered: bool,
    label: str = "",
) -> None:
    """PostgreSQL rows equal DuckDB rows (as a sequence when `ordered`, else as a multiset)."""
    if pg:
        assert list(pg[0]) == list(columns), f"{label}: columns {list(pg[0])} != {list(columns)}"
    act = [tuple(norm(r[c]) for c in columns) for r in pg]
    exp = [tuple(norm(r[c]) for c in columns) for r in duck]
    if not ordered:
        act.sort(key=_sort_key)
        exp.sort(key=_sort_key)
    assert len(act) == len(exp), (
        f"{label}: PostgreSQL returned {len(act)} rows, DuckDB {len(exp)}\n"
        f"postgres: {act[:20]}\nduckdb:   {exp[:20]}"
    )
    for i, (a, e) in enumerate(zip(act, exp, strict=True)):
        bad = [c for c, x, y in zip(columns, a, e, strict=True) if not same(x, y)]
        assert not bad, (
            f"{label}: row {i} differs in {bad}\npostgres {dict(zip(columns, a, strict=True))}\n"
            f"duckdb   {dict(zip(columns, e, strict=True))}"
        )


# ------------------------------------------------------------------------------ the harness


class Portability:
    """Runs one query on PostgreSQL (postgres dialect) and on DuckDB, and compares them."""

    def __init__(self, engine: dosi.Engine, duck_path: Path, dsn: str) -> None:
        self.engine = engine
        self.duck_path = duck_path
        self.dsn = dsn

    def pg_sql(self, query: dict[str, Any]) -> str:
        return self.engine.compile(query, dialect="postgres")["sql"]

    def on_postgres(self, query: dict[str, Any], timezone: str | None = None) -> list[dict]:
        return pg_rows(self.dsn, self.pg_sql(query), timezone=timezone)

    def on_duckdb(self, query: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
        result = self.engine.execute(query, db_path=self.duck_path)
        return list(result["columns"]), result.arrow.to_pylist()

    def check(
        self,
        query: dict[str, Any],
        *,
        ordered: bool = True,
        timezone: str | None = None,
        min_rows: int = 1,
    ) -> list[dict[str, Any]]:
        """Assert both engines return the same rows; returns the DuckDB rows.

        `ordered`: the engine always emits ORDER BY (the query's, or its default order on the
        group-by columns), so by default the row sequence must match too. `min_rows` guards
        against vacuous comparisons of two empty results."""
        columns, duck = self.on_duckdb(query)
        pg = self.on_postgres(query, timezone=timezone)
        compare_rows(pg, duck, columns, ordered=ordered, label=json.dumps(query))
        assert len(duck) >= min_rows, f"only {len(duck)} rows: the comparison is too weak"
        return duck


def extended_model_text(extra_metrics: Sequence[dict[str, Any]]) -> str:
    """The shop model plus `extra_metrics` ({name, expression[, ext]} dicts)."""
    doc = yaml.safe_load(SHOP_MODEL.read_text())
    metrics = doc["semantic_model"][0]["metrics"]
    for m in extra_metrics:
        entry: dict[str, Any] = {
            "name": m["name"],
            "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": m["expression"]}]},
        }
        if "ext" in m:
            entry["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(m["ext"])}]
        metrics.append(entry)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# Ratio / expression metrics the shop model does not have: zero denominators (orders without
# a discount), integer / integer, cross-dataset ratios and a filtered count in a ratio.
EXTRA_METRICS: list[dict[str, Any]] = [
    {"name": "amount_per_discount", "expression": "SUM(orders.amount) / SUM(orders.discount)"},
    {"name": "discount_share", "expression": "SUM(orders.discount) / SUM(orders.amount)"},
    {
        "name": "cancel_share",
        "expression": "COUNT(CASE WHEN orders.status = 'cancelled' THEN 1 END)"
        " / COUNT(orders.order_id)",
    },
    {
        "name": "items_per_line",
        "expression": "SUM(order_items.quantity) / COUNT(order_items.line_no)",
    },
    {"name": "refund_rate", "expression": "SUM(refunds.refund_amount) / SUM(orders.amount)"},
    {"name": "max_order", "expression": "MAX(orders.amount)"},
    {"name": "min_event_value", "expression": "MIN(events.value)"},
    {"name": "avg_discount", "expression": "AVG(orders.discount)"},
    {
        "name": "zero_discount_orders",
        "expression": "COUNT(CASE WHEN orders.discount = 0 THEN orders.order_id END)",
    },
]


def _frame(**kw: object) -> dict[str, object]:
    return {"window": {"frame": kw}}


def _rank(function: str, **kw: object) -> dict[str, object]:
    return {"window": {"rank": {"function": function, **kw}}}


def _value(function: str, **kw: object) -> dict[str, object]:
    return {"window": {"value": {"function": function, **kw}}}


def _pop(offset: object, calculation: str = "value", **kw: object) -> dict[str, object]:
    if isinstance(offset, dict):
        return {"window": {"offset": offset, "calculation": calculation, **kw}}
    return {"window": {"type": "pop", "offset": offset, "calculation": calculation, **kw}}


# D-WINDOW metrics beyond the shop's eight: every family, function and modifier, over revenue
# (SUM(orders.amount)) unless an expression is given. `second` names a metric (WIN-FRM W3).
_REV = "SUM(orders.amount)"
WINDOW_METRICS: dict[str, tuple[str, dict[str, object]]] = {
    # offset family (WIN-OFF-*, WIN-ENUM-02..06)
    "w_mom_pct": (_REV, _pop("1 month", "percent_change")),
    "w_mom_ratio": (_REV, _pop("1 month", "ratio")),
    "w_qoq_delta": (_REV, _pop("1 quarter", "delta")),
    "w_wow_value": (_REV, _pop("1 week")),
    "w_dod_value": (_REV, _pop("1 day")),
    "w_d7_value": (_REV, _pop("7 days")),
    "w_yoy_pct": (_REV, _pop("1 year", "percent_change")),
    "w_m12_value": (_REV, _pop({"count": 12, "granularity": "month"})),
    "w_fwd_delta": (
        _REV,
        _pop({"count": 1, "granularity": "month", "direction": "forward"}, "delta"),
    ),
    "w_fwd_q_ratio": (
        _REV,
        _pop({"count": 2, "granularity": "quarter", "direction": "forward"}, "ratio"),
    ),
    "w_cnt_mom_delta": ("COUNT(orders.order_id)", _pop("1 month", "delta")),
    "w_users_mom": ("COUNT(DISTINCT orders.customer_id)", _pop("1 month", "percent_change")),
    # frame family (WIN-FRM-*, WIN-ROL-*, WIN-CUM-*)
    "w_roll3_sum": (_REV, {"window": {"type": "rolling", "function": "sum", "periods": 3}}),
    "w_roll3_full": (
        _REV,
        {
            "window": {
                "type": "rolling",
                "function": "sum",
                "periods": 3,
                "require_full_window": True,
            }
        },
    ),
    "w_roll2_min": (_REV, {"window": {"type": "rolling", "function": "min", "periods": 2}}),
    "w_roll4_max": (_REV, {"window": {"type": "rolling", "function": "max", "periods": 4}}),
    "w_roll3_count": (_REV, {"window": {"type": "rolling", "function": "count", "periods": 3}}),
    "w_cum_avg": (_REV, {"window": {"type": "cumulative", "function": "avg"}}),
    "w_cum_count": (
        "COUNT(orders.order_id)",
        {"window": {"type": "cumulative", "function": "sum"}},
    ),
    "w_qtd": (_REV, {"window": {"type": "cumulative", "function": "sum", "reset": "quarter"}}),
    "w_mtd": (_REV, {"window": {"type": "cumulative", "function": "sum", "reset": "month"}}),
    "w_wtd": (_REV, {"window": {"type": "cumulative", "function": "sum", "reset": "week"}}),
    "w_p2_reset_year": (_REV, _frame(function="sum", preceding=2, reset="year")),
    "w_cum_desc": (
        _REV,
        _frame(function="sum", preceding="unbounded", order={"by": "time", "direction": "desc"}),
    ),
    "w_cum_none": (_REV, _frame(function="sum", preceding="unbounded", partition={"mode": "none"})),
    "w_byval_range": (
        _REV,
        _frame(
            function="sum",
            preceding="unbounded",
            units="range",
            order={"by": "value", "direction": "asc"},
            partition={"mode": "none"},
        ),
    ),
    "w_scope_tb": (
        _REV,
        _frame(function="sum", scope="partition", partition={"mode": "time_bucket"}),
    ),
    "w_scope_count": (
        _REV,
        _frame(function="count", scope="partition", partition={"mode": "none"}),
    ),
    "w_sd_pop": (_REV, _frame(function="stddev_pop", preceding=2)),
    "w_sd_samp": (_REV, _frame(function="stddev_samp", preceding=3)),
    "w_var_pop": (_REV, _frame(function="var_pop", preceding="unbounded")),
    "w_var_samp": (_REV, _frame(function="var_samp", preceding=2)),
    "w_corr": (_REV, _frame(function="corr", preceding=3, second="order_count")),
    "w_covar_pop": (
        _REV,
        _frame(function="covar_pop", preceding="unbounded", second="order_count"),
    ),
    "w_covar_samp": (_REV, _frame(function="covar_samp", preceding=2, second="order_count")),
    # rank family (WIN-RNK-*, WIN-19-03/04)
    "w_row_number": (_REV, _rank("row_number")),
    "w_rank_asc": (_REV, _rank("rank", order={"by": "value", "direction": "asc"})),
    "w_ntile3": (_REV, _rank("ntile", buckets=3)),
    "w_percent_rank": (_REV, _rank("percent_rank")),
    "w_cume_dist": (_REV, _rank("cume_dist")),
    "w_rank_tb": (_REV, _rank("rank", partition={"mode": "time_bucket"})),
    "w_rank_qd": (_REV, _rank("dense_rank", partition={"mode": "query_dimensions"})),
    "w_rn_time": (_REV, _rank("row_number", order={"by": "time"})),
    "w_rank_nulls_first": (
        _REV,
        _rank("rank", order={"by": "value", "direction": "desc", "nulls": "first"}),
    ),
    "w_rank_nulls_last": (
        _REV,
        _rank("rank", order={"by": "value", "direction": "asc", "nulls": "last"}),
    ),
    # value family (WIN-VAL-*)
    "w_last_value": (_REV, _value("last_value")),
    "w_nth2": (_REV, _value("nth_value", n=2)),
    "w_fv_none": (_REV, _value("first_value", partition={"mode": "none"})),
    "w_lv_desc": (_REV, _value("last_value", order={"by": "time", "direction": "desc"})),
    "w_fv_byval": (_REV, _value("first_value", order={"by": "value"})),
}
EXTRA_METRICS += [
    {"name": name, "expression": expression, "ext": payload}
    for name, (expression, payload) in WINDOW_METRICS.items()
]


@contextmanager
def session_database(admin_dsn: str) -> Iterator[str]:
    """A fresh database for this test session; dropped (FORCE) afterwards. DOSI_TEST_DB_PREFIX
    (optional) goes in front of its name, so runs sharing one server can tell theirs apart."""
    prefix = os.environ.get("DOSI_TEST_DB_PREFIX", "")
    name = f"{prefix}dosi_portability_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    psql(admin_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);\nCREATE DATABASE {name};\n")
    try:
        yield with_dbname(admin_dsn, name)
    finally:
        psql(admin_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);\n")
