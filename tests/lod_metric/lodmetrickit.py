"""A small orders model built to match the D-LOD worked examples (datus-extensions §3 D-LOD):

* per channel, avg(include(revenue, user_id)) is pc (1) 12.5 / mobile (2) 20.5, while the
  average of each user's whole-history revenue is 17.5 / 23;
* with `where orders.user_id <> 'A'`, channel 2 has revenue 35 and fixed(revenue, channel_id)
  82 (user A's 47 leaves only the numerator); channel 1 has 25 and 25.

Users: A (channel 2: 40 + 7), B (channel 1: 10, channel 2: 10), C (channel 1: 15),
D (channel 2: 12), E (channel 2: 13); one order with a NULL channel (user F, 5) only in
`with_null_channel`. Refunds are a second fact dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

ORDERS = [
    (1, "A", 2, "2025-01-03", 40.0),
    (2, "A", 2, "2025-02-04", 7.0),
    (3, "B", 1, "2025-01-05", 10.0),
    (4, "B", 2, "2025-01-06", 10.0),
    (5, "C", 1, "2025-02-07", 15.0),
    (6, "D", 2, "2025-01-08", 12.0),
    (7, "E", 2, "2025-02-09", 13.0),
]
NULL_CHANNEL_ORDER = (8, "F", None, "2025-01-20", 5.0)
REFUNDS = [(1, "A", 2, "2025-01-10", 5.0), (2, "B", 1, "2025-01-11", 3.0)]


def build_db(path: Path, with_null_channel: bool = False, one_sided: bool = False) -> None:
    """`one_sided`: a refund on channel 3 (no orders) and an order on channel 4 (no refunds),
    for the merge of a LOD stage with another dataset's metric."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE lod_order (order_id INTEGER, user_id VARCHAR, channel_id INTEGER, "
        "event_date DATE, amount DOUBLE)"
    )
    rows = [*ORDERS, *([NULL_CHANNEL_ORDER] if with_null_channel else [])]
    con.executemany("INSERT INTO lod_order VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE lod_channel (channel_id INTEGER, channel_name VARCHAR)")
    con.execute("INSERT INTO lod_channel VALUES (1, 'pc'), (2, 'mobile')")
    con.execute(
        "CREATE TABLE lod_refund (refund_id INTEGER, user_id VARCHAR, channel_id INTEGER, "
        "refund_date DATE, refund_amount DOUBLE)"
    )
    con.executemany("INSERT INTO lod_refund VALUES (?, ?, ?, ?, ?)", REFUNDS)
    if one_sided:
        con.execute("INSERT INTO lod_channel VALUES (3, 'tv'), (4, 'fax')")
        con.execute("INSERT INTO lod_refund VALUES (3, 'Z', 3, DATE '2025-01-12', 4)")
        con.execute("INSERT INTO lod_order VALUES (9, 'Y', 4, DATE '2025-01-13', 6)")
    con.execute("CREATE TABLE lod_acct (user_id VARCHAR, acct_name VARCHAR)")
    con.execute("INSERT INTO lod_acct SELECT DISTINCT user_id, 'acct ' || user_id FROM lod_order")
    con.close()


def ext(payload: dict[str, Any]) -> list[dict[str, str]]:
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def field(name: str, datatype: str, time: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": name}]},
        "datatype": datatype,
    }
    if time:
        out["dimension"] = {"is_time": True}
    return out


def metric(name: str, expr: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr}]},
    }
    if payload is not None:
        out["custom_extensions"] = ext(payload)
    return out


def lod(name: str, expr: str, text: str) -> dict[str, Any]:
    return metric(name, expr, {"v": "1.10", "derive": {"type": "lod", "expr": text}})


# a fixed field (the D-LOD field carrier): each user's whole-history revenue
USER_REVENUE = {
    "name": "user_revenue",
    "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": "SUM(amount)"}]},
    "datatype": "Decimal",
    "custom_extensions": ext({"v": "1.10", "lod": {"expr": "fixed(revenue, orders.user_id)"}}),
}

PLAIN = [
    metric("revenue", "SUM(orders.amount)"),
    metric("order_count", "COUNT(orders.order_id)"),
    metric("buyers", "COUNT(DISTINCT orders.user_id)"),
    metric("refunds", "SUM(refunds.refund_amount)"),
    metric("refund_count", "COUNT(refunds.refund_id)"),
    metric("avg_user_revenue", "AVG(orders.user_revenue)"),
]
LOD = [
    lod("revenue_per_user", "AVG(SUM(orders.amount))", "avg(include(revenue, orders.user_id))"),
    lod("max_user_revenue", "MAX(SUM(orders.amount))", "max(include(revenue, orders.user_id))"),
    lod("revenue_grand", "SUM(SUM(orders.amount))", "exclude(revenue)"),
    lod("revenue_excl_channel", "SUM(SUM(orders.amount))", "exclude(revenue, orders.channel_id)"),
    lod(
        "buyers_excl_channel",
        "SUM(COUNT(DISTINCT orders.user_id))",
        "exclude(buyers, orders.channel_id)",
    ),
    lod("revenue_excl_date", "SUM(SUM(orders.amount))", "exclude(revenue, orders.event_date)"),
    lod("revenue_fixed_all", "SUM(SUM(orders.amount))", "fixed(revenue)"),
    lod(
        "revenue_fixed_by_channel",
        "SUM(SUM(orders.amount))",
        "fixed(revenue, orders.channel_id)",
    ),
]


def compose(name: str, expr: str, text: str) -> dict[str, Any]:
    return metric(name, expr, {"v": "1.10", "derive": {"type": "compose", "expr": text}})


SHARES = [
    compose(
        "revenue_share", "SUM(orders.amount) / SUM(SUM(orders.amount))", "revenue / revenue_grand"
    ),
    compose(
        "revenue_share_of_all",
        "SUM(orders.amount) / SUM(SUM(orders.amount))",
        "revenue / revenue_fixed_all",
    ),
    compose(
        "channel_share_of_user",
        "SUM(orders.amount) / SUM(SUM(orders.amount))",
        "revenue / revenue_excl_channel",
    ),
]


def model_dict(
    metrics: list[dict[str, Any]] | None = None, lod_field: bool = True
) -> dict[str, Any]:
    return {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "lod_metrics",
                "datasets": [
                    {
                        "name": "orders",
                        "source": "main.lod_order",
                        "primary_key": ["order_id"],
                        "fields": [
                            field("order_id", "Integer"),
                            field("user_id", "String"),
                            field("channel_id", "Integer"),
                            field("event_date", "Date", time=True),
                            field("amount", "Decimal"),
                            *([USER_REVENUE] if lod_field else []),
                        ],
                    },
                    {
                        "name": "channel",
                        "source": "main.lod_channel",
                        "primary_key": ["channel_id"],
                        "fields": [field("channel_id", "Integer"), field("channel_name", "String")],
                    },
                    {
                        "name": "acct",
                        "source": "main.lod_acct",
                        "primary_key": ["user_id"],
                        "fields": [field("user_id", "String"), field("acct_name", "String")],
                    },
                    {
                        "name": "refunds",
                        "source": "main.lod_refund",
                        "primary_key": ["refund_id"],
                        "fields": [
                            field("refund_id", "Integer"),
                            field("user_id", "String"),
                            field("channel_id", "Integer"),
                            field("refund_date", "Date", time=True),
                            field("refund_amount", "Decimal"),
                        ],
                    },
                ],
                "relationships": [
                    {
                        "name": "orders_channel",
                        "from": "orders",
                        "to": "channel",
                        "from_columns": ["channel_id"],
                        "to_columns": ["channel_id"],
                    },
                    {
                        "name": "orders_acct",
                        "from": "orders",
                        "to": "acct",
                        "from_columns": ["user_id"],
                        "to_columns": ["user_id"],
                    },
                    {
                        "name": "refunds_channel",
                        "from": "refunds",
                        "to": "channel",
                        "from_columns": ["channel_id"],
                        "to_columns": ["channel_id"],
                    },
                ],
                "metrics": [
                    m
                    for m in (metrics if metrics is not None else [*PLAIN, *LOD, *SHARES])
                    if lod_field or m["name"] != "avg_user_revenue"
                ],
            }
        ],
    }


def model_text(metrics: list[dict[str, Any]] | None = None, lod_field: bool = True) -> str:
    return yaml.safe_dump(model_dict(metrics, lod_field), sort_keys=False)
