#!/usr/bin/env python3
"""Deterministic generator for the ``shop`` example dataset.

Writes seven tables into a DuckDB database file (schema ``main``) and, when an
output directory is given, one Parquet file per table::

    python examples/shop/generate.py                      # scale 1 -> examples/shop/data/
    python examples/shop/generate.py --scale 2500 --db /tmp/shop10m.duckdb --out-dir /tmp/shop10m

Importable from tests (the examples directory is not a package)::

    spec = importlib.util.spec_from_file_location("shop_generate", ".../examples/shop/generate.py")
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    db_path = mod.build(tmp_path / "shop.duckdb")            # scale 1, no Parquet
    db_path = mod.build(tmp_path / "shop.duckdb", out_dir=tmp_path / "parquet")

Two generation methods, both deterministic across runs and machines:

* ``python`` (default for ``scale <= 10``): row-by-row with ``random.Random(42)``.
  This is the curated test dataset (orphans, NULLs, event bursts, boundary
  timestamps); its content only depends on the Python ``random`` module, whose
  sequence for ``random()``/``randint()``/``sample()`` is stable across versions.
* ``sql`` (default for ``scale > 10``): bulk DuckDB SQL over ``range()`` with a
  pure integer hash (no ``hash()``/``random()``, so it does not depend on the
  DuckDB version), for benchmark sizes (``--scale 2500`` ~= 10 million orders).
  Same table shapes and the same structural properties (gap months, NULLs,
  orphans, never-sold product, region without customers), different values.

Structural properties (both methods):

* orders span 2023-01-01 .. 2025-12-31; the months 2024-02 and 2025-07 have no
  orders at all; 2023-05 and 2024-10 have no refunds.
* orders.amount == SUM(quantity * unit_price) of the order's lines (exactly).
* region 5 has no customers; the last product is never sold.
* a few orders reference customer ids just past the end of ``customers``
  (orphans): ``n_customers + 1 .. n_customers + 3``.
* events are all in 2025 except a quiet week 2025-08-04 .. 2025-08-10 with no
  events; event values are multiples of 0.25 so DOUBLE sums are exact.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import math
import os
import random
import sys
import time
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa

HERE = Path(__file__).resolve().parent
DEFAULT_OUT_DIR = HERE / "data"
DEFAULT_DB = DEFAULT_OUT_DIR / "shop.duckdb"

SEED = 42
PYTHON_MAX_SCALE = 10  # method="auto": python up to this scale, sql above

ORDERS_START = dt.date(2023, 1, 1)
ORDERS_END = dt.date(2025, 12, 31)  # inclusive
ORDER_GAP_MONTHS = ((2024, 2), (2025, 7))  # whole months with no orders
REFUND_GAP_MONTHS = ((2023, 5), (2024, 10))  # whole months with no refunds
SIGNUP_START = dt.date(2022, 1, 1)
SIGNUP_END = dt.date(2025, 9, 30)  # inclusive
EVENTS_START = dt.datetime(2025, 1, 1)
EVENTS_END = dt.datetime(2026, 1, 1)  # exclusive
EVENT_QUIET = (dt.datetime(2025, 8, 4), dt.datetime(2025, 8, 11))  # [start, end): no events

# per unit of scale
ORDERS_PER_SCALE = 4000
CUSTOMERS_PER_SCALE = 400
USERS_PER_SCALE = 60
EVENTS_PER_SCALE_SQL = 3000  # sql method only; the python method simulates sessions
N_ORPHAN_CUSTOMER_IDS = 3

TABLES = ("regions", "customers", "products", "orders", "order_items", "refunds", "events")

DDL = {
    "regions": """CREATE TABLE main.regions (
        region_id INTEGER, region_name VARCHAR, country VARCHAR)""",
    "customers": """CREATE TABLE main.customers (
        customer_id INTEGER, customer_name VARCHAR, region_id INTEGER,
        segment VARCHAR, signup_date DATE)""",
    "products": """CREATE TABLE main.products (
        product_id INTEGER, product_name VARCHAR, category VARCHAR,
        unit_cost DECIMAL(10,2))""",
    "orders": """CREATE TABLE main.orders (
        order_id INTEGER, customer_id INTEGER, order_date DATE, status VARCHAR,
        channel VARCHAR, amount DECIMAL(12,2), discount DECIMAL(12,2))""",
    "order_items": """CREATE TABLE main.order_items (
        order_id INTEGER, line_no INTEGER, product_id INTEGER, quantity INTEGER,
        unit_price DECIMAL(10,2))""",
    "refunds": """CREATE TABLE main.refunds (
        refund_id INTEGER, order_id INTEGER, refund_date DATE,
        refund_amount DECIMAL(12,2))""",
    "events": """CREATE TABLE main.events (
        event_id BIGINT, user_id INTEGER, event_ts TIMESTAMP, event_type VARCHAR,
        value DOUBLE)""",
}

REGIONS = [
    (1, "North America", "US"),
    (2, "Europe", "DE"),
    (3, "Asia Pacific", "JP"),
    (4, "Latin America", "BR"),
    (5, "Middle East", "AE"),  # no customers live here
]
REGION_WEIGHTS = [(1, 0.40), (2, 0.30), (3, 0.20), (4, 0.10)]
SEGMENT_WEIGHTS = [("consumer", 0.60), ("corporate", 0.25), ("small_business", 0.15)]
STATUS_WEIGHTS = [("completed", 0.80), ("cancelled", 0.08), ("returned", 0.12)]
CHANNEL_WEIGHTS = [("web", 0.50), ("mobile", 0.30), ("store", 0.12), (None, 0.08)]
LINES_WEIGHTS = [(1, 0.40), (2, 0.30), (3, 0.20), (4, 0.10)]
QTY_WEIGHTS = [(1, 0.50), (2, 0.25), (3, 0.12), (4, 0.08), (5, 0.05)]
CATEGORIES = ["electronics", "home", "books", "toys", "grocery"]
PRODUCT_NOUNS = {
    "electronics": [
        "Headphones",
        "Charger",
        "Speaker",
        "Keyboard",
        "Webcam",
        "Monitor",
        "Router",
        "Drone",
    ],
    "home": ["Lamp", "Kettle", "Blanket", "Vase", "Pillow", "Clock", "Mirror", "Rug"],
    "books": ["Novel", "Cookbook", "Atlas", "Journal", "Comic", "Biography", "Poetry", "Guide"],
    "toys": ["Puzzle", "Robot", "Kite", "Blocks", "Doll", "Yo-yo", "Train", "Ball"],
    "grocery": ["Coffee", "Tea", "Honey", "Olive Oil", "Pasta", "Chocolate", "Spices", "Granola"],
}
PRODUCT_ADJECTIVES = ["Classic", "Deluxe", "Eco", "Mini", "Pro", "Smart", "Vintage", "Ultra"]
FIRST_NAMES = [
    "Ada",
    "Ben",
    "Chloe",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kara",
    "Liam",
    "Mei",
    "Nora",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
]
LAST_NAMES = [
    "Abbott",
    "Brandt",
    "Costa",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Hughes",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Meyer",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quispe",
    "Rossi",
    "Silva",
    "Tanaka",
]
EVENT_TYPES = ("page_view", "click", "add_to_cart", "purchase")
# relative order volume by calendar month (holiday peak in Nov/Dec)
SEASON = {
    1: 0.85,
    2: 0.80,
    3: 0.95,
    4: 1.00,
    5: 1.00,
    6: 0.95,
    7: 0.90,
    8: 0.90,
    9: 1.00,
    10: 1.05,
    11: 1.30,
    12: 1.45,
}
TREND = {2023: 0.90, 2024: 1.00, 2025: 1.12}


# --------------------------------------------------------------------------- helpers


def _pick(rng: random.Random, weights):
    """Weighted choice using exactly one rng.random() draw."""
    u = rng.random()
    acc = 0.0
    for value, w in weights:
        acc += w
        if u < acc:
            return value
    return weights[-1][0]


def _poisson(rng: random.Random, lam: float) -> int:
    """Knuth's Poisson sampler (deterministic given the rng)."""
    limit = math.exp(-lam)
    k, p = 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _in_months(d: dt.date, months) -> bool:
    return (d.year, d.month) in months


def _order_days() -> list[dt.date]:
    days = []
    d = ORDERS_START
    while d <= ORDERS_END:
        if not _in_months(d, ORDER_GAP_MONTHS):
            days.append(d)
        d += dt.timedelta(days=1)
    return days


def _day_weight(rng: random.Random, d: dt.date) -> float:
    weekday = 1.15 if d.weekday() >= 5 else 1.0
    return SEASON[d.month] * TREND[d.year] * weekday * (0.5 + rng.random())


def _signup_span_days() -> int:
    return (SIGNUP_END - SIGNUP_START).days + 1


def _cents(c: int) -> Decimal:
    return Decimal(c).scaleb(-2)


def _customer_name(cid: int) -> str:
    n = len(FIRST_NAMES) * len(LAST_NAMES)
    k = (cid - 1) % n
    name = f"{FIRST_NAMES[k % len(FIRST_NAMES)]} {LAST_NAMES[k // len(FIRST_NAMES)]}"
    return name if cid <= n else f"{name} {cid}"


def _product_name(pid: int, category: str) -> str:
    k = (pid - 1) // len(CATEGORIES)
    nouns = PRODUCT_NOUNS[category]
    name = (
        f"{PRODUCT_ADJECTIVES[(k // len(nouns)) % len(PRODUCT_ADJECTIVES)]} {nouns[k % len(nouns)]}"
    )
    cycle = len(nouns) * len(PRODUCT_ADJECTIVES)
    return name if k < cycle else f"{name} {pid}"


def _n_products(scale: float, method: str) -> int:
    if method == "python":
        return 40
    return 40 * max(1, math.ceil(math.sqrt(scale)))


# --------------------------------------------------------------------------- python method


def _generate_python(scale: float) -> dict[str, pa.Table]:
    rng = random.Random(SEED)

    # regions ---------------------------------------------------------------
    regions = pa.table(
        {
            "region_id": pa.array([r[0] for r in REGIONS], pa.int32()),
            "region_name": [r[1] for r in REGIONS],
            "country": [r[2] for r in REGIONS],
        }
    )

    # products (the last product is never sold) ----------------------------
    n_prod = _n_products(scale, "python")
    p_ids, p_names, p_cats, p_cost = [], [], [], []
    for pid in range(1, n_prod + 1):
        cat = CATEGORIES[(pid - 1) % len(CATEGORIES)]
        p_ids.append(pid)
        p_names.append(_product_name(pid, cat))
        p_cats.append(cat)
        p_cost.append(rng.randint(150, 25000))  # cents
    products = pa.table(
        {
            "product_id": pa.array(p_ids, pa.int32()),
            "product_name": p_names,
            "category": p_cats,
            "unit_cost": pa.array([_cents(c) for c in p_cost], pa.decimal128(10, 2)),
        }
    )

    # customers: ids ascend with signup_date --------------------------------
    n_cust = max(10, round(CUSTOMERS_PER_SCALE * scale))
    span = _signup_span_days()
    offsets = sorted(rng.randrange(span) for _ in range(n_cust))
    signup = [SIGNUP_START + dt.timedelta(days=o) for o in offsets]
    c_region, c_segment = [], []
    for _ in range(n_cust):
        c_region.append(None if rng.random() < 0.05 else _pick(rng, REGION_WEIGHTS))
        c_segment.append(None if rng.random() < 0.08 else _pick(rng, SEGMENT_WEIGHTS))
    customers = pa.table(
        {
            "customer_id": pa.array(range(1, n_cust + 1), pa.int32()),
            "customer_name": [_customer_name(i) for i in range(1, n_cust + 1)],
            "region_id": pa.array(c_region, pa.int32()),
            "segment": pa.array(c_segment, pa.string()),
            "signup_date": pa.array(signup, pa.date32()),
        }
    )

    # orders + order_items --------------------------------------------------
    days = _order_days()
    weights = [_day_weight(rng, d) for d in days]
    target = ORDERS_PER_SCALE * scale
    lam_scale = target / sum(weights)
    o_id, o_cust, o_date, o_status, o_channel, o_amount, o_disc = [], [], [], [], [], [], []
    i_order, i_line, i_prod, i_qty, i_price = [], [], [], [], []
    oid = 0
    for d, w in zip(days, weights, strict=True):
        eligible = bisect.bisect_right(signup, d)  # customers signed up on or before d
        for _ in range(_poisson(rng, w * lam_scale)):
            oid += 1
            cust = rng.randint(1, max(1, eligible))
            status = _pick(rng, STATUS_WEIGHTS)
            channel = _pick(rng, CHANNEL_WEIGHTS)
            n_lines = _pick(rng, LINES_WEIGHTS)
            prods = rng.sample(range(1, n_prod), n_lines)  # never product n_prod
            total = 0
            for line_no, pid in enumerate(prods, start=1):
                qty = _pick(rng, QTY_WEIGHTS)
                price = round(p_cost[pid - 1] * (125 + rng.randrange(76)) / 100)
                total += qty * price
                i_order.append(oid)
                i_line.append(line_no)
                i_prod.append(pid)
                i_qty.append(qty)
                i_price.append(_cents(price))
            disc = round(total * rng.choice((5, 10, 15)) / 100) if rng.random() < 0.25 else 0
            o_id.append(oid)
            o_cust.append(cust)
            o_date.append(d)
            o_status.append(status)
            o_channel.append(channel)
            o_amount.append(total)
            o_disc.append(disc)

    # orphans: a handful of orders point at customer ids that do not exist
    n_orphans = max(8, round(8 * scale))
    for k, idx in enumerate(sorted(rng.sample(range(len(o_id)), n_orphans))):
        o_cust[idx] = n_cust + 1 + (k % N_ORPHAN_CUSTOMER_IDS)

    orders = pa.table(
        {
            "order_id": pa.array(o_id, pa.int32()),
            "customer_id": pa.array(o_cust, pa.int32()),
            "order_date": pa.array(o_date, pa.date32()),
            "status": o_status,
            "channel": pa.array(o_channel, pa.string()),
            "amount": pa.array([_cents(c) for c in o_amount], pa.decimal128(12, 2)),
            "discount": pa.array([_cents(c) for c in o_disc], pa.decimal128(12, 2)),
        }
    )
    order_items = pa.table(
        {
            "order_id": pa.array(i_order, pa.int32()),
            "line_no": pa.array(i_line, pa.int32()),
            "product_id": pa.array(i_prod, pa.int32()),
            "quantity": pa.array(i_qty, pa.int32()),
            "unit_price": pa.array(i_price, pa.decimal128(10, 2)),
        }
    )

    # refunds: for ~75% of returned orders, some split in two partial refunds
    refunds_raw = []  # (refund_date, order_id, cents)
    for oid_, d, status, amount in zip(o_id, o_date, o_status, o_amount, strict=True):
        if status != "returned" or rng.random() >= 0.75:
            continue
        rdate = d + dt.timedelta(days=rng.randint(2, 45))
        if rdate > ORDERS_END or _in_months(rdate, REFUND_GAP_MONTHS):
            continue
        full = rng.random() < 0.6
        parts = [amount] if full else [round(amount * (20 + rng.randrange(71)) / 100)]
        if rng.random() < 0.1:  # a second, later partial refund
            later = rdate + dt.timedelta(days=rng.randint(1, 20))
            rest = amount - parts[0]
            if rest > 0 and later <= ORDERS_END and not _in_months(later, REFUND_GAP_MONTHS):
                refunds_raw.append((later, oid_, max(1, rest // 2)))
        refunds_raw.append((rdate, oid_, parts[0]))
    refunds_raw.sort()
    refunds = pa.table(
        {
            "refund_id": pa.array(range(1, len(refunds_raw) + 1), pa.int32()),
            "order_id": pa.array([r[1] for r in refunds_raw], pa.int32()),
            "refund_date": pa.array([r[0] for r in refunds_raw], pa.date32()),
            "refund_amount": pa.array([_cents(r[2]) for r in refunds_raw], pa.decimal128(12, 2)),
        }
    )

    events = _python_events(rng, scale)
    return {
        "regions": regions,
        "customers": customers,
        "products": products,
        "orders": orders,
        "order_items": order_items,
        "refunds": refunds,
        "events": events,
    }


def _event_value(rng: random.Random, etype: str) -> float:
    if etype == "page_view":
        return 0.0
    if etype == "click":
        return 0.25 * rng.randint(0, 4)
    if etype == "add_to_cart":
        return 0.25 * rng.randint(20, 800)
    return 0.25 * rng.randint(40, 2000)


def _session_types(rng: random.Random, n: int) -> list[str]:
    out = []
    for k in range(n):
        u = rng.random()
        if k == n - 1 and n >= 4 and u < 0.35:
            out.append("purchase")
        elif u < 0.55:
            out.append("page_view")
        elif u < 0.85:
            out.append("click")
        else:
            out.append("add_to_cart")
    return out


def _python_events(rng: random.Random, scale: float) -> pa.Table:
    n_users = max(5, round(USERS_PER_SCALE * scale))
    year_secs = int((EVENTS_END - EVENTS_START).total_seconds())
    raw = []  # (ts, user_id, seq, type, value)
    seq = 0

    def add(ts, user, etype):
        nonlocal seq
        seq += 1
        raw.append((ts, user, seq, etype, _event_value(rng, etype)))

    for user in range(1, n_users + 1):
        for _ in range(rng.randint(2, 12)):  # sessions
            while True:
                start = EVENTS_START + dt.timedelta(seconds=rng.randrange(year_secs))
                if not (EVENT_QUIET[0] - dt.timedelta(hours=6) <= start < EVENT_QUIET[1]):
                    break
            n = rng.randint(1, 15)
            ts = start
            for k, etype in enumerate(_session_types(rng, n)):
                if k:
                    u = rng.random()
                    if u < 0.85:
                        gap = rng.randint(1, 30)  # burst: seconds apart
                    elif u < 0.97:
                        gap = rng.randint(60, 600)  # minutes
                    else:
                        gap = rng.randint(3600, 4 * 3600)  # hours
                    ts = ts + dt.timedelta(seconds=gap)
                if ts >= EVENTS_END or EVENT_QUIET[0] <= ts < EVENT_QUIET[1]:
                    break
                add(ts, user, etype)

    # curated edge cases --------------------------------------------------
    # year boundaries
    add(dt.datetime(2025, 1, 1, 0, 0, 0), 1, "page_view")
    add(dt.datetime(2025, 12, 31, 23, 59, 59), 2, "purchase")
    # window boundaries: one second before / on / after the hour
    for s, etype in ((-1, "page_view"), (0, "click"), (0, "page_view"), (1, "add_to_cart")):
        add(dt.datetime(2025, 3, 10, 10, 0, 0) + dt.timedelta(seconds=s), 3, etype)
    # flash-sale burst: 40 events from 8 users within 91 seconds; each group of three
    # consecutive events shares one timestamp (ties for ordering / session tests)
    flash = dt.datetime(2025, 11, 28, 12, 0, 0)
    for k in range(40):
        user = 1 + (k % 8)
        add(flash + dt.timedelta(seconds=(k // 3) * 7), user, "purchase" if k % 5 == 4 else "click")
    # a lone user visiting exactly once a day for a week (gaps of exactly one day)
    for day in range(7):
        add(dt.datetime(2025, 6, 2, 8, 30, 0) + dt.timedelta(days=day), n_users, "page_view")

    raw.sort(key=lambda r: (r[0], r[1], r[2]))
    return pa.table(
        {
            "event_id": pa.array(range(1, len(raw) + 1), pa.int64()),
            "user_id": pa.array([r[1] for r in raw], pa.int32()),
            "event_ts": pa.array([r[0] for r in raw], pa.timestamp("us")),
            "event_type": [r[3] for r in raw],
            "value": pa.array([r[4] for r in raw], pa.float64()),
        }
    )


def _load_python(con: duckdb.DuckDBPyConnection, scale: float) -> None:
    tables = _generate_python(scale)
    for name in TABLES:
        con.register("_src", tables[name])
        con.execute(f"INSERT INTO main.{name} SELECT * FROM _src")
        con.unregister("_src")


# --------------------------------------------------------------------------- sql method

_SQL_MACROS = [
    # 32-bit integer mixer on BIGINT (inputs < 2^32, products < 2^59): no overflow,
    # no dependency on DuckDB's hash() implementation.
    "CREATE OR REPLACE TEMP MACRO _mix(x) AS (xor(x, x >> 16) * 73244475) % 4294967296",
    "CREATE OR REPLACE TEMP MACRO _rnd(i, s) AS "
    "xor(_mix(_mix((CAST(i AS BIGINT) * 2654435761 + (s) * 97531 + 12345) % 4294967296)), 0)",
    # uniform double in [0, 1)
    "CREATE OR REPLACE TEMP MACRO _u(i, s) AS _rnd(i, s) / 4294967296.0",
]


def _weights_case(weights, u_expr: str) -> str:
    """CASE expression picking a weighted value from a uniform double expression."""
    parts, acc = [], 0.0
    for value, w in weights[:-1]:
        acc += w
        lit = "NULL" if value is None else (f"'{value}'" if isinstance(value, str) else str(value))
        parts.append(f"WHEN {u_expr} < {acc!r} THEN {lit}")
    last = weights[-1][0]
    lit = "NULL" if last is None else (f"'{last}'" if isinstance(last, str) else str(last))
    return f"CASE {' '.join(parts)} ELSE {lit} END"


def _load_sql(con: duckdb.DuckDBPyConnection, scale: float) -> None:
    for m in _SQL_MACROS:
        con.execute(m)
    rng = random.Random(SEED)
    n_prod = _n_products(scale, "sql")
    n_cust = max(10, round(CUSTOMERS_PER_SCALE * scale))
    n_orders = max(100, round(ORDERS_PER_SCALE * scale))
    n_users = max(5, round(USERS_PER_SCALE * scale))
    n_events = max(100, round(EVENTS_PER_SCALE_SQL * scale))
    span = _signup_span_days()

    # per-day plan (small, computed in Python): exact order counts per day
    days = _order_days()
    weights = [_day_weight(rng, d) for d in days]
    total_w = sum(weights)
    d_start, d_cnt, d_elig = [], [], []
    acc = 0.0
    prev_end = 0
    for d, w in zip(days, weights, strict=True):
        acc += w
        end = n_orders if d == days[-1] else math.floor(n_orders * acc / total_w)
        d_start.append(prev_end)
        d_cnt.append(end - prev_end)
        prev_end = end
        off = (d - SIGNUP_START).days
        d_elig.append(max(1, min(n_cust, math.ceil((off + 1) * n_cust / span))))
    plan = pa.table(
        {
            "d": pa.array(days, pa.date32()),
            "start": pa.array(d_start, pa.int64()),
            "cnt": pa.array(d_cnt, pa.int64()),
            "eligible": pa.array(d_elig, pa.int64()),
        }
    )
    con.register("_plan", plan)

    con.executemany("INSERT INTO main.regions VALUES (?, ?, ?)", REGIONS)

    cats = "[" + ", ".join(f"'{c}'" for c in CATEGORIES) + "]"
    con.execute(
        f"""
        INSERT INTO main.products
        SELECT i::INTEGER,
               'Product ' || i,
               {cats}[1 + (i - 1) % {len(CATEGORIES)}],
               ((150 + _rnd(i, 1) % 24851) * 0.01)::DECIMAL(10,2)
        FROM range(1, {n_prod} + 1) t(i)
        """
    )
    first = "[" + ", ".join(f"'{n}'" for n in FIRST_NAMES) + "]"
    last = "[" + ", ".join(f"'{n}'" for n in LAST_NAMES) + "]"
    con.execute(
        f"""
        INSERT INTO main.customers
        SELECT i::INTEGER,
               {first}[1 + (i - 1) % {len(FIRST_NAMES)}] || ' ' ||
                 {last}[1 + ((i - 1) // {len(FIRST_NAMES)}) % {len(LAST_NAMES)}] ||
                 CASE WHEN i > {len(FIRST_NAMES) * len(LAST_NAMES)} THEN ' ' || i ELSE '' END,
               CASE WHEN _u(i, 2) < 0.05 THEN NULL
                    ELSE {_weights_case(REGION_WEIGHTS, "_u(i, 3)")} END::INTEGER,
               CASE WHEN _u(i, 4) < 0.08 THEN NULL
                    ELSE {_weights_case(SEGMENT_WEIGHTS, "_u(i, 5)")} END,
               DATE '{SIGNUP_START}' + CAST(((i - 1) * {span}) // {n_cust} AS INTEGER)
        FROM range(1, {n_cust} + 1) t(i)
        """
    )

    # order lines first (amount = sum of lines); order ids are 1..n in date order
    con.execute(
        """
        CREATE TEMP TABLE _ord AS
        SELECT (p.start + k + 1) AS oid, p.d, p.eligible
        FROM _plan p, range(p.cnt) t(k)
        """
    )
    con.execute(
        f"""
        CREATE TEMP TABLE _lines AS
        WITH o AS (
            SELECT oid, {_weights_case(LINES_WEIGHTS, "_u(oid, 20)")} AS n_lines,
                   _rnd(oid, 21) % {n_prod - 1} AS p0
            FROM _ord
        )
        SELECT o.oid, (l + 1) AS line_no,
               1 + (o.p0 + l * 7) % {n_prod - 1} AS product_id,
               {_weights_case(QTY_WEIGHTS, "_u(o.oid * 4 + l, 22)")} AS quantity,
               (o.oid * 4 + l) AS lkey
        FROM o, range(o.n_lines) t(l)
        """
    )
    con.execute(
        """
        INSERT INTO main.order_items
        SELECT l.oid::INTEGER, l.line_no::INTEGER, l.product_id::INTEGER, l.quantity::INTEGER,
               ((round(CAST(p.unit_cost AS DECIMAL(18,2)) * 100)::BIGINT * (125 + _rnd(l.lkey, 23) % 76) + 50) // 100
                 * 0.01)::DECIMAL(10,2)
        FROM _lines l JOIN main.products p ON p.product_id = l.product_id
        ORDER BY l.oid, l.line_no
        """
    )
    con.execute(
        f"""
        INSERT INTO main.orders
        WITH amt AS (
            SELECT order_id, SUM(quantity * unit_price) AS amount
            FROM main.order_items GROUP BY order_id
        )
        SELECT o.oid::INTEGER,
               CASE WHEN _rnd(o.oid, 30) % 500 = 0
                    THEN {n_cust} + 1 + _rnd(o.oid, 31) % {N_ORPHAN_CUSTOMER_IDS}
                    ELSE 1 + _rnd(o.oid, 32) % o.eligible END::INTEGER,
               o.d,
               {_weights_case(STATUS_WEIGHTS, "_u(o.oid, 33)")},
               {_weights_case(CHANNEL_WEIGHTS, "_u(o.oid, 34)")},
               a.amount::DECIMAL(12,2),
               CASE WHEN _u(o.oid, 35) < 0.25
                    THEN round(a.amount * [0.05, 0.10, 0.15][1 + _rnd(o.oid, 36) % 3], 2)
                    ELSE 0 END::DECIMAL(12,2)
        FROM _ord o JOIN amt a ON a.order_id = o.oid
        ORDER BY o.oid
        """
    )
    gap_pred = " OR ".join(f"(year(rd) = {y} AND month(rd) = {m})" for y, m in REFUND_GAP_MONTHS)
    con.execute(
        f"""
        INSERT INTO main.refunds
        WITH r AS (
            SELECT order_id, order_date + CAST(2 + _rnd(order_id, 40) % 44 AS INTEGER) AS rd,
                   CASE WHEN _u(order_id, 41) < 0.6 THEN amount
                        ELSE round(amount * (0.20 + (_rnd(order_id, 42) % 71) / 100.0), 2)
                   END AS ramt
            FROM main.orders
            WHERE status = 'returned' AND _u(order_id, 43) < 0.75
        )
        SELECT row_number() OVER (ORDER BY rd, order_id)::INTEGER, order_id::INTEGER, rd,
               ramt::DECIMAL(12,2)
        FROM r
        WHERE rd <= DATE '{ORDERS_END}' AND NOT ({gap_pred})
        ORDER BY rd, order_id
        """
    )

    # events: sessions of 8 events; spacing per session = burst / minutes / hours
    year_secs = int((EVENTS_END - EVENTS_START).total_seconds())
    quiet_start = int((EVENT_QUIET[0] - EVENTS_START).total_seconds())
    quiet_len = int((EVENT_QUIET[1] - EVENT_QUIET[0]).total_seconds())
    usable = year_secs - quiet_len - 86400  # room for the longest session
    types = "[" + ", ".join(f"'{t}'" for t in EVENT_TYPES) + "]"
    con.execute(
        f"""
        INSERT INTO main.events
        WITH e AS (
            SELECT i, i // 8 AS s, i % 8 AS k FROM range({n_events}) t(i)
        ), s AS (
            SELECT i, k, s,
                   _rnd(s, 50) % {usable} AS st0,
                   CASE WHEN _u(s, 51) < 0.85 THEN 20 WHEN _u(s, 51) < 0.97 THEN 600 ELSE 7200 END
                     AS spacing
            FROM e
        ), t AS (
            SELECT i, s, k,
                   (CASE WHEN st0 >= {quiet_start} - 21600 THEN st0 + {quiet_len} + 21600 ELSE st0 END)
                     + k * spacing + _rnd(i, 52) % spacing AS sec
            FROM s
        ), v AS (
            SELECT i, (1 + _rnd(s, 53) % {n_users}) AS user_id,
                   TIMESTAMP '{EVENTS_START}' + to_seconds(LEAST(sec, {year_secs - 1})) AS ts,
                   CASE WHEN k = 7 AND _u(s, 54) < 0.35 THEN 4
                        ELSE 1 + (_rnd(i, 55) % 100 >= 55)::INT + (_rnd(i, 55) % 100 >= 85)::INT END AS ty
            FROM t
        )
        SELECT row_number() OVER (ORDER BY ts, user_id, i)::BIGINT, user_id::INTEGER, ts,
               {types}[ty],
               CASE ty WHEN 1 THEN 0.0
                       WHEN 2 THEN 0.25 * (_rnd(i, 56) % 5)
                       WHEN 3 THEN 0.25 * (20 + _rnd(i, 56) % 781)
                       ELSE 0.25 * (40 + _rnd(i, 56) % 1961) END::DOUBLE
        FROM v
        WHERE NOT (ts >= TIMESTAMP '{EVENT_QUIET[0]}' AND ts < TIMESTAMP '{EVENT_QUIET[1]}')
        ORDER BY ts, user_id, i
        """
    )
    for t in ("_ord", "_lines"):
        con.execute(f"DROP TABLE {t}")
    con.unregister("_plan")


# --------------------------------------------------------------------------- build


def build(db_path, scale: float = 1, out_dir=None, method: str = "auto") -> Path:
    """Generate the shop dataset into ``db_path`` (tables in schema ``main``).

    ``out_dir``: when given, also write ``<out_dir>/<table>.parquet`` per table.
    ``method``: ``"auto"`` (python for scale <= 10, else sql), ``"python"`` or ``"sql"``.
    An existing database at ``db_path`` is replaced atomically. Returns ``db_path``.
    """
    if scale <= 0:
        raise ValueError("scale must be > 0")
    if method == "auto":
        method = "python" if scale <= PYTHON_MAX_SCALE else "sql"
    if method not in ("python", "sql"):
        raise ValueError(f"unknown method {method!r}")
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_name(f".{db_path.name}.{os.getpid()}.tmp")
    for p in (tmp, Path(str(tmp) + ".wal")):
        p.unlink(missing_ok=True)

    con = duckdb.connect(str(tmp))
    try:
        for name in TABLES:
            con.execute(DDL[name])
        if method == "python":
            _load_python(con, scale)
        else:
            _load_sql(con, scale)
        if out_dir is not None:
            out = Path(out_dir)
            out.mkdir(parents=True, exist_ok=True)
            for name in TABLES:
                target = out / f"{name}.parquet"
                con.execute(
                    f"COPY main.{name} TO '{target.as_posix()}' (FORMAT parquet, COMPRESSION zstd)"
                )
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, db_path)
    Path(str(db_path) + ".wal").unlink(missing_ok=True)
    return db_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default=str(DEFAULT_OUT_DIR), help="Parquet output directory")
    ap.add_argument("--no-parquet", action="store_true", help="only build the DuckDB file")
    ap.add_argument("--db", default=None, help="DuckDB file (default: <out-dir>/shop.duckdb)")
    ap.add_argument("--scale", type=float, default=1, help="1 ~= 4000 orders; 2500 ~= 10M orders")
    ap.add_argument("--method", choices=("auto", "python", "sql"), default="auto")
    args = ap.parse_args(argv)
    db = Path(args.db) if args.db else Path(args.out_dir) / "shop.duckdb"
    t0 = time.perf_counter()
    build(
        db, scale=args.scale, out_dir=None if args.no_parquet else args.out_dir, method=args.method
    )
    elapsed = time.perf_counter() - t0
    con = duckdb.connect(str(db), read_only=True)
    try:
        for name in TABLES:
            n = con.execute(f"SELECT COUNT(*) FROM main.{name}").fetchone()[0]
            print(f"{name:12s} {n:>12,d}")
    finally:
        con.close()
    print(f"built {db} (scale={args.scale:g}) in {elapsed:.2f}s")
    if not args.no_parquet:
        print(f"parquet files in {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
