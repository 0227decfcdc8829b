"""The access-policy tests' data (issue 30): orders in three regions and four tenants, the
model and access file beside this file, and each test user's rows written by hand from the
access file's policies (the oracle every filtered answer is compared with)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
MODEL = HERE / "model.yaml"
ACCESS = HERE / "access.yaml"
REGIONS = ("EMEA", "APAC", "AMER")
CHANNELS = ("web", "store", "mobile")


def _orders() -> list[tuple]:
    rng = random.Random(30)
    out = []
    start = dt.date(2024, 1, 1)
    for i in range(1, 401):
        day = start + dt.timedelta(days=rng.randrange(0, 540))
        out.append(
            (
                i,
                rng.randrange(1, 41),
                day,
                rng.choice(REGIONS),
                rng.randrange(1, 5),
                rng.choice(CHANNELS),
                round(rng.uniform(5, 500), 2),
                round(rng.uniform(1, 100), 2),
            )
        )
    return out


ORDERS = _orders()
CUSTOMERS = [(c, ("smb", "ent")[c % 2], f"c{c}@example.com") for c in range(1, 41)]


def write_db(path: Path, keep: Callable[[tuple], bool] = lambda r: True) -> Path:
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, order_date DATE, "
        "region VARCHAR, tenant_id INTEGER, channel VARCHAR, amount DECIMAL(12,2), "
        "cost DECIMAL(12,2))"
    )
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [r for r in ORDERS if keep(r)]
    )
    con.execute("CREATE TABLE customers (customer_id INTEGER, segment VARCHAR, email VARCHAR)")
    con.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
    con.close()
    return path


#: each test user's rows of `orders`, written by hand from the access file's policies
USER_ROWS: dict[str, Callable[[tuple], bool]] = {
    "ana": lambda r: r[3] == "EMEA",
    "tom": lambda r: r[4] in (1, 3),
    "eve": lambda r: r[3] == "EMEA" or (r[3] == "APAC" and r[5] != "store"),
    "boss": lambda r: True,
    "sam": lambda r: r[1] % 2 == 0,  # orders whose customer is in segment smb
}
