"""Benchmark: model load, compile latency, and end-to-end query time vs hand-written SQL.

    python bench/bench.py                      # compile figures + queries at scale 1
    python bench/bench.py --scale 2500         # ~10M orders (builds /tmp/dosi-bench once)

Not a test: it prints figures (medians) for the closing notes. Query time compares the
engine's SQL with the hand-written SQL of bench/queries.py in the same run, and checks that
both return the same rows.
"""

from __future__ import annotations

import argparse
import copy
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


def large_model_load_ms(n: int = 1000) -> float:
    """The shop model with its plain metrics copied up to `n` metrics (docs/performance.md)."""
    import yaml

    doc = yaml.safe_load(MODEL.read_text())
    sm = doc["semantic_model"][0]
    own = sm["metrics"]  # kept: fields of the model may name them (a D-LOD field's base)
    plain = [m for m in own if not m.get("custom_extensions")]
    # deep copies: shared sub-objects would be dumped as YAML aliases, which the loader caps
    copies = [copy.deepcopy({**plain[i % len(plain)], "name": f"m{i}"}) for i in range(n)]
    sm["metrics"] = [*own, *copies[: n - len(own)]]
    text = yaml.safe_dump(doc)
    return median_ms(lambda: dosi.Engine(model_text=text), 3)


def compile_figures() -> None:
    loads = []
    for _ in range(7):
        t = time.perf_counter()
        engine = dosi.Engine(model_path=MODEL)
        loads.append(time.perf_counter() - t)
    print(
        f"model load (shop, {len(engine.model.metrics)} metrics): "
        f"median {statistics.median(loads) * 1e3:.2f} ms"
    )
    print(f"model load (1000 metrics): median {large_model_load_ms():.1f} ms")
    metrics = [
        "revenue",
        "order_count",
        "customer_count",
        "avg_order_value",
        "net_revenue",
        "completed_revenue",
        "refund_total",
        "refund_count",
    ]
    dims = [
        "orders.channel",
        "customers.segment",
        "regions.region_name",
        "metric_time:month",
        "orders.status",
        "metric_time:quarter",
        "metric_time:week",
    ]
    queries = []
    for i, (a, b) in enumerate(itertools.combinations(metrics, 2)):
        for j, d in enumerate(dims):
            q: dict[str, Any] = {"metrics": [a, b], "group_by": [d]}
            if j % 2:
                q["time_range"] = {"start": f"2024-{1 + i % 12:02d}-01"}
            queries.append(q)
    windows = [
        "revenue_mom",
        "revenue_yoy",
        "revenue_rolling_3m",
        "revenue_ytd",
        "revenue_running",
        "revenue_rank",
        "first_month_revenue",
        "revenue_next_month",
    ]
    wqueries = []
    for i, w in enumerate(windows * 8):
        wqueries.append(
            {
                "metrics": ["revenue", w],
                "group_by": ["orders.channel", "metric_time:month"],
                "limit": i,
            }
        )

    def timed(qs: list[dict[str, Any]]) -> list[float]:
        out = []
        for q in qs:
            t = time.perf_counter()
            engine.compile(q)
            out.append(time.perf_counter() - t)
        return out

    engine = dosi.Engine(model_path=MODEL)  # fresh cache: every query below is distinct
    d = timed(queries)
    w = timed(wqueries)
    print(
        f"compile, distinct queries (n={len(d)}): median {statistics.median(d) * 1e3:.3f} ms, "
        f"p90 {sorted(d)[int(len(d) * 0.9)] * 1e3:.3f} ms"
    )
    print(
        f"compile, distinct window queries (n={len(w)}): median "
        f"{statistics.median(w) * 1e3:.3f} ms, p90 {sorted(w)[int(len(w) * 0.9)] * 1e3:.3f} ms"
    )
    rep = [queries[3]] * 5000
    r = timed(rep)
    print(f"compile, repeated query (plan cache): median {statistics.median(r) * 1e6:.1f} us")


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
    args = ap.parse_args()
    if not args.skip_compile:
        compile_figures()
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
