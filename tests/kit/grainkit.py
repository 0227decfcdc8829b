"""A small orders model with a calendar table, for the grained-filter and period-start tests
(issue 22 item 6 grains in filters, issue 20/22 offsets to a period start): orders on a few days
with gaps, a NULL date and a day missing from the calendar, customers joined many-to-one, and
a calendar table whose `sprint` grain maps each day to an irregular bucket start."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
from enginekit import dataset, field, metric, model_doc, rel, to_yaml

D = dt.date
#: (id, customer, order day or None, amount or None)
ORDERS: list[tuple[int, int, dt.date | None, int | None]] = [
    (1, 1, D(2024, 1, 1), 10),
    (2, 2, D(2024, 1, 1), 5),
    (3, 1, D(2024, 1, 3), 7),
    (4, 2, D(2024, 1, 15), None),
    (5, 3, D(2024, 1, 31), 4),
    (6, 1, D(2024, 2, 2), 8),  # February has no order on its first day
    (7, 3, D(2024, 2, 29), 6),
    (8, 2, D(2024, 3, 1), 3),
    (9, 3, D(2024, 3, 4), 9),
    (10, 1, None, 100),  # no date: no bucket, no period
    (11, 2, D(2024, 4, 1), 2),  # a day the calendar table does not list
]
#: (id, signup day)
CUSTOMERS = [(1, D(2023, 12, 28)), (2, D(2024, 1, 20)), (3, D(2024, 2, 10))]
CAL_FIRST, CAL_LAST = D(2023, 12, 1), D(2024, 3, 31)


def sprint(day: dt.date) -> dt.date:
    """The calendar table's `sprint` column: irregular buckets (11, then 19 days, ...), each
    labelled by a date that is not always inside it, as a real calendar's may be."""
    n = (day - CAL_FIRST).days
    block, rest = divmod(n, 30)
    start = CAL_FIRST + dt.timedelta(days=30 * block)
    return start + dt.timedelta(days=3) if rest < 11 else start + dt.timedelta(days=11)


def calendar_days() -> list[dt.date]:
    return [CAL_FIRST + dt.timedelta(days=i) for i in range((CAL_LAST - CAL_FIRST).days + 1)]


TABLES = ("orders", "customers", "cal")


def build(path: Path, parquet: Path | None = None) -> Path:
    """The tables in a DuckDB file (and, with `parquet`, one Parquet file each for the
    engines conformkit loads from Parquet)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (id INTEGER, customer_id INTEGER, d DATE, amount INTEGER)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
    con.execute("CREATE TABLE customers (id INTEGER, signup DATE)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", CUSTOMERS)
    con.execute("CREATE TABLE cal (ds DATE, sprint DATE)")
    con.executemany("INSERT INTO cal VALUES (?, ?)", [(d, sprint(d)) for d in calendar_days()])
    if parquet is not None:
        for t in TABLES:
            con.execute(f"COPY {t} TO '{parquet / (t + '.parquet')}' (FORMAT PARQUET)")
    con.close()
    return path


def model(metrics: list[dict[str, Any]] | None = None) -> str:
    return to_yaml(
        model_doc(
            [
                dataset(
                    "orders",
                    [
                        "id",
                        "customer_id",
                        field("d", datatype="Date", is_time=True),
                        field("amount", datatype="Integer"),
                    ],
                    primary_key=["id"],
                    source="main.orders",
                ),
                dataset(
                    "customers",
                    ["id", field("signup", datatype="Date", is_time=True)],
                    primary_key=["id"],
                    source="main.customers",
                ),
                dataset(
                    "cal",
                    [field("ds", datatype="Date", is_time=True), field("sprint", datatype="Date")],
                    primary_key=["ds"],
                    source="main.cal",
                ),
            ],
            [rel("orders_customers", "orders", "customers", ["customer_id"], ["id"])],
            [
                metric("revenue", "SUM(orders.amount)"),
                metric("order_count", "COUNT(orders.id)"),
                *(metrics or []),
            ],
            ext={
                "v": "1.10",
                "calendar": {"table": {"dataset": "cal", "date": "ds", "grains": ["sprint"]}},
            },
        )
    )
