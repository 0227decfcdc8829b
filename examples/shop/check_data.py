#!/usr/bin/env python3
"""Self-check for the shop dataset: prints the properties tests rely on.

    python examples/shop/check_data.py                       # examples/shop/data/shop.duckdb
    python examples/shop/check_data.py --db /tmp/shop10m.duckdb
    python examples/shop/check_data.py --parquet examples/shop/data   # check the Parquet files

Exits 1 when a promised property does not hold (gap months, orphans, NULLs, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")
EXPECTED_ORDER_GAPS = ["2024-02", "2025-07"]
EXPECTED_REFUND_GAPS = ["2023-05", "2024-10"]

failures: list[str] = []


def expect(cond: bool, what: str, quiet: bool = False) -> None:
    if not (quiet and cond):
        print(f"  [{'ok' if cond else 'FAIL'}] {what}")
    if not cond:
        failures.append(what)


def q(con, sql):
    return con.execute(sql).fetchall()


def one(con, sql):
    return con.execute(sql).fetchone()[0]


def empty_months(con, table, col, start="2023-01-01", end="2025-12-01"):
    rows = q(
        con,
        f"""
        SELECT strftime(m, '%Y-%m') FROM
          (SELECT unnest(generate_series(DATE '{start}', DATE '{end}', INTERVAL 1 MONTH))::DATE AS m) s
        WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE date_trunc('month', t.{col}) = s.m)
        ORDER BY 1
        """,
    )
    return [r[0] for r in rows]


def check_model(con, model_path: Path) -> None:
    """Cross-check model.yaml against the data: sources, fields, keys, metric SQL."""
    import yaml

    print(f"\n== model <-> data ({model_path.name})")
    model = yaml.safe_load(model_path.read_text())["semantic_model"][0]
    fields = {}
    for ds in model["datasets"]:
        table = ds["source"].split(".")[-1]
        cols = {c[0] for c in q(con, f"DESCRIBE SELECT * FROM {table}")}
        for f in ds.get("fields", []):
            expr = f["expression"]["dialects"][0]["expression"]
            fields[(ds["name"], f["name"])] = (table, expr)
            try:
                con.execute(f"SELECT {expr} FROM {table} LIMIT 0")
                ok = True
            except duckdb.Error:
                ok = False
            expect(ok, f"field {ds['name']}.{f['name']} = {expr} evaluates", quiet=True)
        names = {f["name"] for f in ds.get("fields", [])}
        pk = ds.get("primary_key", [])
        expect(
            set(pk) <= names and set(pk) <= cols,
            f"primary key {ds['name']}{pk} is declared",
            quiet=True,
        )
        if pk:
            dup = one(con, f"SELECT COUNT(*) - COUNT(DISTINCT ({', '.join(pk)})) FROM {table}")
            expect(dup == 0, f"primary key {ds['name']}{pk} is unique in data", quiet=True)
    print(
        f"  {len(model['datasets'])} datasets, {len(fields)} fields: sources exist, field SQL evaluates, primary keys unique"
    )
    for rel in model.get("relationships", []):
        ok = all((rel["from"], c) in fields for c in rel["from_columns"]) and all(
            (rel["to"], c) in fields for c in rel["to_columns"]
        )
        expect(ok, f"relationship {rel['name']} columns are fields", quiet=True)
    print(f"  {len(model.get('relationships', []))} relationships reference declared fields")
    for m in model.get("metrics", []):
        expr = m["expression"]["dialects"][0]["expression"]
        refs = set(re.findall(r"\b([a-z_]+)\.([a-z_]+)\b", expr))
        dsets = {d for d, _ in refs}
        for ce in m.get("custom_extensions", []):
            dsets |= {json.loads(ce["data"]).get("dataset")} - {None}
        if len(dsets) != 1:
            expect(False, f"metric {m['name']} reads exactly one dataset ({sorted(dsets)})")
            continue
        (ds_name,) = dsets
        table = next(d["source"].split(".")[-1] for d in model["datasets"] if d["name"] == ds_name)
        sql = re.sub(
            r"\b([a-z_]+)\.([a-z_]+)\b",
            lambda mo: f"({fields[(mo.group(1), mo.group(2))][1]})",
            expr,
        )
        try:
            val = one(con, f"SELECT {sql} FROM {table}")
            ok = True
        except (duckdb.Error, KeyError):
            val, ok = None, False
        expect(ok, f"metric {m['name']} = {expr} -> {val}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(HERE / "data" / "shop.duckdb"))
    ap.add_argument("--parquet", default=None, help="check <dir>/<table>.parquet instead of --db")
    ap.add_argument(
        "--model", default=str(HERE / "model.yaml"), help="model to cross-check ('' to skip)"
    )
    args = ap.parse_args(argv)

    if args.parquet:
        con = duckdb.connect()
        for t in TABLES:
            con.execute(
                f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{Path(args.parquet) / t}.parquet')"
            )
        print(f"source: parquet files in {args.parquet}")
    else:
        con = duckdb.connect(args.db, read_only=True)
        print(f"source: {args.db}")

    print("\n== row counts")
    counts = {t: one(con, f"SELECT COUNT(*) FROM {t}") for t in TABLES}
    for t in TABLES:
        print(f"  {t:12s} {counts[t]:>12,d}")

    print("\n== column types")
    for t in TABLES:
        cols = q(con, f"DESCRIBE SELECT * FROM {t}")
        print(f"  {t}: " + ", ".join(f"{c[0]} {c[1]}" for c in cols))

    print("\n== time coverage")
    lo, hi = q(con, "SELECT MIN(order_date), MAX(order_date) FROM orders")[0]
    print(f"  orders.order_date   {lo} .. {hi}")
    lo, hi = q(con, "SELECT MIN(refund_date), MAX(refund_date) FROM refunds")[0]
    print(f"  refunds.refund_date {lo} .. {hi}")
    lo, hi = q(con, "SELECT MIN(event_ts), MAX(event_ts) FROM events")[0]
    print(f"  events.event_ts     {lo} .. {hi}")
    og = empty_months(con, "orders", "order_date")
    rg = empty_months(con, "refunds", "refund_date")
    print(f"  months without orders  (2023-01..2025-12): {og}")
    print(f"  months without refunds (2023-01..2025-12): {rg}")
    expect(og == EXPECTED_ORDER_GAPS, f"order gap months == {EXPECTED_ORDER_GAPS}")
    # at scale 1 exactly these; tiny scales (< 0.5) can have extra refund-less months
    expect(
        set(EXPECTED_REFUND_GAPS) <= set(rg), f"refund gap months include {EXPECTED_REFUND_GAPS}"
    )
    refunds_in_order_gaps = q(
        con,
        "SELECT strftime(refund_date, '%Y-%m') m, COUNT(*) FROM refunds "
        "WHERE strftime(refund_date, '%Y-%m') IN ('2024-02', '2025-07') GROUP BY 1 ORDER BY 1",
    )
    print(f"  refunds inside order-gap months: {refunds_in_order_gaps}")
    per_day = q(
        con,
        "SELECT MAX(c), SUM((c >= 5)::INT), COUNT(*) FROM "
        "(SELECT order_date, COUNT(*) c FROM orders GROUP BY 1)",
    )[0]
    n_days = one(
        con, "SELECT COUNT(*) FROM range(DATE '2023-01-01', DATE '2026-01-01', INTERVAL 1 DAY)"
    )
    print(
        f"  days with orders: {per_day[2]} of {n_days}; max orders/day {per_day[0]}; days with >=5 orders: {per_day[1]}"
    )
    expect(per_day[0] >= 2, "some days have several orders")
    years = [r[0] for r in q(con, "SELECT DISTINCT year(order_date) FROM orders ORDER BY 1")]
    expect(years == [2023, 2024, 2025], f"orders in 2023, 2024, 2025 ({years})")
    monthly = q(
        con,
        "SELECT strftime(order_date, '%Y-%m'), COUNT(*), SUM(amount) FROM orders GROUP BY 1 ORDER BY 1",
    )
    print("  orders per month: " + ", ".join(f"{m}:{c}" for m, c, _ in monthly))

    print("\n== NULL counts (columns with any NULL)")
    for t in TABLES:
        cols = [c[0] for c in q(con, f"DESCRIBE SELECT * FROM {t}")]
        sel = ", ".join(f"COUNT(*) - COUNT({c})" for c in cols)
        nulls = q(con, f"SELECT {sel} FROM {t}")[0]
        for c, n in zip(cols, nulls, strict=True):
            if n:
                print(f"  {t}.{c}: {n}")
    expect(
        one(con, "SELECT COUNT(*) FROM customers WHERE region_id IS NULL") > 0,
        "customers.region_id has NULLs",
    )
    expect(
        one(con, "SELECT COUNT(*) FROM customers WHERE segment IS NULL") > 0,
        "customers.segment has NULLs",
    )
    expect(
        one(con, "SELECT COUNT(*) FROM orders WHERE channel IS NULL") > 0,
        "orders.channel has NULLs",
    )

    print("\n== referential integrity / orphans")
    orphans = q(
        con,
        "SELECT o.order_id, o.customer_id, o.order_date FROM orders o "
        "LEFT JOIN customers c USING (customer_id) WHERE c.customer_id IS NULL ORDER BY o.order_id",
    )
    print(f"  orders with no matching customer: {len(orphans)}")
    if len(orphans) <= 30:
        for oid, cid, d in orphans:
            print(f"    order_id={oid} customer_id={cid} order_date={d}")
    else:
        ids = sorted({r[1] for r in orphans})
        print(f"    orphan customer_ids: {ids}")
    expect(len(orphans) > 0, "some orders are orphans (customer_id not in customers)")
    checks = {
        "order_items without order": "SELECT COUNT(*) FROM order_items i ANTI JOIN orders o USING (order_id)",
        "order_items without product": "SELECT COUNT(*) FROM order_items i ANTI JOIN products p USING (product_id)",
        "refunds without order": "SELECT COUNT(*) FROM refunds r ANTI JOIN orders o USING (order_id)",
        "customers with unknown region (non-NULL)": "SELECT COUNT(*) FROM customers c ANTI JOIN regions r USING (region_id) WHERE c.region_id IS NOT NULL",
        "orders without items": "SELECT COUNT(*) FROM orders o ANTI JOIN order_items i USING (order_id)",
        "refunds of non-returned orders": "SELECT COUNT(*) FROM refunds r JOIN orders o USING (order_id) WHERE o.status <> 'returned'",
        "orders whose amount != SUM(quantity*unit_price)": "SELECT COUNT(*) FROM orders o JOIN (SELECT order_id, SUM(quantity*unit_price) s FROM order_items GROUP BY 1) i USING (order_id) WHERE o.amount <> i.s",
        "orders refunded more than their amount": "SELECT COUNT(*) FROM orders o JOIN (SELECT order_id, SUM(refund_amount) s FROM refunds GROUP BY 1) r USING (order_id) WHERE r.s > o.amount",
        "duplicate (order_id, line_no)": "SELECT COUNT(*) - COUNT(DISTINCT (order_id, line_no)) FROM order_items",
    }
    for label, sql in checks.items():
        n = one(con, sql)
        print(f"  {label}: {n}")
        expect(n == 0, f"{label} == 0")
    lines = q(
        con,
        "SELECT n, COUNT(*) FROM (SELECT order_id, COUNT(*) n FROM order_items GROUP BY 1) GROUP BY 1 ORDER BY 1",
    )
    print(f"  lines per order: {lines}")
    expect([r[0] for r in lines] == [1, 2, 3, 4], "1..4 lines per order")
    empty_regions = [
        r[0]
        for r in q(
            con, "SELECT region_id FROM regions ANTI JOIN customers USING (region_id) ORDER BY 1"
        )
    ]
    unsold = q(
        con,
        "SELECT COUNT(*), MIN(product_id) FROM products p ANTI JOIN order_items i USING (product_id)",
    )[0]
    no_orders = one(con, "SELECT COUNT(*) FROM customers c ANTI JOIN orders o USING (customer_id)")
    multi_refund = one(
        con, "SELECT COUNT(*) FROM (SELECT order_id FROM refunds GROUP BY 1 HAVING COUNT(*) > 1)"
    )
    print(f"  regions without customers: {empty_regions}")
    print(f"  products never sold: {unsold[0]} (first: product_id={unsold[1]})")
    print(f"  customers without orders: {no_orders}")
    print(f"  orders with more than one refund: {multi_refund}")

    print("\n== categorical values")
    for t, c in (
        ("orders", "status"),
        ("orders", "channel"),
        ("customers", "segment"),
        ("events", "event_type"),
    ):
        vals = q(con, f"SELECT {c}, COUNT(*) FROM {t} GROUP BY 1 ORDER BY 1 NULLS LAST")
        print(f"  {t}.{c}: " + ", ".join(f"{v}={n}" for v, n in vals))

    print("\n== totals (scale-independent sanity)")
    tot = q(
        con,
        "SELECT SUM(amount), SUM(discount), COUNT(DISTINCT customer_id) FROM orders",
    )[0]
    print(f"  revenue={tot[0]} discount={tot[1]} distinct order customer_ids={tot[2]}")
    print(
        f"  line_revenue={one(con, 'SELECT SUM(quantity*unit_price) FROM order_items')} "
        f"items_sold={one(con, 'SELECT SUM(quantity) FROM order_items')}"
    )
    print(f"  refund_total={one(con, 'SELECT SUM(refund_amount) FROM refunds')}")
    print(
        f"  event_value={one(con, 'SELECT SUM(value) FROM events')} "
        f"active_users={one(con, 'SELECT COUNT(DISTINCT user_id) FROM events')}"
    )

    print("\n== events (streaming windows)")
    gaps = q(
        con,
        """
        WITH g AS (SELECT event_ts - LAG(event_ts) OVER (ORDER BY event_ts, event_id) AS gap FROM events)
        SELECT SUM((gap = INTERVAL 0 SECOND)::INT), SUM((gap > INTERVAL 0 SECOND AND gap < INTERVAL 1 MINUTE)::INT),
               SUM((gap >= INTERVAL 1 MINUTE AND gap < INTERVAL 1 HOUR)::INT),
               SUM((gap >= INTERVAL 1 HOUR AND gap < INTERVAL 1 DAY)::INT), SUM((gap >= INTERVAL 1 DAY)::INT),
               MAX(gap)
        FROM g
        """,
    )[0]
    print(
        f"  gaps between consecutive events (all users): =0s:{gaps[0]} <1min:{gaps[1]} "
        f"1min-1h:{gaps[2]} 1h-1day:{gaps[3]} >=1day:{gaps[4]} max:{gaps[5]}"
    )
    ugaps = q(
        con,
        """
        WITH g AS (SELECT event_ts - LAG(event_ts) OVER (PARTITION BY user_id ORDER BY event_ts, event_id) AS gap FROM events)
        SELECT SUM((gap < INTERVAL 1 MINUTE)::INT), SUM((gap >= INTERVAL 1 MINUTE AND gap < INTERVAL 1 HOUR)::INT),
               SUM((gap >= INTERVAL 1 HOUR AND gap < INTERVAL 1 DAY)::INT), SUM((gap >= INTERVAL 1 DAY)::INT)
        FROM g
        """,
    )[0]
    print(
        f"  gaps per user: <1min:{ugaps[0]} 1min-1h:{ugaps[1]} 1h-1day:{ugaps[2]} >=1day:{ugaps[3]}"
    )
    quiet = one(
        con,
        "SELECT COUNT(*) FROM events WHERE event_ts >= TIMESTAMP '2025-08-04' AND event_ts < TIMESTAMP '2025-08-11'",
    )
    outside = one(con, "SELECT COUNT(*) FROM events WHERE year(event_ts) <> 2025")
    frac = one(
        con, "SELECT COUNT(*) FROM events WHERE value * 4 <> round(value * 4) OR value IS NULL"
    )
    subsec = one(con, "SELECT COUNT(*) FROM events WHERE epoch_us(event_ts) % 1000000 <> 0")
    dup_ts = one(
        con, "SELECT COUNT(*) FROM (SELECT event_ts FROM events GROUP BY 1 HAVING COUNT(*) > 1)"
    )
    print(
        f"  events in quiet week 2025-08-04..2025-08-10: {quiet}; outside 2025: {outside}; "
        f"timestamps shared by >1 event: {dup_ts}; sub-second timestamps: {subsec}"
    )
    expect(quiet == 0, "no events in the quiet week 2025-08-04 .. 2025-08-10")
    expect(outside == 0, "all events in 2025")
    expect(frac == 0, "event values are non-NULL multiples of 0.25")
    expect(gaps[1] > 0 and (gaps[4] > 0 or ugaps[3] > 0), "bursts (<1 min) and gaps of days exist")
    ids_ok = one(con, "SELECT COUNT(*) = COUNT(DISTINCT event_id) FROM events")
    expect(bool(ids_ok), "event_id unique")

    if args.model:
        check_model(con, Path(args.model))

    print()
    if failures:
        print(f"FAILED: {len(failures)} check(s): {failures}")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
