"""A small sessions model built to match the D-LOD field examples (datus-extensions §3 D-LOD):

* channel 2 carries sessions on three dates whose daily users (all channels) are 4, 4 and 1:
  AVG(sessions.daily_users) per channel 2 is 3.0 (each date once), not the 3.5 its six session
  rows (2 + 3 + 1) would give;
* users active in January on both channels (C) count 2 active days on channel 2 under a
  `where_sql` dimension filter, but 1 under `context_filter`;
* a session with a NULL user (its own key family row) and a February-only day.

Expected values in the tests come from hand-written SQL over these tables (`hand`), never
from the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

# (user_id, event_date, channel_id)
SESSIONS = [
    ("A", "2025-01-01", 2),
    ("B", "2025-01-01", 2),
    ("C", "2025-01-01", 1),
    ("D", "2025-01-01", 1),
    ("A", "2025-01-02", 2),
    ("B", "2025-01-02", 2),
    ("C", "2025-01-02", 2),
    ("E", "2025-01-02", 1),
    ("D", "2025-01-03", 2),
    ("A", "2025-02-01", 1),
    (None, "2025-02-01", 1),
]
CHANNELS = [(1, "pc"), (2, "mobile")]
PROMO_DAYS = [("2025-01-02", "launch")]
ACCOUNTS = [("A", "x1"), ("B", "x2"), ("C", "x3"), ("D", "x4")]


def build_db(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE lod_session (user_id VARCHAR, event_date DATE, channel_id INTEGER)")
    con.executemany("INSERT INTO lod_session VALUES (?, ?, ?)", SESSIONS)
    con.execute("CREATE TABLE lod_channel (channel_id INTEGER, channel_name VARCHAR)")
    con.executemany("INSERT INTO lod_channel VALUES (?, ?)", CHANNELS)
    con.execute("CREATE TABLE lod_promo (event_date DATE, promo_name VARCHAR)")
    con.executemany("INSERT INTO lod_promo VALUES (?, ?)", PROMO_DAYS)
    con.execute("CREATE TABLE lod_acct (user_id VARCHAR, acct_name VARCHAR)")
    con.executemany("INSERT INTO lod_acct VALUES (?, ?)", ACCOUNTS)
    con.close()


def hand(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Expected rows: hand-written SQL on the same tables, sorted (NULLs first)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute(sql).fetchall()
    finally:
        con.close()
    return sorted(rows, key=_key)


def rows_of(result: dict[str, Any], cols: list[str]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r[c] for c in cols) for r in result["rows"]), key=_key)


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, str(v)) for v in row)


def ext(payload: dict[str, Any]) -> list[dict[str, str]]:
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def field(name: str, expr: str | None = None, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr or name}]},
    }
    out.update(kw)
    return out


def lod_field(name: str, expr: str, lod: str, **kw: Any) -> dict[str, Any]:
    return field(
        name,
        expr,
        custom_extensions=ext({"v": "1.10", "requires": ["lod"], "lod": {"expr": lod}}),
        **kw,
    )


def metric(name: str, expr: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expr}]},
    }
    if payload is not None:
        out["custom_extensions"] = ext(payload)
    return out


def model_dict() -> dict[str, Any]:
    return {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "lod_sessions",
                "datasets": [
                    {
                        "name": "sessions",
                        "source": "main.lod_session",
                        "fields": [
                            field("user_id", datatype="String"),
                            field("event_date", datatype="Date", dimension={"is_time": True}),
                            field("channel_id", datatype="Integer"),
                            lod_field(
                                "active_day",
                                "COUNT(DISTINCT event_date)",
                                "fixed(active_days, sessions.user_id)",
                                datatype="Integer",
                            ),
                            lod_field(
                                "daily_users",
                                "COUNT(DISTINCT user_id)",
                                "fixed(dau, sessions.event_date)",
                                datatype="Integer",
                            ),
                            lod_field(
                                "first_day",
                                "MIN(event_date)",
                                "fixed(first_session, user_id)",
                                datatype="Date",
                            ),
                            lod_field(
                                "all_sessions",
                                "COUNT(event_date)",
                                "fixed(session_count)",
                                datatype="Integer",
                            ),
                            field(
                                "visit_kind",
                                "CASE WHEN event_date = first_day THEN 'new' ELSE 'returning' END",
                                datatype="String",
                            ),
                            field(
                                "multi_day",
                                "CASE WHEN active_day > 1 THEN 1 ELSE 0 END",
                                datatype="Integer",
                            ),
                        ],
                    },
                    {
                        "name": "channel",
                        "source": "main.lod_channel",
                        "primary_key": ["channel_id"],
                        "fields": [
                            field("channel_id", datatype="Integer"),
                            field("channel_name", datatype="String"),
                        ],
                    },
                    {
                        "name": "acct",
                        "source": "main.lod_acct",
                        "primary_key": ["user_id"],
                        "fields": [
                            field("user_id", datatype="String"),
                            field("acct_name", datatype="String"),
                        ],
                    },
                    {
                        "name": "promo_day",
                        "source": "main.lod_promo",
                        "primary_key": ["event_date"],
                        "fields": [
                            field("event_date", datatype="Date"),
                            field("promo_name", datatype="String"),
                        ],
                    },
                ],
                "relationships": [
                    {
                        "name": "sessions_acct",
                        "from": "sessions",
                        "to": "acct",
                        "from_columns": ["user_id"],
                        "to_columns": ["user_id"],
                    },
                    {
                        "name": "sessions_channel",
                        "from": "sessions",
                        "to": "channel",
                        "from_columns": ["channel_id"],
                        "to_columns": ["channel_id"],
                    },
                    {
                        "name": "sessions_promo",
                        "from": "sessions",
                        "to": "promo_day",
                        "from_columns": ["event_date"],
                        "to_columns": ["event_date"],
                        "custom_extensions": ext({"v": "1.10", "join_type": "inner"}),
                    },
                ],
                "metrics": [
                    metric("active_days", "COUNT(DISTINCT sessions.event_date)"),
                    metric("dau", "COUNT(DISTINCT sessions.user_id)"),
                    metric("user_num", "COUNT(DISTINCT sessions.user_id)"),
                    metric("first_session", "MIN(sessions.event_date)"),
                    metric("session_count", "COUNT(sessions.event_date)"),
                    metric("avg_daily_users", "AVG(sessions.daily_users)"),
                    metric("avg_active_day", "AVG(sessions.active_day)"),
                    metric("multi_day_users", "SUM(sessions.multi_day)"),
                    metric("sum_active_day", "SUM(sessions.active_day)"),
                    metric(
                        "session_share",
                        "COUNT(sessions.event_date) * 1.0 / MAX(sessions.all_sessions)",
                    ),
                    metric(
                        "session_rank",
                        "COUNT(sessions.event_date)",
                        {"v": "1.3", "window": {"rank": {"function": "rank"}}},
                    ),
                ],
            }
        ],
    }


def model_text(edit: Any = None) -> str:
    """The model as YAML; `edit(model_dict)` may change it first (error tests)."""
    m = model_dict()
    if edit is not None:
        edit(m["semantic_model"][0])
    return yaml.safe_dump(m, sort_keys=False)
