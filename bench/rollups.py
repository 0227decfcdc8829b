"""Benchmark (issue 28 item 6): a 20-query dashboard on the shop example read from the fact
tables, from declared rollups, and from the result cache; p50 per query, the rollup build and
refresh times and the store's size. Not a test: it prints figures, and checks that every
rollup-served and cached answer equals the fact table's.

    python bench/rollups.py                    # scale 250: ~1M orders (built once under /tmp)
    python bench/rollups.py --scale 2500 --runs 7
    python bench/rollups.py --scale 25000 --raw-runs 1   # ~100M orders

The declarations follow the dashboard, as a dashboard's author would write them: a day series
without dimensions, months by channel and status, a COUNT DISTINCT rollup (its key stored);
of several rollups that answer a query, the one with the fewest stored rows serves.
"""

from __future__ import annotations

import argparse
import decimal
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
M = "metric_time"
ROLLUPS: dict[str, Any] = {
    "rollups": [
        {
            "name": "orders_day",
            "dataset": "orders",
            "time": "order_date",
            "grain": "day",
            "measures": ["revenue", "order_count"],
        },
        {
            "name": "orders_month_status",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel", "status"],
            "measures": ["revenue", "order_count", "net_revenue", "completed_revenue"],
        },
        {
            "name": "customers_month",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "measures": ["customer_count"],
        },
        {
            "name": "orders_daily",
            "dataset": "orders",
            "time": "order_date",
            "grain": "day",
            "dimensions": ["channel", "status"],
            "measures": [
                "revenue",
                "order_count",
                "avg_order_value",
                "net_revenue",
                "completed_revenue",
            ],
        },
        {
            "name": "orders_monthly",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel"],
            "measures": ["revenue", "order_count", "net_revenue"],
        },
        {
            "name": "refunds_monthly",
            "dataset": "refunds",
            "time": "refund_date",
            "grain": "month",
            "measures": ["refund_total", "refund_count"],
        },
    ]
}
DASHBOARD: list[dict[str, Any]] = [
    {"metrics": ["revenue", "order_count"]},
    {"metrics": ["revenue"], "group_by": [f"{M}:day"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{M}:week"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue"], "group_by": [f"{M}:quarter", "orders.channel"]},
    {"metrics": ["revenue", "net_revenue"], "group_by": [f"{M}:year"]},
    {"metrics": ["avg_order_value"], "group_by": [f"{M}:month", "orders.channel"]},
    {"metrics": ["completed_revenue"], "group_by": [f"{M}:month", "orders.status"]},
    {"metrics": ["revenue", "refund_total"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_net_of_refunds"], "group_by": [f"{M}:quarter"]},
    {"metrics": ["revenue_mom"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_yoy"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_rolling_3m"], "group_by": [f"{M}:month", "orders.channel"]},
    {"metrics": ["revenue_ytd"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_running", "revenue_rank"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue"], "group_by": [f"{M}:month"], "where_sql": "orders.channel = 'web'"},
    {
        "metrics": ["revenue", "order_count"],
        "group_by": [f"{M}:day"],
        "time_range": {"start": "2025-03-01", "end": "2025-04-01"},
    },
    {
        "metrics": ["revenue_mom", "revenue"],
        "group_by": [f"{M}:month"],
        "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
    },
    {"metrics": ["refund_total", "refund_count"], "group_by": [f"{M}:quarter"]},
    {"metrics": ["customer_count"], "group_by": [f"{M}:quarter"]},  # COUNT DISTINCT, exact
    {"metrics": ["revenue"], "group_by": ["customers.segment"]},  # joins: the fact table
]


def _build_db(scale: float) -> Path:
    db = Path(f"/tmp/dosi-bench-rollups/shop-{scale:g}.duckdb")
    if db.exists():
        return db
    spec = importlib.util.spec_from_file_location("g", ROOT / "examples/shop/generate.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    db.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    gen.build(db, scale=scale)
    print(f"generated {db} in {time.perf_counter() - t:.1f} s")
    return db


def _norm(r: Any) -> list[tuple[Any, ...]]:
    return [
        tuple(
            round(float(v), 6) if isinstance(v, (float, decimal.Decimal)) else v
            for v in row.values()
        )
        for row in r["rows"]
    ]


def _last_month(db: Path) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        last = con.execute("SELECT max(order_date) FROM orders").fetchone()[0]
    finally:
        con.close()
    return last.replace(day=1).isoformat()


def _p50(fn: Any, runs: int, warm: int = 3) -> float:
    for _ in range(warm):  # warm: the first runs of a statement pay DuckDB's caches
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=250)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--raw-runs", type=int, default=None, help="runs of the fact-table queries")
    args = ap.parse_args()
    raw_runs = args.raw_runs or args.runs
    db = _build_db(args.scale)
    store = db.with_name(f"{db.stem}.rollups.duckdb")
    store.unlink(missing_ok=True)
    raw = dosi.Engine(MODEL, result_cache=False)
    served = dosi.Engine(MODEL, rollups=ROLLUPS, rollup_store=store, result_cache=False)
    cached = dosi.Engine(MODEL, rollups=ROLLUPS, rollup_store=store)
    t = time.perf_counter()
    served.rollups_build(db_path=db)
    build = time.perf_counter() - t
    t = time.perf_counter()
    served.rollups_build(db_path=db)  # a full refresh
    refresh = time.perf_counter() - t
    t = time.perf_counter()
    served.rollups_build(db_path=db, since=_last_month(db))  # the last month's partitions
    incremental = time.perf_counter() - t
    t = time.perf_counter()
    served.rollups_refresh(db_path=db)
    noop = time.perf_counter() - t
    print(
        f"build {build * 1000:.0f} ms, full refresh {refresh * 1000:.0f} ms, incremental "
        f"(last month) {incremental * 1000:.0f} ms, refresh with nothing stale "
        f"{noop * 1000:.1f} ms, store {store.stat().st_size / 1e6:.1f} MB"
    )
    print(f"{'#':>2} {'raw ms':>8} {'rollup ms':>9} {'cache ms':>8} {'speed-up':>8}  served")
    ratios, hits, served_n = [], [], 0
    for i, q in enumerate(DASHBOARD):
        want = _norm(raw.execute(q, db_path=db))
        got = served.execute(q, db_path=db)
        assert _norm(got) == want, f"query {i}: rollup answer differs"
        cached.execute(q, db_path=db)
        assert _norm(cached.execute(q, db_path=db)) == want, f"query {i}: cached answer differs"
        is_served = "dosi_rollups" in got["sql"]
        served_n += is_served
        r = _p50(lambda q=q: raw.execute(q, db_path=db), raw_runs, warm=min(3, raw_runs))
        s = _p50(lambda q=q: served.execute(q, db_path=db), args.runs)
        c = _p50(lambda q=q: cached.execute(q, db_path=db), max(args.runs, 20))
        if is_served:
            ratios.append(r / s)
        hits.append(c)
        print(
            f"{i:>2} {r:8.1f} {s:9.1f} {c:8.2f} {r / s:7.1f}x  {'rollup' if is_served else 'fact'}"
        )
    print(
        f"served {served_n}/{len(DASHBOARD)}; speed-up on served queries: median "
        f"{statistics.median(ratios):.1f}x, geometric mean "
        f"{statistics.geometric_mean(ratios):.1f}x; cache hit p50 {statistics.median(hits):.2f} ms"
    )
    for e in (raw, served, cached):
        e.close()


if __name__ == "__main__":
    main()
