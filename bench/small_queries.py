"""Benchmark (issue 27 item 3): small queries (4 to 34 rows) end to end, dosi against the
reference engine, and the same queries' SQL alone. Not a test: it prints figures.

Every engine runs in its own child process speaking JSON lines (dosi: this file with
`--worker`; the reference engine: an adapter script kept outside the repository, `--reference-worker`, under its own Python), each
timing its own calls, and the benchmark alternates them query by query and round by round
(A/B, then B/A), so a shared machine's load falls on both alike.

    python bench/small_queries.py --reference /path/to/python3.12     # dosi vs the reference
    python bench/small_queries.py --reference PY --before ../main/src  # + dosi at another src
    python bench/small_queries.py --profile bench/profiles/execute_small.txt  # cProfile only

- **end to end**: `Engine.execute(query, db_path=..., cache=False)` per call (the result
  cache off: a real run each time) against the reference engine's `Engine.execute(query,
  db_path=...)`; also dosi with its result cache on (`cached`);
- **SQL alone**: the SQL dosi's `execute` ran (planned for this database's table sizes) and
  the reference engine's compiled SQL, both on one plain DuckDB connection to dosi's
  database, alternating;
- the rows of both engines are compared (`ROWS DIFFER` flags a mismatch).

The reference engine's database is built by the worker from the same Parquet files with its own
DuckDB. `--scale 1` (the default) is the shop example's curated data, ~4,000 orders.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import decimal
import importlib.util
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "shop" / "model.yaml"


def _f(name: str, grain: str | None = None) -> dict[str, str]:
    return {"field": name} if grain is None else {"field": name, "grain": grain}


T = "metric_time"
#: dashboard-sized queries on the shop model: 4 to 34 rows at scale 1, in the query form both
#: engines accept (group_by entries as `{"field", "grain"}` objects)
QUERIES: list[tuple[str, dict[str, Any]]] = [
    (
        "revenue_by_channel",
        {"metrics": ["revenue", "order_count"], "group_by": [_f("orders.channel")]},
    ),
    ("revenue_by_month", {"metrics": ["revenue"], "group_by": [_f(T, "month")]}),
    (
        "revenue_by_quarter_2024",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": [_f(T, "quarter")],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
    ),
    ("aov_by_segment", {"metrics": ["avg_order_value"], "group_by": [_f("customers.segment")]}),
    ("revenue_by_region", {"metrics": ["revenue"], "group_by": [_f("regions.region_name")]}),
    (
        "completed_by_status",
        {
            "metrics": ["completed_revenue", "revenue"],
            "group_by": [_f("orders.status")],
            "where_sql": "orders.channel IN ('web', 'mobile')",
        },
    ),
    ("items_by_category", {"metrics": ["items_sold"], "group_by": [_f("products.category")]}),
    ("customers_by_year", {"metrics": ["customer_count"], "group_by": [_f(T, "year")]}),
    (
        "revenue_channel_year",
        {
            "metrics": ["revenue"],
            "group_by": [_f("orders.channel"), _f(T, "year")],
        },
    ),
    (
        "refunds_by_month_2025",
        {
            "metrics": ["refund_total"],
            "group_by": [_f(T, "month")],
            "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
        },
    ),
]


# -- the dosi worker ---------------------------------------------------------------------------
def worker() -> None:
    """The dosi side of the JSON-lines protocol (ops build, load, execute and compile; the reference side is an adapter kept outside the repository)."""
    from dosi import Engine

    engine: Any = None
    db: str | None = None
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        try:
            if op == "build":
                db = msg["db"]
                out: dict[str, Any] = {"ok": True}
            elif op == "load":
                engine = Engine(msg["model"])
                out = {"ok": True}
            elif op == "execute":
                times, cpu, res = [], [], None
                cache = bool(msg.get("cache", False))
                for _ in range(int(msg["runs"])):
                    t0, c0 = time.perf_counter(), time.process_time()
                    res = engine.execute(msg["query"], db_path=db, cache=cache)
                    times.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                out = {
                    "times": times,
                    "cpu": cpu,
                    "rows": res["rows"],
                    "columns": res["columns"],
                    "sql": res["sql"],  # what ran: planned for this connection's tables
                }
            elif op == "compile":
                out = {"sql": engine.compile(msg["query"])["sql"]}
            else:
                out = {"error": f"unknown op {op}"}
        except Exception as exc:  # reported to the parent, which prints it
            out = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(out, default=str) + "\n")
        sys.stdout.flush()


class Child:
    """One engine in a child process."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def ask(self, **msg: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        if "error" in out:
            raise RuntimeError(f"{self.name}: {out['error']}")
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def dosi_child(name: str, src: Path) -> Child:
    env = dict(os.environ, PYTHONPATH=str(src))
    return Child(name, [sys.executable, str(Path(__file__).resolve()), "--worker"], env)


# -- comparing rows ----------------------------------------------------------------------------
def _norm(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float, decimal.Decimal)):
        return round(float(v), 4)
    text = str(v)
    try:  # exact decimals cross the pipe as text
        return round(float(text), 4)
    except ValueError:
        return text[:10] if text.endswith(" 00:00:00") else text  # a midnight timestamp: a date


def same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    def key(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
        return sorted(tuple(repr(_norm(r[c])) for c in sorted(r)) for r in rows)

    return key(a) == key(b)


# -- running -----------------------------------------------------------------------------------
def build_data(workdir: Path, scale: float) -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", ROOT / "examples/shop/generate.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    db, parquet = workdir / f"shop-{scale:g}.duckdb", workdir / f"parquet-{scale:g}"
    if not db.exists() or not parquet.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        gen.build(db, scale=scale, out_dir=parquet)
    return db, parquet


def med_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def min_ms(xs: list[float]) -> float:
    return min(xs) * 1000


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def time_sql(con: duckdb.DuckDBPyConnection, sql: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        con.sql(sql).to_arrow_table()
        times.append(time.perf_counter() - t0)
    return times


def _report(
    clock: str,
    suffix: str,
    agg: Any,
    names: list[str],
    e2e: dict[str, dict[str, list[float]]],
    rows: dict[str, dict[str, Any]],
    with_ref: bool,
    with_before: bool,
) -> None:
    """One end-to-end table: `agg` (median or best) per call by `clock`, and the ratios to the
    reference."""
    head = ["query", "rows", *[f"{n} ms" for n in names], "dosi cached ms"]
    compared = ("dosi", "before") if with_before else ("dosi",)
    if with_ref:
        head += [f"{n} / ref" for n in compared]
    print(f"\nEnd to end, {clock} per call (result cache off; `dosi cached`: on)\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ratios: dict[str, list[float]] = {n: [] for n in compared}
    for name, _ in QUERIES:
        t = {
            k[: -len(suffix)] if suffix else k: v
            for k, v in e2e[name].items()
            if k.endswith(suffix) and (suffix or ":" not in k)
        }
        line = [name, str(len(rows[name]["dosi"]))]
        line += [f"{agg(t[n]):.2f}" for n in names] + [f"{agg(t['cached']):.3f}"]
        if with_ref:
            for n in compared:
                r = agg(t[n]) / agg(t["reference"])
                ratios[n].append(r)
                line.append(f"{r:.2f}")
            if not same_rows(rows[name]["dosi"], rows[name]["reference"]):
                line[0] += " ROWS DIFFER"
        print("| " + " | ".join(line) + " |")
    if with_ref:
        gm = " | ".join(f"**{geomean(ratios[n]):.2f}**" for n in compared)
        print("| **geometric mean** |" + " |" * (len(head) - 1 - len(compared)) + f" {gm} |")
        print(f"worst dosi / ref: {max(ratios['dosi']):.2f}")


def run_bench(args: argparse.Namespace) -> None:
    workdir = Path(args.workdir)
    db, parquet = build_data(workdir, args.scale)
    children: list[Child] = [dosi_child("dosi", ROOT / "src")]
    if args.before:
        children.append(dosi_child("before", Path(args.before).resolve()))
    ref: Child | None = None
    if args.reference:
        if not args.reference_worker:
            raise SystemExit(
                "--reference needs --reference-worker (an adapter kept outside the repo)"
            )
        ref = Child("reference", [args.reference, args.reference_worker])
        children.append(ref)
    for child in children:
        target = workdir / f"reference-{args.scale:g}.duckdb" if child is ref else db
        child.ask(op="build", parquet=str(parquet), db=str(target))
        child.ask(op="load", model=str(MODEL))
    print(
        f"load average {os.getloadavg()[0]:.2f}; {len(QUERIES)} queries, {args.rounds} rounds "
        f"x {args.runs} calls per engine per query, alternating"
    )

    e2e: dict[str, dict[str, list[float]]] = {n: {} for n, _ in QUERIES}
    rows: dict[str, dict[str, Any]] = {n: {} for n, _ in QUERIES}
    for rnd in range(args.rounds):
        order = children if rnd % 2 == 0 else list(reversed(children))
        for name, q in QUERIES:
            for child in order:
                out = child.ask(op="execute", query=q, runs=args.runs)
                e2e[name].setdefault(child.name, []).extend(out["times"])
                e2e[name].setdefault(f"{child.name}:cpu", []).extend(out["cpu"])
                rows[name][child.name] = out["rows"]
            if rnd == 0:  # dosi with its result cache on (reported, not the target)
                children[0].ask(op="execute", query=q, runs=1, cache=True)
                out = children[0].ask(op="execute", query=q, runs=args.runs, cache=True)
                e2e[name].setdefault("cached", []).extend(out["times"])
                e2e[name].setdefault("cached:cpu", []).extend(out["cpu"])
    print(f"load average {os.getloadavg()[0]:.2f} after the end-to-end rounds")
    names = [c.name for c in children]
    for clock, suffix, agg in (
        ("median wall clock", "", med_ms),
        ("best wall clock", "", min_ms),
        ("median process CPU time", ":cpu", med_ms),
    ):
        _report(clock, suffix, agg, names, e2e, rows, ref is not None, bool(args.before))

    if ref is None:
        return
    print("\nSQL alone on one DuckDB connection (dosi's database, plain connection), ms\n")
    con = duckdb.connect(str(db), read_only=True)
    sqls = {
        n: (
            children[0].ask(op="execute", query=q, runs=1)["sql"],
            ref.ask(op="compile", query=q)["sql"],
        )
        for n, q in QUERIES
    }
    sql_t: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n, _ in QUERIES}
    for rnd in range(args.rounds):
        for name, _ in QUERIES:
            ours, theirs = sqls[name]
            first, second = (ours, theirs) if rnd % 2 == 0 else (theirs, ours)
            a, b = time_sql(con, first, args.runs), time_sql(con, second, args.runs)
            sql_t[name][0].extend(a if rnd % 2 == 0 else b)
            sql_t[name][1].extend(b if rnd % 2 == 0 else a)
    print("| query | dosi SQL ms | reference SQL ms | ratio | dosi best | reference best | ratio |")
    print("|---|---|---|---|---|---|---|")
    by_med, by_min = [], []
    for name, _ in QUERIES:
        a, b = sql_t[name]
        r, rb = med_ms(a) / med_ms(b), min_ms(a) / min_ms(b)
        by_med.append(r)
        by_min.append(rb)
        print(
            f"| {name} | {med_ms(a):.3f} | {med_ms(b):.3f} | {r:.2f} "
            f"| {min_ms(a):.3f} | {min_ms(b):.3f} | {rb:.2f} |"
        )
    print(f"| **geometric mean** | | | **{geomean(by_med):.2f}** | | | **{geomean(by_min):.2f}** |")
    print(f"worst (median): {max(by_med):.2f}; load average {os.getloadavg()[0]:.2f}")
    for child in children:
        child.close()


def profile(args: argparse.Namespace, out: Path) -> None:
    """cProfile of dosi's execute path over the queries (result cache off), written as text."""
    from dosi import Engine

    db, _ = build_data(Path(args.workdir), args.scale)
    engine = Engine(str(MODEL))
    for _, q in QUERIES:
        engine.execute(q, db_path=str(db), cache=False)
    prof = cProfile.Profile()
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    prof.enable()
    for _ in range(args.runs):
        for _, q in QUERIES:
            engine.execute(q, db_path=str(db), cache=False)
    prof.disable()
    with out.open("w") as fh:
        fh.write(
            f"# engine.execute, {len(QUERIES)} small queries x {args.runs}, cache off, {started}\n"
        )
        for order in ("tottime", "cumulative"):
            fh.write(f"\n## by {order}\n")
            pstats.Stats(prof, stream=fh).strip_dirs().sort_stats(order).print_stats(40)
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--reference", help="the Python that runs the reference adapter")
    ap.add_argument(
        "--reference-worker",
        help="the reference engine's adapter: a script outside this repository that speaks the "
        "JSON-lines protocol of dosi_child (ops build, load, execute, compile)",
    )
    ap.add_argument("--before", help="another dosi src directory to time alongside")
    ap.add_argument("--scale", type=float, default=1)
    ap.add_argument("--runs", type=int, default=20, help="calls per engine per query per round")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--workdir", default="/tmp/dosi-bench-small")
    ap.add_argument("--profile", help="write a cProfile text of dosi's execute path here")
    args = ap.parse_args()
    if args.worker:
        worker()
    elif args.profile:
        profile(args, Path(args.profile))
    else:
        run_bench(args)


if __name__ == "__main__":
    main()
