"""D-SEMI test data and model: account balances built to break naive semi-additive versions.

- account 3 skips the last snapshot date of February and March (a naive "last date of the
  month" drops it; a naive sum adds every snapshot);
- account 2 holds two rows on 2024-01-31 (a tie on the snapshot date: both are its balance);
- account 4 opens in April; account 2's April balance is NULL on its last snapshot;
- `sa_stock` snapshots several times a day (TIMESTAMP), so the day grain still picks one.

Tables `sa_accounts`, `sa_balances`, `sa_stock` live in schema main (beside the shop in the
conformance suite). Expected values in the tests come from hand-written SQL or plain Python
over `BALANCES`, never from dosi."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

SEMI_TABLES = ("sa_accounts", "sa_balances", "sa_stock")

ACCOUNTS = [(1, "east", "checking"), (2, "east", "savings"), (3, "west", "savings"),
            (4, "west", "checking")]  # fmt: skip

#: (snapshot_date, account_id, balance)
BALANCES: list[tuple[str, int, float | None]] = [
    ("2024-01-15", 1, 100), ("2024-01-31", 1, 110),
    ("2024-01-15", 2, 200), ("2024-01-31", 2, 150), ("2024-01-31", 2, 50),
    ("2024-01-31", 3, 300),
    ("2024-02-15", 1, 120), ("2024-02-29", 1, 130),
    ("2024-02-29", 2, 210),
    ("2024-02-15", 3, 310),
    ("2024-03-15", 1, 140), ("2024-03-31", 1, 150),
    ("2024-03-15", 3, 320),
    ("2024-03-31", 2, 220),
    ("2024-04-10", 4, 400), ("2024-04-20", 1, 160), ("2024-04-20", 2, None),
]  # fmt: skip

#: (snap_ts, sku, qty): several snapshots a day
STOCK: list[tuple[str, str, int]] = [
    ("2024-05-01 08:00:00", "a", 10), ("2024-05-01 18:00:00", "a", 7),
    ("2024-05-01 09:00:00", "b", 5),
    ("2024-05-02 08:00:00", "a", 9), ("2024-05-02 08:00:00", "b", 4),
    ("2024-05-02 20:00:00", "b", 2),
]  # fmt: skip


def build_semi(db: Path, parquet: Path | None = None) -> None:
    """The `sa_*` tables into schema main of `db` (and one Parquet file each)."""
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE TABLE sa_accounts (account_id INTEGER, region VARCHAR, kind VARCHAR)")
        con.executemany("INSERT INTO sa_accounts VALUES (?, ?, ?)", ACCOUNTS)
        con.execute(
            "CREATE TABLE sa_balances (snapshot_date DATE, account_id INTEGER, "
            "balance DECIMAL(12,2))"
        )
        con.executemany(
            "INSERT INTO sa_balances VALUES (CAST(? AS DATE), ?, ?)",
            [(d, a, b) for d, a, b in BALANCES],
        )
        con.execute("CREATE TABLE sa_stock (snap_ts TIMESTAMP, sku VARCHAR, qty INTEGER)")
        con.executemany("INSERT INTO sa_stock VALUES (CAST(? AS TIMESTAMP), ?, ?)", STOCK)
        if parquet is not None:
            for t in SEMI_TABLES:
                con.execute(
                    f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT parquet)"
                )
    finally:
        con.close()


# ------------------------------------------------------------------------------ the model


def _expr(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


def _field(name: str, datatype: str, *, is_time: bool = False) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "expression": _expr(name), "datatype": datatype}
    if is_time:
        f["dimension"] = {"is_time": True}
    return f


def metric(name: str, expression: str, ext: dict[str, Any] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "expression": _expr(expression)}
    if ext is not None:
        m["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(ext)}]
    return m


def semi(snapshot: str = "last", groupings: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """A DATUS payload declaring `semi_additive` along sa balances' snapshot date."""
    decl: dict[str, Any] = {"dimension": "balances.snapshot_date", "snapshot": snapshot}
    if groupings:
        decl["window_groupings"] = list(groupings)
    return {"v": "1.11", "requires": ["semi_additive"], "semi_additive": decl, **extra}


METRICS: list[dict[str, Any]] = [
    metric("balance_all_snapshots", "SUM(balances.balance)"),
    metric("balance", "SUM(balances.balance)", semi()),
    metric("balance_by_account", "SUM(balances.balance)", semi(groupings=("account_id",))),
    metric("opening_balance", "SUM(balances.balance)", semi("first")),
    metric("lowest_balance", "SUM(balances.balance)", semi("min")),
    metric("peak_balance", "SUM(balances.balance)", semi("max")),
    metric("lowest_by_account", "SUM(balances.balance)", semi("min", groupings=("account_id",))),
    metric("accounts_held", "COUNT(DISTINCT balances.account_id)", semi(groupings=("account_id",))),
    metric(
        "balance_filled",
        "SUM(balances.balance)",
        semi(groupings=("account_id",), fill_nulls_with=0),
    ),
    metric(
        "balance_mom",
        "SUM(balances.balance)",
        {
            **semi(groupings=("account_id",)),
            "v": "1.11",
            "window": {"type": "pop", "offset": "1 month", "calculation": "delta"},
        },
    ),
    metric(
        "balance_without_2",
        "SUM(CASE WHEN balances.account_id <> 2 THEN balances.balance END)",
        {
            "derive": {
                "type": "filter",
                "base": "balance_by_account",
                "where": "balances.account_id <> 2",
            }
        },
    ),
    metric(
        "avg_balance_per_account",
        "SUM(balances.balance) / COUNT(DISTINCT balances.account_id)",
        {"derive": {"type": "compose", "expr": "balance_by_account / accounts_held"}},
    ),
    metric(
        "stock",
        "SUM(stock.qty)",
        {
            "v": "1.11",
            "requires": ["semi_additive"],
            "semi_additive": {"dimension": "snap_ts", "window_groupings": ["sku"]},
        },
    ),
    metric("stock_all", "SUM(stock.qty)"),
]


def semi_model_dict(metrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    datasets = [
        {
            "name": "balances",
            "source": "main.sa_balances",
            "fields": [
                _field("snapshot_date", "Date", is_time=True),
                _field("account_id", "Integer"),
                _field("balance", "Decimal"),
            ],
        },
        {
            "name": "accounts",
            "source": "main.sa_accounts",
            "primary_key": ["account_id"],
            "fields": [
                _field("account_id", "Integer"),
                _field("region", "String"),
                _field("kind", "String"),
            ],
        },
        {
            "name": "stock",
            "source": "main.sa_stock",
            "fields": [
                _field("snap_ts", "DateTime", is_time=True),
                _field("sku", "String"),
                _field("qty", "Integer"),
            ],
        },
    ]
    return {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "balances_mini",
                "datasets": datasets,
                "relationships": [
                    {
                        "name": "balances_to_accounts",
                        "from": "balances",
                        "to": "accounts",
                        "from_columns": ["account_id"],
                        "to_columns": ["account_id"],
                    }
                ],
                "metrics": METRICS if metrics is None else metrics,
            }
        ],
    }


def semi_model_text(metrics: list[dict[str, Any]] | None = None) -> str:
    return yaml.safe_dump(semi_model_dict(metrics), sort_keys=False)


# ------------------------------------------------------------------ plain-Python expectations


def month(d: str) -> str:
    return d[:7] + "-01"


def last_per(rows: list[tuple[str, int, float | None]], key: Any, pick: Any = max) -> float | None:
    """Σ over groups of `key(row)` of the rows at the group's chosen snapshot date."""
    groups: dict[Any, list[tuple[str, int, float | None]]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    total: float | None = None
    for rs in groups.values():
        when = pick(r[0] for r in rs)
        vals = [r[2] for r in rs if r[0] == when and r[2] is not None]
        if vals:
            total = (total or 0) + sum(vals)
    return total


def as_date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)
