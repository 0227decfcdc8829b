"""Benchmark: model load, compile latency, and end-to-end query time vs hand-written SQL.

    python bench/bench.py                      # compile figures + queries at scale 1
    python bench/bench.py --scale 2500         # ~10M orders (builds /tmp/dosi-bench once)

Not a test: it prints figures (medians) for the closing notes. Query time compares the
engine's SQL with the hand-written SQL of bench/queries.py in the same run, and checks that
both return the same rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from big_model import big_model_text  # noqa: E402
from queries import CASES  # noqa: E402

import dosi  # noqa: E402

MODEL = ROOT / "examples" / "shop" / "model.yaml"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", ROOT / "examples/shop/generate.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_ms(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def large_model_load(n: int, runs: int = 3) -> tuple[float, float]:
    """Median wall and CPU seconds to load the `n`-metric model of bench/big_model.py (20
    datasets, windows, derives, D-LOD fields); the engine is dropped between loads."""
    text = big_model_text(n)
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        engine = dosi.Engine(model_text=text)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
        del engine
    return statistics.median(wall), statistics.median(cpu)


METRICS = [
    "revenue",
    "order_count",
    "customer_count",
    "avg_order_value",
    "net_revenue",
    "completed_revenue",
    "refund_total",
    "refund_count",
]
DIMS = [
    "orders.channel",
    "customers.segment",
    "regions.region_name",
    "metric_time:month",
    "orders.status",
    "metric_time:quarter",
    "metric_time:week",
]
WINDOWS = [
    "revenue_mom",
    "revenue_yoy",
    "revenue_rolling_3m",
    "revenue_ytd",
    "revenue_running",
    "revenue_rank",
    "first_month_revenue",
    "revenue_next_month",
]
WINDOW_DIMS = [
    ["orders.channel", "metric_time:month"],
    ["customers.segment", "metric_time:month"],
    ["metric_time:month"],
    ["regions.region_name", "metric_time:quarter"],
    ["orders.status", "metric_time:month"],
    ["orders.channel", "metric_time:quarter"],
    ["customers.segment", "metric_time:quarter"],
    ["metric_time:quarter"],
]


LITERAL_VARIANTS = 6


def compile_families() -> dict[str, list[dict[str, Any]]]:
    """Query families, each on a fresh engine: `distinct` and `window` shapes (no two differ
    only in literals, so neither cache answers), `literals` (the distinct shapes again with
    only the limit and a filter value changed: the parameterised plan cache answers from the
    third query of each shape on)."""
    distinct = []
    for i, (a, b) in enumerate(itertools.combinations(METRICS, 2)):
        for j, d in enumerate(DIMS):
            q: dict[str, Any] = {"metrics": [a, b], "group_by": [d]}
            if j % 2:
                q["time_range"] = {"start": f"2024-{1 + i % 12:02d}-01"}
            distinct.append(q)
    window = [
        {"metrics": ["revenue", w], "group_by": dims}
        for w, dims in itertools.product(WINDOWS, WINDOW_DIMS)
        if not (w in ("revenue_mom", "revenue_next_month") and dims[-1].endswith("quarter"))
    ]
    literals = []
    statuses = ["completed", "returned", "cancelled", "pending", "shipped", "open"]
    for i, q in enumerate(distinct[:48]):
        for k in range(LITERAL_VARIANTS):  # a dashboard's requests: another limit and value
            v = {**q, "where_sql": f"orders.status = '{statuses[k]}'", "limit": 10 + 7 * k + i}
            literals.append(v)
    return {"distinct": distinct, "window": window, "literals": literals}


def _timed(engine: Any, qs: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        engine.compile(q)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return wall, cpu


def _p90(xs: list[float]) -> float:
    return sorted(xs)[int(len(xs) * 0.9)]


def compile_figures(sizes: list[int]) -> None:
    loads = []
    for _ in range(7):
        t = time.perf_counter()
        engine = dosi.Engine(model_path=MODEL)
        loads.append(time.perf_counter() - t)
    print(
        f"model load (shop, {len(engine.model.metrics)} metrics): "
        f"median {statistics.median(loads) * 1e3:.2f} ms"
    )
    for n in sizes:
        wall, cpu = large_model_load(n)
        print(f"model load ({n} metrics, 20 datasets): median {wall:.3f} s (CPU {cpu:.3f} s)")
    for name, qs in compile_families().items():
        engine = dosi.Engine(model_path=MODEL)  # fresh caches
        wall, cpu = _timed(engine, qs)
        if name == "literals":  # the first two of each shape compile in full
            wall = [w for i, w in enumerate(wall) if i % LITERAL_VARIANTS >= 2]
            cpu = [c for i, c in enumerate(cpu) if i % LITERAL_VARIANTS >= 2]
        print(
            f"compile, {name} (n={len(wall)}): median {statistics.median(wall) * 1e3:.3f} ms, "
            f"p90 {_p90(wall) * 1e3:.3f} ms (CPU median {statistics.median(cpu) * 1e3:.3f} ms, "
            f"p90 {_p90(cpu) * 1e3:.3f} ms)"
        )
    engine = dosi.Engine(model_path=MODEL)
    rep = [compile_families()["distinct"][3]] * 5000
    wall, _ = _timed(engine, rep)
    print(f"compile, repeated query (plan cache): median {statistics.median(wall) * 1e6:.1f} us")


def _norm(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    def cell(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 6)
        if hasattr(v, "is_finite"):  # Decimal
            return round(float(v), 6)
        if hasattr(v, "isoformat"):
            return str(v)[:10]
        return v

    return sorted((tuple(cell(v) for v in r) for r in rows), key=repr)


def query_figures(db: Path, runs: int) -> None:
    engine = dosi.Engine(model_path=MODEL)
    con = duckdb.connect(str(db), read_only=True)
    ratios = []
    print(f"\n{'query':32} {'engine ms':>10} {'hand ms':>10} {'ratio':>7}  rows")
    for name, query, hand in CASES:
        sql = engine.compile(query)["sql"]
        got = con.sql(sql).fetchall()
        want = con.sql(hand).fetchall()
        same = _norm(got) == _norm(want)
        # interleave to share cache and noise conditions
        e_ms, h_ms = [], []
        for _ in range(runs):
            e_ms.append(median_ms(lambda s=sql: con.sql(s).fetchall(), 1))
            h_ms.append(median_ms(lambda s=hand: con.sql(s).fetchall(), 1))
        e, h = statistics.median(e_ms), statistics.median(h_ms)
        ratios.append(e / h)
        flag = "" if same else "  ROWS DIFFER"
        print(f"{name:32} {e:10.2f} {h:10.2f} {e / h:7.2f}  {len(got)}{flag}")
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean engine/hand: {geo:.3f} (worst {max(ratios):.2f})")
    t = time.perf_counter()
    for _name, query, _ in CASES:
        engine.execute(query, db_path=str(db))
    print(
        f"end to end (compile + execute + rows), all {len(CASES)} queries: "
        f"{(time.perf_counter() - t) * 1e3:.1f} ms"
    )


#: A wide result (about 45k rows at --scale 250): the result path, not the SQL, is measured.
RESULT_QUERY = {
    "metrics": ["revenue", "order_count"],
    "group_by": ["orders.order_date", "customers.segment", "orders.channel", "orders.status"],
}


def result_path_figures(db: Path, runs: int) -> None:
    """Issue 10 item 7: execute_arrow within 1.05x of the SQL's own time (to an Arrow table,
    on an equally locked-down connection); execute() adds one vectorised row build."""
    from dosi.execute.duckdb_runner import open_duckdb
    from dosi.execute.rows import arrow_rows
    from dosi.execute.values import to_python

    engine = dosi.Engine(model_path=MODEL)
    sql = engine.compile(RESULT_QUERY)["sql"]
    con = open_duckdb(str(db))
    table = engine.execute_arrow(RESULT_QUERY, db_path=str(db))  # warm: plan cache, connection

    def per_value() -> None:  # the former row builder, for comparison
        cols = table.column_names
        data = [table.column(i).to_pylist() for i in range(table.num_columns)]
        [{c: to_python(data[j][i]) for j, c in enumerate(cols)} for i in range(table.num_rows)]

    sql_ms, arrow_ms, exec_ms = [], [], []
    for _ in range(max(runs, 5)):  # interleaved, as the query figures are
        sql_ms.append(median_ms(lambda: con.sql(sql).to_arrow_table(), 1))
        arrow_ms.append(median_ms(lambda: engine.execute_arrow(RESULT_QUERY, db_path=str(db)), 1))
        exec_ms.append(median_ms(lambda: engine.execute(RESULT_QUERY, db_path=str(db)), 1))
    s, a, e = (statistics.median(x) for x in (sql_ms, arrow_ms, exec_ms))
    print(
        f"\nresult path ({table.num_rows} rows): SQL to Arrow {s:.1f} ms, execute_arrow {a:.1f} ms "
        f"({a / s:.3f}x), execute {e:.1f} ms ({e / s:.2f}x); rows alone: vectorised "
        f"{median_ms(lambda: arrow_rows(table), runs):.1f} ms, per value "
        f"{median_ms(per_value, runs):.1f} ms"
    )
    con.close()
    engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--db", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--compile-only", action="store_true", help="load and compile figures only")
    ap.add_argument(
        "--model-sizes", default="1000,5000", help="metric counts of the large-model loads"
    )
    args = ap.parse_args()
    if not args.skip_compile:
        compile_figures([int(n) for n in args.model_sizes.split(",") if n])
    if args.compile_only:
        return
    db = args.db or Path(f"/tmp/dosi-bench/shop-{args.scale:g}.duckdb")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        _generator().build(db, scale=args.scale)
        print(f"built {db} in {time.perf_counter() - t:.1f} s")
    query_figures(db, args.runs)
    result_path_figures(db, args.runs)


if __name__ == "__main__":
    main()
