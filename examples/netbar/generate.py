#!/usr/bin/env python3
"""Deterministic generator for the ``netbar`` conformed-facts example (D-CONFORM).

Writes four tables into a DuckDB database file (schema ``main``)::

    python examples/netbar/generate.py                  # -> examples/netbar/data/netbar.duckdb
    python examples/netbar/generate.py --db /tmp/netbar.duckdb

Importable from tests (the examples directory is not a package)::

    spec = importlib.util.spec_from_file_location("netbar_generate", ".../generate.py")
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    db_path = mod.build(tmp_path / "netbar.duckdb")

Three fact tables share a date and a platform, and none is the many side of another:

* ``netbar_login``    one row per login session, dated ``stat_date`` (2024-01-01 .. 2024-03-13)
* ``netbar_payment``  one row per payment, dated ``pay_date``; 2024-04-02 has payments but no
  logins, and platform 4 (web) has payments but no logins
* ``netbar_register`` one row per registration, dated ``reg_date`` (every other login day)
* ``platforms``       the platform names; only payments reference it (many-to-one)

Values come from ``random.Random(7)`` row by row, so the content is the same on every machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
DEFAULT_DB = HERE / "data" / "netbar.duckdb"

PLATFORMS = [(1, "pc"), (2, "mobile"), (3, "console"), (4, "web")]


def rows() -> dict[str, list[tuple]]:
    """The four tables' rows."""
    rnd = random.Random(7)
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(0, 75, 3)]
    login: list[tuple] = []
    for d in days:
        for _ in range(rnd.randint(2, 6)):
            login.append(
                (
                    len(login) + 1,
                    d,
                    rnd.choice([1, 2, 3]),
                    rnd.randint(1, 12),
                    rnd.choice(["north", "south"]),
                    rnd.randint(5, 120),
                )
            )
    payment: list[tuple] = []
    for d in [*days[2:], dt.date(2024, 4, 2)]:
        if rnd.random() < 0.25:
            continue
        for _ in range(rnd.randint(1, 4)):
            payment.append(
                (
                    len(payment) + 1,
                    d,
                    rnd.choice([1, 2, 4]),
                    rnd.randint(1, 12),
                    rnd.randint(1, 50) * 10,
                    rnd.choice(["card", "cash"]),
                )
            )
    register: list[tuple] = []
    for d in days[::2]:
        for _ in range(rnd.randint(0, 3)):
            register.append(
                (
                    len(register) + 1,
                    d,
                    rnd.choice([1, 2, 3]),
                    rnd.randint(1, 30),
                    rnd.choice(["ad", "friend"]),
                )
            )
    return {
        "netbar_login": login,
        "netbar_payment": payment,
        "netbar_register": register,
        "platforms": list(PLATFORMS),
    }


_DDL = {
    "netbar_login": "login_id INTEGER, stat_date DATE, platform_id INTEGER, player_id INTEGER, "
    "region VARCHAR, minutes INTEGER",
    "netbar_payment": "pay_id INTEGER, pay_date DATE, platform_id INTEGER, player_id INTEGER, "
    "amount INTEGER, channel VARCHAR",
    "netbar_register": "reg_id INTEGER, reg_date DATE, platform_id INTEGER, player_id INTEGER, "
    "source VARCHAR",
    "platforms": "platform_id INTEGER, platform_name VARCHAR",
}


def build(db_path: Path | str = DEFAULT_DB) -> Path:
    """Write the tables into `db_path` (replacing them) and return the path."""
    path = Path(db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    try:
        for table, data in rows().items():
            con.execute(f"CREATE OR REPLACE TABLE main.{table} ({_DDL[table]})")
            marks = ", ".join("?" for _ in data[0])
            con.executemany(f"INSERT INTO main.{table} VALUES ({marks})", data)
    finally:
        con.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, help="DuckDB file to write")
    args = parser.parse_args()
    print(build(args.db))


if __name__ == "__main__":
    main()
