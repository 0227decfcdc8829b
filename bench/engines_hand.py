"""Benchmark: bench/queries.py's queries, dosi's SQL against the hand-written SQL, on chDB,
DataFusion and PostgreSQL (issue 27 item 4; DuckDB's own run is bench/bench.py).

    python bench/engines_hand.py --parquet /tmp/dosi-bench/parquet-250 --runs 3
    python bench/engines_hand.py --scale 250 --engines chdb,datafusion \\
        --postgres "host=127.0.0.1 port=55432 user=postgres" --pg-db bench_shop

The shop tables come from Parquet files (`--parquet`, or built by examples/shop/generate.py at
`--scale`): chDB copies them into MergeTree tables, DataFusion reads the files, PostgreSQL gets
them by COPY into a database of its own (`--pg-db`, dropped and made again). dosi's SQL is
compiled for each engine's dialect; the hand SQL (written for DuckDB) is transpiled by sqlglot
(DataFusion as PostgreSQL). Both run interleaved on one connection; the rows are compared
(`ROWS DIFFER` flags a mismatch); the ratio dosi / hand is reported per query with its
geometric mean. The SQL alone is timed (fetching every row), not dosi's execute path.
Not a test: it prints a table for the closing notes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import importlib.util
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from queries import CASES  # noqa: E402

import dosi  # noqa: E402

MODEL = ROOT / "examples" / "shop" / "model.yaml"
TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")
#: dosi dialect key -> sqlglot dialect the hand SQL is transpiled to
HAND_DIALECT = {"chdb": "clickhouse", "datafusion": "postgres", "postgres": "postgres"}
Run = Callable[[str], list[tuple[Any, ...]]]


def parquet_dir(args: argparse.Namespace) -> Path:
    if args.parquet is not None:
        return Path(args.parquet)
    spec = importlib.util.spec_from_file_location("shop_gen", ROOT / "examples/shop/generate.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    folder = Path(tempfile.mkdtemp(prefix="dosi-bench-hand-"))
    gen.build(folder / "shop.duckdb", scale=args.scale, out_dir=folder / "parquet")
    return folder / "parquet"


def hand_sql(text: str, dialect: str) -> str:
    """The DuckDB hand SQL in `dialect`, its tables in schema `main` (as dosi's are)."""
    tree = sqlglot.parse_one(text, read="duckdb")
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    for t in tree.find_all(exp.Table):
        if not t.db and t.name not in ctes:
            t.set("db", exp.to_identifier("main"))
    return tree.sql(HAND_DIALECT[dialect])


def chdb_runner(parquet: Path, folder: Path) -> Run:
    import chdb.session

    s = chdb.session.Session(str(folder / "chdb"))
    s.query("CREATE DATABASE IF NOT EXISTS main")
    for t in TABLES:
        s.query(
            f"CREATE TABLE IF NOT EXISTS main.{t} ENGINE = MergeTree ORDER BY tuple() AS "
            f"SELECT * FROM file('{(parquet / f'{t}.parquet').as_posix()}', Parquet)"
        )

    def run(sql: str) -> list[tuple[Any, ...]]:
        table = s.query(sql, "ArrowTable")
        return [tuple(r.values()) for r in table.to_pylist()]

    return run


def datafusion_runner(parquet: Path, folder: Path) -> Run:
    import datafusion

    ctx = datafusion.SessionContext()
    ctx.sql("CREATE SCHEMA main")
    for t in TABLES:
        ctx.register_parquet(f"main.{t}", str(parquet / f"{t}.parquet"))

    def run(sql: str) -> list[tuple[Any, ...]]:
        batches = ctx.sql(sql).collect()
        return [tuple(r.values()) for b in batches for r in b.to_pylist()]

    return run


def postgres_runner(parquet: Path, dsn: str, dbname: str) -> Run:
    import duckdb
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{dbname}"')
        admin.execute(f'CREATE DATABASE "{dbname}"')
    con = psycopg.connect(f"{dsn} dbname={dbname}", autocommit=True)
    con.execute("CREATE SCHEMA main")
    duck = duckdb.connect()
    for t in TABLES:
        rel = duck.sql(f"SELECT * FROM read_parquet('{(parquet / f'{t}.parquet').as_posix()}')")
        cols = ", ".join(
            f'"{c}" {_pg_type(str(ty))}' for c, ty in zip(rel.columns, rel.types, strict=True)
        )
        con.execute(f"CREATE TABLE main.{t} ({cols})")
        with con.cursor().copy(f"COPY main.{t} FROM STDIN") as cp:
            for batch in rel.to_arrow_reader(100_000):
                for row in zip(*(c.to_pylist() for c in batch.columns), strict=True):
                    cp.write_row(row)
        con.execute(f"ANALYZE main.{t}")
    con.execute("SET max_parallel_workers_per_gather = 2")

    def run(sql: str) -> list[tuple[Any, ...]]:
        return list(con.execute(sql).fetchall())

    return run


def _pg_type(duck_type: str) -> str:
    t = duck_type.upper()
    if t.startswith("DECIMAL"):
        return t.replace("DECIMAL", "NUMERIC")
    return {"VARCHAR": "TEXT", "DOUBLE": "DOUBLE PRECISION", "TIMESTAMP": "TIMESTAMP"}.get(t, t)


def _cell(v: Any) -> Any:
    if isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool):
        return round(float(v), 6)
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day).isoformat(sep=" ")
    return v


def _norm(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(_cell(v) for v in r) for r in rows), key=repr)


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(_norm(a), _norm(b), strict=True):
        for x, y in zip(ra, rb, strict=True):
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-6):
                    return False
            elif x != y:
                return False
    return True


def figures(kind: str, run: Run, runs: int, reference: Run | None) -> None:
    """`reference`: DuckDB over the same data; dosi's rows are checked against the hand SQL's
    there (a transpiled hand query can differ on an engine: ClickHouse's LEFT JOIN fills
    defaults, not NULLs), and a hand query that differs from DuckDB's says so."""
    engine = dosi.Engine(model_path=MODEL)
    ratios = []
    print(f"\n{kind}")
    print(f"{'query':32} {'dosi ms':>10} {'hand ms':>10} {'ratio':>7}  rows")
    for name, query, hand in CASES:
        sql = engine.compile(query, dialect=kind)["sql"]
        hsql = hand_sql(hand, kind)
        try:
            got, want = run(sql), run(hsql)
        except Exception as exc:  # an engine that rejects a query: reported, not timed
            print(f"{name:32} failed: {str(exc).splitlines()[0][:100]}")
            continue
        ref = reference(hand) if reference is not None else want
        same = _same(got, ref)
        hand_note = "" if _same(want, ref) else "  (hand SQL differs from DuckDB's)"
        e_ms, h_ms = [], []
        for _ in range(runs):  # interleaved: both share the cache and the machine's noise
            t = time.perf_counter()
            run(sql)
            e_ms.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            run(hsql)
            h_ms.append((time.perf_counter() - t) * 1e3)
        e, h = statistics.median(e_ms), statistics.median(h_ms)
        ratios.append(e / h)
        flag = "" if same else "  ROWS DIFFER"
        print(f"{name:32} {e:10.1f} {h:10.1f} {e / h:7.2f}  {len(got)}{flag}{hand_note}")
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean dosi/hand on {kind}: {geo:.3f} (worst {max(ratios):.2f})")
    engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=25.0)
    ap.add_argument("--parquet", default=None, help="a folder of the shop's Parquet files")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--engines", default="chdb,datafusion,postgres")
    ap.add_argument("--postgres", default="host=127.0.0.1 port=55432 user=postgres")
    ap.add_argument("--pg-db", default="dosi_bench_shop")
    ap.add_argument("--duckdb", default=None, help="the same data in DuckDB: rows checked there")
    args = ap.parse_args()
    parquet = parquet_dir(args)
    reference: Run | None = None
    if args.duckdb is not None:
        import duckdb

        duck = duckdb.connect(args.duckdb, read_only=True)
        reference = lambda sql: duck.sql(sql).fetchall()  # noqa: E731
    folder = Path(tempfile.mkdtemp(prefix="dosi-bench-hand-"))
    for kind in [k.strip() for k in args.engines.split(",") if k.strip()]:
        t = time.perf_counter()
        if kind == "chdb":
            run = chdb_runner(parquet, folder)
        elif kind == "datafusion":
            run = datafusion_runner(parquet, folder)
        elif kind == "postgres":
            run = postgres_runner(parquet, args.postgres, args.pg_db)
        else:
            raise SystemExit(f"unknown engine {kind!r}")
        print(f"{kind}: loaded in {time.perf_counter() - t:.1f} s")
        figures(kind, run, args.runs, reference)


if __name__ == "__main__":
    main()
