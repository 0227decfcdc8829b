"""A small deterministic TPC-DS database for the upstream Ossie example model.

Table and column names are TPC-DS's; the values are plausible and tiny (a few dozen sales) so
every expected answer is one hand-written SQL query away. The model's sources are
`tpcds.public.<table>`, so the DuckDB file is named `tpcds.duckdb` (its catalog is `tpcds`)
and the tables live in schema `public`.

Quirks kept on purpose, as in real TPC-DS data: one sale has no customer
(`ss_customer_sk` NULL), one has no store, one has no sold date; customer 8 never buys; store
4 sells nothing; item 6 is never sold.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

MODEL = Path(__file__).resolve().parent.parent / "fixtures" / "tpcds_semantic_model.yaml"

FIRST_DAY = dt.date(2023, 1, 1)
DAYS = 731  # 2023-01-01 .. 2024-12-31
JULIAN_2023_01_01 = 2459946  # TPC-DS keys dates by Julian day number

MONTHS = [dt.date(2000, m, 1).strftime("%B") for m in range(1, 13)]

CUSTOMERS = [
    # c_customer_sk, c_customer_id, c_first_name, c_last_name, c_email_address
    (1, "AAAAAAAABAAAAAAA", "Javier", "Lewis", "Javier.Lewis@VFAxlnZEvOx.org"),
    (2, "AAAAAAAACAAAAAAA", "Amy", "Moses", "Amy.Moses@Ovk9KjHH.com"),
    (3, "AAAAAAAADAAAAAAA", "Latisha", "Hamilton", "Latisha.Hamilton@V.com"),
    (4, "AAAAAAAAEAAAAAAA", "Michael", "White", "Michael.White@i.org"),
    (5, "AAAAAAAAFAAAAAAA", "Robert", "Moran", None),
    (6, "AAAAAAAAGAAAAAAA", "Brunilda", "Sharp", "Brunilda.Sharp@T3pylZEUQjm.org"),
    (7, "AAAAAAAAHAAAAAAA", "Fonda", "Wiles", "Fonda.Wiles@S0g8t4.com"),
    (8, "AAAAAAAAIAAAAAAA", "Ollie", "Shipman", "Ollie.Shipman@be.org"),
]

ITEMS = [
    # i_item_sk, i_item_id, i_item_desc, i_brand, i_category, i_current_price
    (
        1,
        "AAAAAAAABAAAAAAA",
        "Powers will not get influences",
        "edu packscholar #1",
        "Music",
        "27.02",
    ),
    (2, "AAAAAAAACAAAAAAA", "False opportunities run", "exportiunivamalg #9", "Books", "1.12"),
    (3, "AAAAAAAADAAAAAAA", "Fresh, sure forms might", "amalgamalg #1", "Shoes", "7.11"),
    (4, "AAAAAAAAEAAAAAAA", "Political, clear units", "importoimporto #2", "Books", "1.35"),
    (5, "AAAAAAAAFAAAAAAA", "Human reasons hear", "edu packscholar #1", "Music", "4.00"),
    (6, "AAAAAAAAGAAAAAAA", "Never sold anywhere", "scholaramalgamalg #14", "Home", "9.95"),
]

STORES = [
    # s_store_sk, s_store_id, s_store_name, s_city, s_state, s_number_employees
    (1, "AAAAAAAABAAAAAAA", "ought", "Midway", "TN", 245),
    (2, "AAAAAAAACAAAAAAA", "able", "Fairview", "TN", 236),
    (3, "AAAAAAAAEAAAAAAA", "ese", "Midway", "GA", 218),
    (4, "AAAAAAAAHAAAAAAA", "eing", "Oak Grove", "AL", 0),
]

N_SALES = 60


def date_rows() -> list[tuple[Any, ...]]:
    rows = []
    for i in range(DAYS):
        d = FIRST_DAY + dt.timedelta(days=i)
        q = (d.month - 1) // 3 + 1
        rows.append((JULIAN_2023_01_01 + i, d, d.year, f"{d.year}Q{q}", MONTHS[d.month - 1]))
    return rows


def sale_rows() -> list[tuple[Any, ...]]:
    """Deterministic line items; ticket i carries one or two lines."""
    rows = []
    for i in range(N_SALES):
        ticket = i // 2 + 1
        item = (i * 7) % 5 + 1  # items 1..5
        day = (i * 97 + 13) % DAYS
        date_sk: int | None = JULIAN_2023_01_01 + day
        customer: int | None = (ticket * 3) % 7 + 1  # customers 1..7
        store: int | None = ticket % 3 + 1  # stores 1..3
        if i == 17:
            customer = None
        if i == 29:
            store = None
        if i == 41:
            date_sk = None
        qty = (i * 11) % 9 + 1
        price = Decimal(ITEMS[item - 1][5]) * Decimal("1.10")
        price = price.quantize(Decimal("0.01"))
        ext = price * qty
        profit = (ext * Decimal("0.25") - Decimal((i % 4) * 3)).quantize(Decimal("0.01"))
        rows.append((date_sk, item, customer, store, ticket, qty, price, ext, profit))
    return rows


def tables() -> dict[str, tuple[str, list[tuple[Any, ...]]]]:
    """table -> (column DDL, rows)."""
    return {
        "date_dim": (
            "d_date_sk INTEGER, d_date DATE, d_year INTEGER, d_quarter_name VARCHAR, "
            "d_month_name VARCHAR",
            date_rows(),
        ),
        "customer": (
            "c_customer_sk INTEGER, c_customer_id VARCHAR, c_first_name VARCHAR, "
            "c_last_name VARCHAR, c_email_address VARCHAR",
            CUSTOMERS,
        ),
        "item": (
            "i_item_sk INTEGER, i_item_id VARCHAR, i_item_desc VARCHAR, i_brand VARCHAR, "
            "i_category VARCHAR, i_current_price DECIMAL(7,2)",
            [(*r[:5], Decimal(r[5])) for r in ITEMS],
        ),
        "store": (
            "s_store_sk INTEGER, s_store_id VARCHAR, s_store_name VARCHAR, s_city VARCHAR, "
            "s_state VARCHAR, s_number_employees INTEGER",
            STORES,
        ),
        "store_sales": (
            "ss_sold_date_sk INTEGER, ss_item_sk INTEGER, ss_customer_sk INTEGER, "
            "ss_store_sk INTEGER, ss_ticket_number INTEGER, ss_quantity INTEGER, "
            "ss_sales_price DECIMAL(7,2), ss_ext_sales_price DECIMAL(7,2), "
            "ss_net_profit DECIMAL(7,2)",
            sale_rows(),
        ),
    }


def build(directory: Path) -> Path:
    """Create `<directory>/tpcds.duckdb` with schema `public` and the five tables."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tpcds.duckdb"
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE SCHEMA IF NOT EXISTS public")
        for name, (ddl, rows) in tables().items():
            con.execute(f"CREATE TABLE public.{name} ({ddl})")
            marks = ", ".join("?" for _ in rows[0])
            con.executemany(f"INSERT INTO public.{name} VALUES ({marks})", rows)
    finally:
        con.close()
    return path
