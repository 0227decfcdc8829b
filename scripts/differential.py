"""Differential run against the reference engine (a black box): the same queries through dosi
and through the reference, on the same data, compared on values and error codes.

    python scripts/differential.py --reference-python PY --reference-runner ADAPTER [--out FILE]

The reference runs in its own interpreter (`--reference-python`) through an adapter script kept
outside the repository (`--reference-runner`); this script sends it each world's model path, its own DuckDB file and the query list on stdin and
reads its answers back as JSON. Each engine gets its own DuckDB file built from the same
SQL or Parquet, by its own DuckDB. Nothing of the reference is kept in the repository; the
report (stdout, and `--out` as JSON) lists every disagreement for a person to judge against
the documents (docs/differences.md holds the deliberate ones).

Not a CI test: it needs the reference engine and takes a minute.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from dosi.engine import Engine  # noqa: E402
from dosi.errors import OsiError  # noqa: E402

FIX = ROOT / "tests" / "right_numbers" / "fixtures"


@dataclass
class World:
    name: str
    model: Path
    sql: Path | None  # the data, as SQL (a fixture world) ...
    parquet: Path | None = None  # ... or as one Parquet file per table (the shop example)
    cats: list[str] = field(default_factory=list)
    filt: str = ""
    start: str = ""
    end: str = ""
    pairs: list[list[str]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)


def g(name: str, grain: str | None = None) -> dict[str, Any]:
    return {"field": name, **({"grain": grain} if grain else {})}


def worlds(tmp: Path) -> list[World]:
    spec = importlib.util.spec_from_file_location(
        "shop_generate", ROOT / "examples/shop/generate.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    pq = tmp / "shop_pq"
    gen.build(tmp / "shop_gen.duckdb", scale=1, out_dir=pq)
    return [
        World(
            "shop_example",
            ROOT / "examples/shop/model.yaml",
            None,
            pq,
            cats=["orders.channel", "regions.region_name"],
            filt="orders.status = 'completed'",
            start="2024-01-01",
            end="2024-07-01",
            pairs=[
                ["revenue", "refund_total"],
                ["revenue", "event_count"],
                ["revenue_mom", "order_count"],
            ],
        ),
        World(
            "fixture_shop",
            FIX / "shop.yaml",
            FIX / "shop.sql",
            cats=["orders.channel", "regions.region_name"],
            filt="orders.status = 'done'",
            start="2024-12-01",
            end="2025-04-01",
            pairs=[
                ["revenue", "refund_total"],
                ["revenue", "visit_count"],
                ["revenue_mom", "refund_total"],
            ],
            extra=[
                {
                    "metrics": ["revenue_over"],
                    "group_by": [g("metric_time", "month")],
                    "params": {"t": 60},
                },
                {
                    "metrics": ["revenue_in_channel"],
                    "group_by": [g("metric_time", "month")],
                    "params": {"c": "store"},
                },
                {
                    "metrics": ["revenue_moving_avg"],
                    "group_by": [g("metric_time", "month")],
                    "params": {"n": 3},
                },
                {"metrics": ["revenue_in_channel"], "params": {"c": "phone"}},
                {
                    "metrics": ["revenue_moving_avg"],
                    "group_by": [g("metric_time", "month")],
                    "params": {"n": 9},
                },
            ],
        ),
        World(
            "fixture_conform",
            FIX / "conform.yaml",
            FIX / "conform.sql",
            cats=["platforms.platform_name", "login.platform_id"],
            filt="login.region = 'eu'",
            start="2025-01-06",
            end="2025-02-03",
            pairs=[["users", "payers"], ["logins", "registrations"], ["ad_cost", "shop_revenue"]],
        ),
        World(
            "fixture_lod",
            FIX / "lod.yaml",
            FIX / "lod.sql",
            cats=["channels.channel_name", "orders.user_id"],
            filt="orders.amount > 10",
            start="2025-01-01",
            end="2025-03-01",
            pairs=[["revenue", "session_count"], ["revenue_share", "revenue"]],
        ),
    ]


def cases(w: World, metrics: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    mt = g("metric_time", "month")
    rng = {"start": w.start, "end": w.end}
    for m in metrics:
        out += [
            {"metrics": [m]},
            {"metrics": [m], "group_by": [mt]},
            {"metrics": [m], "group_by": [g("metric_time", "quarter")]},
            {"metrics": [m], "group_by": [g("metric_time", "week")], "time_range": rng},
            {"metrics": [m], "group_by": [g(w.cats[0])]},
            {"metrics": [m], "group_by": [mt, g(w.cats[0])]},
            {"metrics": [m], "group_by": [g(w.cats[1])]},
            {"metrics": [m], "group_by": [mt], "time_range": rng},
            {"metrics": [m], "group_by": [mt], "where_sql": w.filt},
            {"metrics": [m], "group_by": [mt], "context_filter": w.filt},
            {"metrics": [m], "group_by": [mt], "order_by": [{"key": m, "desc": True}], "limit": 3},
        ]
    for pair in w.pairs:
        out += [
            {"metrics": pair},
            {"metrics": pair, "group_by": [mt]},
            {"metrics": pair, "group_by": [mt], "time_range": rng},
            {"metrics": pair, "group_by": [g(w.cats[0])]},
        ]
    for m in metrics:  # windows partitioned by a category, ranges on an explicit field
        out += [
            {"metrics": [m], "group_by": [g(w.cats[0]), g("metric_time", "quarter")]},
            {"metrics": [m], "group_by": [g("metric_time", "day")], "time_range": rng},
            {"metrics": [m], "group_by": [mt], "time_range": {"start": w.start}},
            {"metrics": [m], "group_by": [mt], "time_range": {"end": w.end}},
        ]
    out += w.extra
    out += [  # mistakes: the codes must agree
        {"metrics": ["no_such_metric"]},
        {"metrics": [metrics[0]], "group_by": [g("no_such.field")]},
        {"metrics": [metrics[0]], "group_by": [g("metric_time", "fortnight")]},
        {"metrics": [metrics[0]], "where_sql": "no_such.field = 1"},
        {"metrics": [metrics[0]], "limit": -1},
        {"metrics": [metrics[0]], "time_range": {"start": "2025-01-01T00:00:00+02:00"}},
    ]
    return out


def build_db(w: World, path: Path, python: str) -> None:
    """The world's DuckDB file, built by the interpreter `python` with its own DuckDB."""
    if w.sql is not None:
        stmts = w.sql.read_text()
    else:
        assert w.parquet is not None
        stmts = ";".join(
            f"CREATE TABLE main.{p.stem} AS SELECT * FROM read_parquet('{p}')"
            for p in sorted(w.parquet.glob("*.parquet"))
        )
    code = (
        "import duckdb,sys; c=duckdb.connect(sys.argv[1]); c.execute(sys.stdin.read()); c.close()"
    )
    subprocess.run([python, "-c", code, str(path)], input=stmts, text=True, check=True)


def norm(v: Any) -> Any:
    """One comparable form: numbers (numeric strings too) to 9 significant digits, dates and
    midnight timestamps as ISO days."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float, decimal.Decimal)):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return str(f)
        return float(f"{f:.9g}")
    if isinstance(v, (dt.date, dt.datetime)):
        v = v.isoformat(sep=" ")
    if isinstance(v, str):
        if v.endswith(" 00:00:00") or v.endswith("T00:00:00"):
            return v[:10]
        try:
            return float(f"{float(decimal.Decimal(v)):.9g}")
        except (decimal.InvalidOperation, ValueError):
            return v
    return str(v)


def shape(q: dict[str, Any], ans: dict[str, Any]) -> Any:
    if "error" in ans:
        return ("error", ans["error"])
    rows = [tuple(norm(x) for x in r) for r in ans["rows"]]
    if not q.get("order_by"):
        rows = sorted(rows, key=repr)
    return ("rows", tuple(ans["columns"]), tuple(rows))


# (dosi code, reference code) pairs docs/differences.md lists as deliberate
DOCUMENTED = {
    ("unknown_field", "unsupported_filter"),  # an unknown column in where_sql: dosi names it
    ("unknown_grain", "ValueError"),  # a malformed query value: the reference has no code
    ("invalid_query", "ValueError"),
}


def classify(q: dict[str, Any], a: dict[str, Any], b: dict[str, Any]) -> str:
    """`agree`, `documented`, `tie_order` (ordered rows that differ only among equal sort
    keys) or the kind of disagreement."""
    sa, sb = shape(q, a), shape(q, b)
    if sa == sb:
        return "agree"
    if sa[0] == sb[0] == "error":
        return "documented" if (a["error"], b["error"]) in DOCUMENTED else "error_code"
    if sa[0] == "error":
        return "dosi_error"
    if sb[0] == "error":
        return "reference_error"
    if sa[1] != sb[1]:
        return "columns"
    keys = [o["key"] if isinstance(o, dict) else o for o in q.get("order_by") or []]
    if q.get("limit") and keys and all(k in sa[1] for k in keys):
        idx = [sa[1].index(k) for k in keys]
        if [[r[i] for i in idx] for r in sa[2]] == [[r[i] for i in idx] for r in sb[2]]:
            return "tie_order"
    return "values"


def run_dosi(w: World, db: Path, qs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    try:
        eng = Engine(model_path=w.model)
    except OsiError as err:
        return [{"error": err.code}] * len(qs)
    out = []
    for q in qs:
        try:
            r = eng.execute(q, db_path=db)
            cols = r["columns"]
            out.append({"columns": cols, "rows": [[row.get(c) for c in cols] for row in r["rows"]]})
        except OsiError as err:
            out.append({"error": err.code, "message": str(err)[:300]})
        except Exception as exc:  # a bare exception is itself a finding
            out.append({"error": f"BARE:{type(exc).__name__}", "message": str(exc)[:300]})
    eng.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-python", required=True)
    ap.add_argument(
        "--reference-runner",
        required=True,
        help="the reference engine's adapter, kept outside this repository: it reads the job "
        "(a JSON list of worlds: model, db, cases) on stdin and writes one list of answers "
        "per world ({columns, rows} or {error, message}) as JSON on stdout",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--world", action="append", help="only these worlds (by name)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        chosen = [w for w in worlds(tmp) if not args.world or w.name in args.world]
        jobs, plans = [], []
        for w in chosen:
            mine, theirs = tmp / f"{w.name}.duckdb", tmp / f"{w.name}_ref.duckdb"
            build_db(w, mine, sys.executable)
            build_db(w, theirs, args.reference_python)
            names = [m["name"] for m in Engine(model_path=w.model).metrics()]
            qs = cases(w, names)
            plans.append((w, mine, qs))
            jobs.append({"model": str(w.model), "db": str(theirs), "cases": qs})
        proc = subprocess.run(
            [args.reference_python, args.reference_runner],
            input=json.dumps(jobs),
            text=True,
            capture_output=True,
            check=True,
        )
        ref_answers = json.loads(proc.stdout)
        report: list[dict[str, Any]] = []
        tally: Counter[str] = Counter()
        for (w, mine, qs), theirs in zip(plans, ref_answers, strict=True):
            ours = run_dosi(w, mine, qs)
            for q, a, b in zip(qs, ours, theirs, strict=True):
                kind = classify(q, a, b)
                if kind == "agree":
                    tally["agree"] += 1
                    continue
                tally[kind] += 1
                report.append(
                    {"world": w.name, "kind": kind, "query": q, "dosi": a, "reference": b}
                )
    total = sum(tally.values())
    fine = tally["agree"] + tally["documented"] + tally["tie_order"]
    print(
        f"{tally['agree']} of {total} agree ({100 * tally['agree'] / max(total, 1):.1f}%); "
        f"with documented differences and tie orders: {fine} ({100 * fine / max(total, 1):.1f}%)"
    )
    for k, n in sorted(tally.items()):
        print(f"  {k}: {n}")
    for r in report:
        da, db_ = r["dosi"], r["reference"]
        print(f"\n[{r['world']}] {r['kind']}: {json.dumps(r['query'])}")
        print("  dosi:", json.dumps(da, default=str)[:400])
        print("  ref: ", json.dumps(db_, default=str)[:400])
    if args.out:
        args.out.write_text(
            json.dumps({"tally": tally, "disagreements": report}, default=str, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
