"""Benchmark of the PostgreSQL wire frontend (`dosi pg`): a cached query's round trip
through psycopg, and rows per second for a large detail result (text and binary formats).

    python bench/pg_wire.py                 # scale 50 (~200k orders, built once under /tmp)
    python bench/pg_wire.py --scale 250 --runs 5

Not a test: it prints figures (medians) for the closing notes. The same queries are timed
through `Engine.sql` in-process, so the wire's own cost is the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

import dosi
from dosi.frontends.contract import EngineHolder
from dosi.frontends.pg import PgOptions, PgServer

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "shop" / "model.yaml"
CACHED = (
    "SELECT orders__channel, MEASURE(revenue), MEASURE(order_count) FROM shop "
    "WHERE metric_time >= '2024-01-01' AND metric_time < '2025-01-01' GROUP BY 1 "
    "ORDER BY 2 DESC"
)
DETAIL = (
    "SELECT orders__order_date, customers__customer_name, orders__channel, "
    "MEASURE(revenue), MEASURE(order_count) FROM shop GROUP BY 1, 2, 3"
)


def _database(scale: float) -> Path:
    path = Path(f"/tmp/dosi-bench-pg/shop-{scale:g}.duckdb")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        spec = importlib.util.spec_from_file_location(
            "shop_generate", ROOT / "examples/shop/generate.py"
        )
        assert spec and spec.loader
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        gen.build(path, scale=scale)
    return path


def _start(db: Path) -> tuple[PgServer, asyncio.AbstractEventLoop]:
    holder = EngineHolder(MODEL, None, str(db), "datus", pool_size=2)
    server = PgServer(holder, PgOptions(port=0, max_rows=None))
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(120)
    return server, loop


def _median_ms(fn: Any, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--round-trips", type=int, default=300)
    args = ap.parse_args()
    db = _database(args.scale)
    server, _ = _start(db)
    dsn = f"postgresql://bench@127.0.0.1:{server.port}/shop"
    api = dosi.Engine(model_path=MODEL, connections={"shop": {"type": "duckdb", "uri": str(db)}})

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT 1")  # the catalog (and the type probe) once
        for _ in range(5):
            conn.execute(CACHED).fetchall()
        simple = _median_ms(lambda: conn.execute(CACHED).fetchall(), args.round_trips)
        prepared = _median_ms(
            lambda: conn.execute(CACHED, prepare=True).fetchall(), args.round_trips
        )
        catalog = _median_ms(lambda: conn.execute("SELECT version()").fetchall(), args.round_trips)
    api.sql_arrow(CACHED)
    in_process = _median_ms(lambda: api.sql_arrow(CACHED), args.round_trips)
    print(f"cached query round trip, median of {args.round_trips} (ms):")
    print(f"  psycopg simple protocol   {simple:8.3f}")
    print(f"  psycopg prepared (binary) {prepared:8.3f}")
    print(f"  Engine.sql_arrow in process {in_process:6.3f}")
    print(f"  catalog query (version()) {catalog:8.3f}")

    rows = api.sql_arrow(DETAIL).num_rows
    engine_ms = _median_ms(lambda: api.sql_arrow(DETAIL), args.runs)
    print(
        f"\nlarge detail result: {rows} rows x 5 columns (scale {args.scale:g}), "
        f"median of {args.runs}"
    )
    print(
        f"  Engine.sql_arrow (in process)   {engine_ms:9.1f} ms  "
        f"{rows / engine_ms * 1000:12,.0f} rows/s"
    )
    for label, binary in (("text", False), ("binary", True)):
        with psycopg.connect(dsn) as conn:
            wire, total = [], []
            for _ in range(args.runs):
                cur = conn.cursor(binary=binary)
                t = time.perf_counter()
                cur.execute(DETAIL)  # every row received (libpq buffers the result)
                t1 = time.perf_counter()
                got = cur.fetchall()  # psycopg builds the Python rows
                t2 = time.perf_counter()
                assert len(got) == rows
                wire.append((t1 - t) * 1000)
                total.append((t2 - t) * 1000)
        w, a = statistics.median(wire), statistics.median(total)
        print(
            f"  psycopg {label:6} received     {w:9.1f} ms  {rows / w * 1000:12,.0f} rows/s"
            f"   (with fetchall's Python rows: {a:.1f} ms, {rows / a * 1000:,.0f} rows/s)"
        )
    server.close()
    api.close()


if __name__ == "__main__":
    main()
