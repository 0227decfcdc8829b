"""Benchmark: the shop queries of bench/queries.py (plus a window and a streaming-window query)
on every embedded engine dosi runs on: DuckDB, chDB, DataFusion and a local Spark.

    python bench/engines.py                    # scale 25 (~100k orders), 3 runs each
    python bench/engines.py --scale 100 --runs 5 --engines duckdb,chdb

Each engine is loaded from the same Parquet files and handed to dosi as a client object; the
time is dosi's `execute` end to end (compile cache warm, result shaped as rows), median of the
runs after one warm-up. Every engine's rows are checked against DuckDB's. Not a test: it
prints a table for the closing notes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import importlib.util
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from queries import CASES  # noqa: E402

import dosi  # noqa: E402

MODEL = ROOT / "examples" / "shop" / "model.yaml"
TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")
EXTRA: list[tuple[str, dict[str, Any]]] = [
    (
        "window_rolling_by_channel",
        {
            "metrics": ["revenue", "revenue_rolling_3m", "revenue_mom"],
            "group_by": ["orders.channel", "metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2026-01-01"},
        },
    ),
    (
        "stream_hop_events",
        {
            "metrics": ["event_count", "active_users"],
            "group_by": ["metric_time:hop(1 day, 6 hours)"],
        },
    ),
]


def build(folder: Path, scale: float) -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location("shop_gen", ROOT / "examples/shop/generate.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    parquet = folder / "parquet"
    return Path(gen.build(folder / "shop.duckdb", scale=scale, out_dir=parquet)), parquet


def client(kind: str, db: Path, parquet: Path, folder: Path) -> Any:
    if kind == "duckdb":
        import duckdb

        return duckdb.connect(str(db), read_only=True)
    if kind == "chdb":
        import chdb.session

        s = chdb.session.Session(str(folder / "chdb"))
        s.query("CREATE DATABASE IF NOT EXISTS main")
        for t in TABLES:
            s.query(
                f"CREATE TABLE IF NOT EXISTS main.{t} ENGINE = MergeTree ORDER BY tuple() AS "
                f"SELECT * FROM file('{(parquet / f'{t}.parquet').as_posix()}', Parquet)"
            )
        return s
    if kind == "datafusion":
        import datafusion

        ctx = datafusion.SessionContext()
        ctx.sql("CREATE SCHEMA main")
        for t in TABLES:
            ctx.register_parquet(f"main.{t}", str(parquet / f"{t}.parquet"))
        return ctx
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(folder / "warehouse"))
        .getOrCreate()
    )
    spark.sql("CREATE DATABASE IF NOT EXISTS main")
    for t in TABLES:
        d = folder / "spark" / t
        d.mkdir(parents=True, exist_ok=True)
        shutil.copy(parquet / f"{t}.parquet", d / f"{t}.parquet")
        spark.sql(f"CREATE TABLE IF NOT EXISTS main.{t} USING parquet LOCATION '{d.as_posix()}'")
    return spark


def _norm(v: Any) -> Any:
    if isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str) and len(v) >= 10 and v[4] == "-" and v[7] == "-":
        return dt.datetime.fromisoformat(v).isoformat(sep=" ")
    return v


def same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b, strict=True):
        for k in ra:
            x, y = _norm(ra[k]), _norm(rb.get(k))
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif x != y:
                return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=25.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--engines", default="duckdb,chdb,datafusion,spark")
    args = ap.parse_args()
    kinds = [k.strip() for k in args.engines.split(",") if k.strip()]
    folder = Path(tempfile.mkdtemp(prefix="dosi-bench-engines-"))
    t0 = time.perf_counter()
    db, parquet = build(folder, args.scale)
    print(f"shop at scale {args.scale} built in {time.perf_counter() - t0:.1f}s ({folder})")
    queries = [(name, q) for name, q, _ in CASES] + EXTRA
    model = MODEL.read_text()
    times: dict[str, dict[str, float]] = {}
    reference: dict[str, list[dict[str, Any]]] = {}
    mismatches: list[str] = []
    for kind in kinds:
        try:
            c = client(kind, db, parquet, folder)
        except ImportError as exc:
            print(f"{kind}: skipped ({exc})")
            continue
        eng = dosi.Engine(model_text=model, connections={kind: {"type": kind, "client": c}})
        times[kind] = {}
        for name, q in queries:
            rows = eng.execute(q)["rows"]  # warm-up (and compile cache)
            if kind == "duckdb":
                reference[name] = rows
            elif name in reference and not same_rows(rows, reference[name]):
                mismatches.append(f"{kind}:{name}")
            samples = []
            for _ in range(args.runs):
                t = time.perf_counter()
                eng.execute(q)
                samples.append(time.perf_counter() - t)
            times[kind][name] = statistics.median(samples) * 1e3
        eng.close()
        if kind == "spark":
            c.stop()
    engines = list(times)
    print()
    print("| query | " + " | ".join(f"{k} (ms)" for k in engines) + " |")
    print("|---|" + "---:|" * len(engines))
    for name, _ in queries:
        cells = [f"{times[k][name]:.1f}" for k in engines]
        print(f"| {name} | " + " | ".join(cells) + " |")
    totals = [f"**{sum(times[k].values()):.0f}**" for k in engines]
    print("| total | " + " | ".join(totals) + " |")
    print()
    print("rows equal to DuckDB's on every engine" if not mismatches else f"MISMATCH: {mismatches}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
