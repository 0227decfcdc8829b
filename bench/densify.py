"""Benchmark: densified queries against the same queries without densify (issue 22, item 9).

    python bench/densify.py                    # the shop at scale 2500 (~10M orders, built once)
    python bench/densify.py --db /path/shop.duckdb --runs 7

Not a test: it prints medians and minimums. Each query runs with `densify` and without it,
interleaved on one connection, and the ratio dense / sparse is reported (target: <= 1.1) for
both (on a shared machine the minimum is the steadier figure). The densified rows
that hold data are checked against the undensified rows, so the timing compares like with like.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import dosi  # noqa: E402

MODEL = ROOT / "examples" / "shop" / "model.yaml"
RANGE = {"start": "2024-01-01", "end": "2026-01-01"}

CASES: dict[str, dict[str, Any]] = {
    "month": {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:month"], "time_range": RANGE},
    "day": {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:day"], "time_range": RANGE},
    "day-no-range": {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:day"]},
    "month-channel-all": {
        "metrics": ["revenue", "order_count"],
        "group_by": ["metric_time:month", "orders.channel"],
        "time_range": RANGE,
        "densify_mode": "all",
    },
    "month-windows": {
        "metrics": ["revenue", "revenue_mom", "revenue_rolling_3m"],
        "group_by": ["metric_time:month"],
        "time_range": RANGE,
    },
    "day-sparse": {  # a filter leaves most days empty: the spine does real work
        "metrics": ["revenue", "order_count"],
        "group_by": ["metric_time:day"],
        "time_range": RANGE,
        "where_sql": "orders.amount > 1900",
    },
}


def _build(db: Path, scale: float) -> None:
    spec = importlib.util.spec_from_file_location("shop_generate", ROOT / "examples/shop/generate.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    db.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    gen.build(db, scale=scale)
    print(f"built {db} in {time.perf_counter() - t:.1f} s")


def _time(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, list[tuple]]:
    t = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=2500)
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    db = args.db or Path(f"/tmp/dosi-bench/shop-{args.scale:g}.duckdb")
    if not db.exists():
        _build(db, args.scale)
    eng = dosi.Engine(model_path=MODEL)
    con = duckdb.connect(str(db), read_only=True)
    orders = con.execute("SELECT COUNT(*) FROM orders").fetchone()[0]  # type: ignore[index]
    print(f"{db}: {orders:,} orders, duckdb {duckdb.__version__}, {args.runs} runs, ms (median)")
    print(
        f"{'query':<20} {'rows':>6} {'dense rows':>10} {'sparse':>9} {'dense':>9} {'ratio':>6}"
        f" {'min sparse':>10} {'min dense':>10} {'ratio':>6}"
    )
    ratios, min_ratios = [], []
    for name, case in CASES.items():
        base = {k: v for k, v in case.items() if k != "densify_mode"}
        sparse_sql = eng.compile({**base, "densify": False})["sql"]
        dense_sql = eng.compile({**base, "densify": case.get("densify_mode", "time")})["sql"]
        _time(con, sparse_sql)  # warm the buffer pool for both
        _time(con, dense_sql)
        sparse_t, dense_t = [], []
        sparse_rows: list[tuple] = []
        dense_rows: list[tuple] = []
        for _ in range(args.runs):
            t, sparse_rows = _time(con, sparse_sql)
            sparse_t.append(t)
            t, dense_rows = _time(con, dense_sql)
            dense_t.append(t)
        # the dims and revenue of the rows with data (window values legitimately differ:
        # over the dense series a frame spans calendar buckets)
        at = len(base["group_by"]) + base["metrics"].index("revenue")
        keep = [*range(len(base["group_by"])), at]
        with_data = {tuple(r[i] for i in keep) for r in dense_rows if r[at] is not None}
        sparse_set = {tuple(r[i] for i in keep) for r in sparse_rows}
        status = "" if with_data == sparse_set else "  ROWS DIFFER"
        s, d = statistics.median(sparse_t) * 1e3, statistics.median(dense_t) * 1e3
        ms, md = min(sparse_t) * 1e3, min(dense_t) * 1e3
        ratios.append(d / s)
        min_ratios.append(md / ms)
        print(
            f"{name:<20} {len(sparse_rows):>6} {len(dense_rows):>10} {s:>9.1f} {d:>9.1f} "
            f"{d / s:>6.2f} {ms:>10.1f} {md:>10.1f} {md / ms:>6.2f}{status}"
        )
    geo, geo_min = statistics.geometric_mean(ratios), statistics.geometric_mean(min_ratios)
    print(f"geometric mean ratio dense / sparse: median {geo:.3f}, min {geo_min:.3f} (target <= 1.1)")
    con.close()
    eng.close()


if __name__ == "__main__":
    main()
