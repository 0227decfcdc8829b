"""Data, model and an independent plain-Python windowing for the streaming-window tests.

Nothing here uses the engine or `dosi.udf`: windows are enumerated from their definitions
(dosi.query.stream_window docstring) on integer epoch microseconds, rows are grouped per window
and every metric is recomputed from the rows of its window.

* tumble(size, offset): [offset + j*size, offset + (j+1)*size) holding t;
* hop(size, slide, offset): every [s, s + size) with s on the grid offset + j*slide and
  s <= t < s + size (enumerated, not computed from the earliest window);
* cumulate(size, step): epoch e = floor(t / size) * size, windows [e, e + i*step) for
  i = 1..size/step with e + i*step > t;
* session(gap): per combination of the other group-by values, rows sorted by t; a new session
  when t - previous > gap; start = first t, end = last t + gap.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import yaml

EPOCH = dt.datetime(1970, 1, 1)
US = dt.timedelta(microseconds=1)
SECOND = 1_000_000  # microseconds
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def to_us(ts: dt.datetime) -> int:
    return (ts - EPOCH) // US


def from_us(us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=us)


T = dt.datetime.fromisoformat


# ------------------------------------------------------------------------------ data


@dataclass(frozen=True)
class Event:
    event_id: int
    ts: dt.datetime | None
    user_id: int | None
    kind: str | None
    value: float | None


@dataclass(frozen=True)
class Purchase:
    purchase_id: int
    ts: dt.datetime | None
    user_id: int | None
    amount: float


# user -> country; user 4 has no country, user 9 (in EVENTS) is missing from the table
USERS: dict[int, str | None] = {1: "fr", 2: "de", 3: "fr", 4: None, 5: "it"}


def _events() -> tuple[Event, ...]:
    rows: list[tuple[str | None, int | None, str | None, float | None]] = [
        # a burst seconds apart, with ties and sub-second times
        ("2025-01-01 00:00:00", 1, "view", 0.0),
        ("2025-01-01 00:00:00", 2, "view", 0.0),
        ("2025-01-01 00:00:01.250", 1, "click", 1.25),
        ("2025-01-01 00:00:03", 2, "click", 2.5),
        ("2025-01-01 00:00:03", 2, "cart", 5.0),
        ("2025-01-01 00:00:07", 3, None, 0.5),
        ("2025-01-01 00:00:59.999", 1, "view", 0.0),
        ("2025-01-01 00:01:00", None, "view", 0.0),
        ("2025-01-01 00:01:00.001", 4, "buy", 12.75),
        # around an hour boundary
        ("2025-01-01 00:59:59.999999", 1, "click", 0.25),
        ("2025-01-01 01:00:00", 1, "buy", 20.0),
        ("2025-01-01 01:00:00", 9, "view", 0.0),
        # gaps of exactly 30 minutes, and 30 minutes + 1 ms (user 1)
        ("2025-01-01 01:30:00", 1, "view", 0.0),
        ("2025-01-01 02:00:00.001", 1, "click", 0.75),
        ("2025-01-01 02:00:30", 2, "click", 0.75),
        ("2025-01-01 02:10:00", None, None, None),
        # later that day and across midnight
        ("2025-01-01 13:45:10", 5, "view", 0.0),
        ("2025-01-01 23:59:59.500", 5, "cart", 3.5),
        ("2025-01-02 00:00:00.500", 5, "buy", 30.0),
        ("2025-01-02 00:04:00", 3, "view", 0.0),
        # days later
        ("2025-01-05 08:00:00", 1, "view", 0.0),
        ("2025-01-05 08:00:02", 1, "click", 1.0),
        ("2025-01-05 08:20:00", 4, "view", None),
        ("2025-01-05 09:15:00", 2, "buy", 8.25),
        # no event time: in no window
        (None, 3, "view", 0.0),
    ]
    return tuple(
        Event(i + 1, None if ts is None else T(ts), user, kind, value)
        for i, (ts, user, kind, value) in enumerate(rows)
    )


EVENTS: tuple[Event, ...] = _events()

PURCHASES: tuple[Purchase, ...] = tuple(
    Purchase(i + 1, T(ts), user, amount)
    for i, (ts, user, amount) in enumerate(
        [
            ("2025-01-01 00:00:30", 1, 10.0),
            ("2025-01-01 00:45:00", 2, 5.5),
            ("2025-01-01 01:00:00", 1, 2.25),
            ("2025-01-01 03:00:00", 5, 7.0),
            ("2025-01-05 08:00:01", 1, 4.0),
        ]
    )
)


def write_tables(
    con: duckdb.DuckDBPyConnection,
    events: Iterable[Event] = EVENTS,
    purchases: Iterable[Purchase] = PURCHASES,
    users: dict[int, str | None] = USERS,
    schema: str = "main",
) -> None:
    """(Re)create `<schema>.stream_events`, `stream_users` and `stream_purchases`."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    con.execute(
        f"CREATE OR REPLACE TABLE {schema}.stream_events(event_id BIGINT, event_ts TIMESTAMP, "
        "user_id INTEGER, kind VARCHAR, value DOUBLE)"
    )
    con.execute(f"CREATE OR REPLACE TABLE {schema}.stream_users(user_id INTEGER, country VARCHAR)")
    con.execute(
        f"CREATE OR REPLACE TABLE {schema}.stream_purchases(purchase_id BIGINT, "
        "purchase_ts TIMESTAMP, user_id INTEGER, amount DOUBLE)"
    )
    rows = [(e.event_id, e.ts, e.user_id, e.kind, e.value) for e in events]
    if rows:
        con.executemany(f"INSERT INTO {schema}.stream_events VALUES (?, ?, ?, ?, ?)", rows)
    con.executemany(f"INSERT INTO {schema}.stream_users VALUES (?, ?)", list(users.items()))
    prows = [(p.purchase_id, p.ts, p.user_id, p.amount) for p in purchases]
    if prows:
        con.executemany(f"INSERT INTO {schema}.stream_purchases VALUES (?, ?, ?, ?)", prows)


def build_db(path: Path) -> str:
    con = duckdb.connect(str(path))
    try:
        write_tables(con)
    finally:
        con.close()
    return str(path)


# ------------------------------------------------------------------------------ model


def _expr(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


def _field(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "expression": _expr(name), **kw}


METRIC_EXPRESSIONS: dict[str, str] = {
    "event_count": "COUNT(events.event_id)",
    "active_users": "COUNT(DISTINCT events.user_id)",
    "total_value": "SUM(events.value)",
    "value_per_event": "SUM(events.value) / COUNT(events.event_id)",
    "events_per_user": (
        "CAST(COUNT(events.event_id) AS DOUBLE) / NULLIF(COUNT(DISTINCT events.user_id), 0)"
    ),
    "kinds": "COUNT(DISTINCT events.kind)",
    "revenue": "SUM(purchases.amount)",
    "purchase_count": "COUNT(purchases.purchase_id)",
}


def model_yaml(schema: str = "main", *, extra_metrics: dict[str, Any] | None = None) -> str:
    metrics: list[dict[str, Any]] = [
        {"name": n, "expression": _expr(e)} for n, e in METRIC_EXPRESSIONS.items()
    ]
    for name, payload in (extra_metrics or {}).items():
        expression, ext = payload
        metrics.append(
            {
                "name": name,
                "expression": _expr(expression),
                "custom_extensions": [{"vendor_name": "DATUS", "data": json.dumps(ext)}],
            }
        )
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "stream",
                "datasets": [
                    {
                        "name": "events",
                        "source": f"{schema}.stream_events",
                        "primary_key": ["event_id"],
                        "fields": [
                            _field("event_id"),
                            _field("event_ts", datatype="DateTime", dimension={"is_time": True}),
                            _field("user_id"),
                            _field("kind"),
                            _field("value"),
                            # clashes with the window_end output column
                            {"name": "window_end", "expression": _expr("kind")},
                        ],
                    },
                    {
                        "name": "users",
                        "source": f"{schema}.stream_users",
                        "primary_key": ["user_id"],
                        "fields": [_field("user_id"), _field("country")],
                    },
                    {
                        "name": "purchases",
                        "source": f"{schema}.stream_purchases",
                        "primary_key": ["purchase_id"],
                        "fields": [
                            _field("purchase_id"),
                            _field("purchase_ts", datatype="DateTime", dimension={"is_time": True}),
                            _field("user_id"),
                            _field("amount"),
                        ],
                    },
                ],
                "relationships": [
                    {
                        "name": "events_to_users",
                        "from": "events",
                        "to": "users",
                        "from_columns": ["user_id"],
                        "to_columns": ["user_id"],
                    }
                ],
                "metrics": metrics,
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


# ------------------------------------------------------------------------------ windows


@dataclass(frozen=True)
class Win:
    """A window spec in microseconds (the reference's own representation)."""

    type: str
    size: int = 0
    slide: int = 0
    step: int = 0
    gap: int = 0
    offset: int = 0


def windows_containing(t: int, w: Win) -> list[tuple[int, int]]:
    """Every [start, end) of a tumble / hop / cumulate window that holds t (microseconds)."""
    if w.type == "tumble":
        # scan the grid around t instead of using the floor formula
        start = w.offset + ((t - w.offset) // w.size - 2) * w.size
        while start + w.size <= t:
            start += w.size
        assert start <= t < start + w.size
        return [(start, start + w.size)]
    if w.type == "hop":
        out = []
        j = (t - w.offset - w.size) // w.slide - 1
        while True:
            s = w.offset + j * w.slide
            if s > t:
                break
            if s <= t < s + w.size:
                out.append((s, s + w.size))
            j += 1
        return out
    if w.type == "cumulate":
        epoch = t // w.size * w.size
        return [
            (epoch, epoch + i * w.step)
            for i in range(1, w.size // w.step + 1)
            if epoch + i * w.step > t
        ]
    raise ValueError(w.type)


def sessions(times: Sequence[int], gap: int) -> list[list[int]]:
    """Indexes of `times` grouped into sessions (a gap larger than `gap` starts a new one)."""
    order = sorted(range(len(times)), key=lambda i: times[i])
    out: list[list[int]] = []
    previous: int | None = None
    for i in order:
        if previous is None or times[i] - previous > gap:
            out.append([])
        out[-1].append(i)
        previous = times[i]
    return out


# ------------------------------------------------------------------------------ metrics


def _sum(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _metric(name: str, rows: Sequence[Any]) -> Any:
    if name in ("revenue", "purchase_count"):
        if name == "revenue":
            return _sum(r.amount for r in rows)
        return sum(1 for r in rows if r.purchase_id is not None)
    count = sum(1 for r in rows if r.event_id is not None)
    users = len({r.user_id for r in rows if r.user_id is not None})
    total = _sum(r.value for r in rows)
    if name == "event_count":
        return count
    if name == "active_users":
        return users
    if name in ("total_value", "event_value"):  # event_value: the shop model's name
        return total
    if name == "value_per_event":
        return None if total is None or count == 0 else total / count
    if name == "events_per_user":
        return count / users if users else None
    if name == "kinds":
        return len({r.kind for r in rows if r.kind is not None})
    raise KeyError(name)


def country_of(row: Any, users: dict[int, str | None] = USERS) -> str | None:
    return None if row.user_id is None else users.get(row.user_id)


DIMENSIONS: dict[str, Callable[[Any], Any]] = {
    "events.kind": lambda r: r.kind,
    "events.user_id": lambda r: r.user_id,
    "users.country": country_of,
    "events.event_type": lambda r: r.kind,  # the shop model's events (kind = event_type)
}


def output_name(dim: str) -> str:
    return dim.rsplit(".", 1)[-1]


def reference(
    window: Win,
    metrics: Sequence[str],
    dims: Sequence[str] = (),
    *,
    events: Sequence[Event] = EVENTS,
    purchases: Sequence[Purchase] = PURCHASES,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    where: Callable[[Any], bool] | None = None,
) -> list[dict[str, Any]]:
    """Rows {dim outputs..., window_start, window_end, metrics...} for one windowed query.

    Metrics of the events and of the purchases are windowed separately and merged on
    (window_start, window_end, dims), as a multi-dataset query is.
    """
    event_metrics = [m for m in metrics if m not in ("revenue", "purchase_count")]
    purchase_metrics = [m for m in metrics if m in ("revenue", "purchase_count")]
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rows, wanted in ((events, event_metrics), (purchases, purchase_metrics)):
        if not wanted:
            continue
        kept = [
            r
            for r in rows
            if r.ts is not None
            and (start is None or r.ts >= start)
            and (end is None or r.ts < end)
            and (where is None or where(r))
        ]
        groups = _group(kept, window, dims)
        for key, members in groups.items():
            out = merged.setdefault(key, {})
            for m in wanted:
                out[m] = _metric(m, members)
    # a pure count over a group that only the other dataset has is 0, not NULL (S-FAN-6)
    counts = {"event_count", "active_users", "kinds", "purchase_count"}
    multi = bool(event_metrics) and bool(purchase_metrics)
    result = []
    for key, values in merged.items():
        *dim_values, w_start, w_end = key
        row = {output_name(d): v for d, v in zip(dims, dim_values, strict=True)}
        row["window_start"] = from_us(w_start)
        row["window_end"] = from_us(w_end)
        for m in metrics:
            row[m] = values.get(m, 0 if multi and m in counts else None)
        result.append(row)
    return result


def _group(rows: Sequence[Any], window: Win, dims: Sequence[str]) -> dict[tuple[Any, ...], list]:
    groups: dict[tuple[Any, ...], list] = defaultdict(list)
    if window.type == "session":
        parts: dict[tuple[Any, ...], list] = defaultdict(list)
        for r in rows:
            parts[tuple(DIMENSIONS[d](r) for d in dims)].append(r)
        for part_key, members in parts.items():
            times = [to_us(r.ts) for r in members]
            for session in sessions(times, window.gap):
                first = min(times[i] for i in session)
                last = max(times[i] for i in session)
                groups[(*part_key, first, last + window.gap)].extend(members[i] for i in session)
        return groups
    for r in rows:
        dim_values = tuple(DIMENSIONS[d](r) for d in dims)
        for w_start, w_end in windows_containing(to_us(r.ts), window):
            groups[(*dim_values, w_start, w_end)].append(r)
    return groups
