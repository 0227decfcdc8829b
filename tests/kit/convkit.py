"""D-CONVERSION test data and model: visits (base events) and buys (conversion events) built
to break naive conversion versions.

- user 1 visits twice (01-01 session s1, 01-03 session s2) and buys twice (01-04 in s2,
  01-06 in s1): both buys are attributed to the latest visit before them (01-03), except with
  the constant property session_id, where the 01-06 buy belongs to the 01-01 visit;
- user 2 buys before visiting (01-01 < 01-02: never a conversion) and 10 days after (outside
  a 7-day window, inside an unbounded one);
- user 3 buys on the day of the visit and again the next day (an entity converting twice);
- user 4 and 5 never buy; user 6 buys without a visit.

Tables `cv_visits`, `cv_buys` in schema main. Expected values in the tests come from plain
Python over VISITS / BUYS or hand-written SQL, never from dosi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

CONV_TABLES = ("cv_visits", "cv_buys")

#: (visit_id, user_id, ds, session_id, referrer)
VISITS: list[tuple[int, int, str, str, str]] = [
    (1, 1, "2024-01-01", "s1", "google"),
    (2, 1, "2024-01-03", "s2", "fb"),
    (3, 2, "2024-01-02", "s3", "google"),
    (4, 3, "2024-01-05", "s4", "fb"),
    (5, 4, "2024-01-10", "s5", "google"),
    (6, 5, "2024-01-20", "s6", "google"),
]

#: (buy_id, user_id, ds, session_id, amount)
BUYS: list[tuple[int, int, str, str, int]] = [
    (1, 1, "2024-01-04", "s2", 10),
    (2, 1, "2024-01-06", "s1", 20),
    (3, 2, "2024-01-01", "s3", 5),
    (4, 2, "2024-01-12", "s3", 7),
    (5, 3, "2024-01-05", "s4", 8),
    (6, 3, "2024-01-06", "s4", 9),
    (7, 6, "2024-01-07", "s7", 1),
]


def build_conv(db: Path, parquet: Path | None = None) -> None:
    """The `cv_*` tables into schema main of `db` (and one Parquet file each)."""
    con = duckdb.connect(str(db))
    try:
        con.execute(
            "CREATE TABLE cv_visits (visit_id INTEGER, user_id INTEGER, ds DATE, "
            "session_id VARCHAR, referrer VARCHAR)"
        )
        con.executemany("INSERT INTO cv_visits VALUES (?, ?, CAST(? AS DATE), ?, ?)", VISITS)
        con.execute(
            "CREATE TABLE cv_buys (buy_id INTEGER, user_id INTEGER, ds DATE, "
            "session_id VARCHAR, amount INTEGER)"
        )
        con.executemany("INSERT INTO cv_buys VALUES (?, ?, CAST(? AS DATE), ?, ?)", BUYS)
        if parquet is not None:
            for t in CONV_TABLES:
                con.execute(
                    f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT parquet)"
                )
    finally:
        con.close()


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


def conv(decl: dict[str, Any]) -> dict[str, Any]:
    """A DATUS payload declaring `conversion`."""
    return {"v": "1.12", "requires": ["conversion"], "conversion": decl}


RATE = "COUNT(DISTINCT buys.user_id) / COUNT(DISTINCT visits.user_id)"
BASE: dict[str, Any] = {"base": "visitors", "conversion": "buyers", "entity": "user_id"}

METRICS: list[dict[str, Any]] = [
    metric("visits", "COUNT(visits.visit_id)"),
    metric("visitors", "COUNT(DISTINCT visits.user_id)"),
    metric("buys", "COUNT(buys.buy_id)"),
    metric("buyers", "COUNT(DISTINCT buys.user_id)"),
    metric("spend", "SUM(buys.amount)"),
    metric("visit_to_buy_rate_7d", RATE, conv({**BASE, "window": "7 days"})),
    metric("visit_to_buy_rate", RATE, conv(BASE)),
    metric(
        "visit_buy_rate_events_7d",  # MetricFlow's visit_buy_conversion_rate_7days shape
        "COUNT(buys.buy_id) / COUNT(visits.visit_id)",
        conv({"base": "visits", "conversion": "buys", "entity": "user_id", "window": "7 days"}),
    ),
    metric(
        "buyers_7d",
        "COUNT(DISTINCT buys.user_id)",
        conv({**BASE, "window": "7 days", "calculation": "conversions"}),
    ),
    metric(
        "buys_7d",
        "COUNT(buys.buy_id)",
        conv(
            {
                "base": "visits",
                "conversion": "buys",
                "entity": "user_id",
                "window": {"count": 7, "granularity": "day"},
                "calculation": "conversions",
            }
        ),
    ),
    metric(
        "spend_same_session",
        "SUM(buys.amount)",
        conv(
            {
                "base": "visits",
                "conversion": "spend",
                "entity": {"base": "visits.user_id", "conversion": "buys.user_id"},
                "window": "7 days",
                "calculation": "conversions",
                "constant_properties": ["session_id"],
            }
        ),
    ),
    metric(
        "spend_7d",
        "SUM(buys.amount)",
        conv(
            {
                "base": "visits",
                "conversion": "spend",
                "entity": "user_id",
                "window": "7 days",
                "calculation": "conversions",
            }
        ),
    ),
]


def conv_model_dict(metrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    datasets = [
        {
            "name": "visits",
            "source": "main.cv_visits",
            "primary_key": ["visit_id"],
            "fields": [
                _field("visit_id", "Integer"),
                _field("user_id", "Integer"),
                _field("ds", "Date", is_time=True),
                _field("session_id", "String"),
                _field("referrer", "String"),
            ],
        },
        {
            "name": "buys",
            "source": "main.cv_buys",
            "primary_key": ["buy_id"],
            "fields": [
                _field("buy_id", "Integer"),
                _field("user_id", "Integer"),
                _field("ds", "Date", is_time=True),
                _field("session_id", "String"),
                _field("amount", "Integer"),
            ],
        },
    ]
    return {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "funnel_mini",
                "datasets": datasets,
                "metrics": METRICS if metrics is None else metrics,
            }
        ],
    }


def conv_model_text(metrics: list[dict[str, Any]] | None = None) -> str:
    return yaml.safe_dump(conv_model_dict(metrics), sort_keys=False)
