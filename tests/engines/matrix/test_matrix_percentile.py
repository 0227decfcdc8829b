"""Percentile and median metrics on every engine (issue 21 items 5 and 8): SQLite, chDB,
DataFusion, Spark, PostgreSQL and MariaDB over the shop, each value checked against plain
Python over the raw rows (read from the DuckDB build with hand-written SQL), never against
another engine.

The rules (dosi.sql.dialects.percentile): continuous = `statistics.quantiles(values, n=100,
method="inclusive")` (linear interpolation, h = (n - 1) * p); discrete = the value at rank
max(1, ceil(n * p)) of the ascending values, in exact fractions; NULLs ignored. Approximate
percentiles are each engine's own estimate: checked to lie within the group's values. SQLite
and MariaDB have no percentile aggregate: a structured `dialect_unsupported_percentile` before
any SQL runs.

Also on every engine (issue 21 items 3 and 4): a compose of pinned row counts of two datasets
(`SUM(1) / COUNT(*)`, each member its own dataset's rows), grouped with the
`metric_time__quarter` spelling.

Requirement IDs: CORE-MEAS-01 (percentile measures), CORE-FAN-02 (merged with another
dataset's metric), WIN-OFF-01 (a window over a percentile base), DSET-01 and DRV-CMP-01 (the
row-count compose), CORE-Q-02 / CORE-Q-04 (the grain spelling and its output name).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from conformkit import SHOP_MODEL, norm, same

import dosi
from dosi.errors import QueryError

PCT_METRICS = {
    "amount_p90": "PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY orders.amount)",
    "amount_p25": "PERCENTILE_CONT(0.25) WITHIN GROUP (ORDER BY orders.amount)",
    "amount_disc_p30": "PERCENTILE_DISC(0.3) WITHIN GROUP (ORDER BY orders.amount)",
    "amount_disc_p70": "PERCENTILE_DISC(0.7) WITHIN GROUP (ORDER BY orders.amount)",
    "amount_median": "MEDIAN(orders.amount)",
    "amount_approx": "APPROX_QUANTILE(orders.amount, 0.5)",
    "qty_p75": "PERCENTILE_CONT(0.75) WITHIN GROUP (ORDER BY order_items.quantity)",
    "qty_disc_p50": "PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY order_items.quantity)",
}
WINDOWED = {
    "amount_median_mom": {"window": {"type": "pop", "offset": "1 month", "calculation": "delta"}}
}
UNSUPPORTED = {"sqlite", "mariadb"}


def model_text() -> str:
    doc = yaml.safe_load(SHOP_MODEL.read_text())
    metrics = doc["semantic_model"][0]["metrics"]

    def add(name: str, expression: str, ext: dict[str, Any] | None = None) -> None:
        m: dict[str, Any] = {
            "name": name,
            "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": expression}]},
        }
        if ext is not None:
            m["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(ext)}]
        metrics.append(m)

    for name, expression in PCT_METRICS.items():
        add(name, expression)
    add("amount_median_mom", "MEDIAN(orders.amount)", WINDOWED["amount_median_mom"])
    # issue 21 item 4: row counts of two datasets in one compose
    add("order_rows", "COUNT(*)", {"dataset": "orders"})
    add("refund_rows", "SUM(1)", {"dataset": "refunds"})
    compose = {"v": "1.4", "derive": {"type": "compose", "expr": "refund_rows / order_rows"}}
    add("refunds_per_order", "SUM(1) / COUNT(*)", compose)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------------------------ Python rules


def cont(values: Sequence[Any], p: float) -> float | None:
    vals = sorted(float(v) for v in values if v is not None)
    if not vals:
        return None
    if len(vals) == 1:
        return vals[0]
    k = round(p * 100)
    return statistics.quantiles(vals, n=100, method="inclusive")[k - 1]


def disc(values: Sequence[Any], p: float) -> Any:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    return vals[max(1, math.ceil(Fraction(str(p)) * len(vals))) - 1]


def _groups(db: Path, sql: str) -> dict[Any, list[Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[Any, list[Any]] = defaultdict(list)
        for key, value in con.execute(sql).fetchall():
            out[norm(key)].append(value)
        return out
    finally:
        con.close()


ORDERS_BY = "SELECT {key}, amount FROM main.orders"
ITEMS_BY = (
    "SELECT {key}, i.quantity FROM main.order_items i JOIN main.orders o ON i.order_id = o.order_id"
)

# name -> (query, key SQL over orders (aliased `o` for items), expected columns)
QUERIES: dict[str, dict[str, Any]] = {
    "by_channel": {
        "metrics": [
            "amount_p90",
            "amount_p25",
            "amount_disc_p30",
            "amount_disc_p70",
            "amount_median",
        ],
        "group_by": ["orders.channel"],
    },
    "by_quarter": {
        "metrics": ["amount_p90", "amount_disc_p30", "amount_median"],
        "group_by": ["metric_time:quarter"],
    },
    "merged_items": {
        "metrics": ["amount_median", "qty_p75", "qty_disc_p50"],
        "group_by": ["orders.channel"],
    },
    "total": {"metrics": ["amount_p90", "amount_disc_p70", "qty_p75"]},
}
_KEYS = {
    "by_channel": "channel",
    "by_quarter": "CAST(date_trunc('quarter', order_date) AS DATE)",
    "merged_items": "o.channel",
    "total": "1",
}


def expected(db: Path, name: str) -> list[dict[str, Any]]:
    key = _KEYS[name]
    orders = _groups(db, ORDERS_BY.format(key=key.replace("o.", "")))
    items = _groups(db, ITEMS_BY.format(key=key if key != "channel" else "o.channel"))
    out = []
    for k in sorted(set(orders) | set(items), key=lambda v: (v is None, v)):
        o, i = orders.get(k, []), items.get(k, [])
        row = {
            "amount_p90": cont(o, 0.9),
            "amount_p25": cont(o, 0.25),
            "amount_disc_p30": disc(o, 0.3),
            "amount_disc_p70": disc(o, 0.7),
            "amount_median": cont(o, 0.5),
            "qty_p75": cont(i, 0.75),
            "qty_disc_p50": disc(i, 0.5),
            "_key": k,
        }
        out.append(row)
    return out


@pytest.fixture(scope="module")
def pct_target(loaded: tuple[str, Any]) -> Iterator[tuple[str, dosi.Engine]]:
    kind, client = loaded
    eng = dosi.Engine(model_text=model_text(), connections={kind: {"type": kind, "client": client}})
    yield kind, eng
    eng.close()


@pytest.mark.parametrize("name", list(QUERIES))
def test_percentiles_match_python(
    pct_target: tuple[str, dosi.Engine], shop_files: tuple[Path, Path], name: str
) -> None:
    kind, eng = pct_target
    query = QUERIES[name]
    if kind in UNSUPPORTED:
        with pytest.raises(QueryError) as info:
            eng.compile(query, dialect=kind)
        assert info.value.code == "dialect_unsupported_percentile"
        return
    got = eng.execute(query, connection=kind)
    want = expected(shop_files[0], name)
    dims = [c for c in got["columns"] if c not in query["metrics"]]
    assert len(got["rows"]) == len(want), f"{kind} {name}: {len(got['rows'])} rows, {len(want)}"
    by_key = {norm(r[dims[0]]) if dims else 1: r for r in got["rows"]}
    for w in want:
        row = by_key[w["_key"]]
        for m in query["metrics"]:
            assert same(norm(row[m]), norm(w[m])), (
                f"{kind} {name} {w['_key']} {m}: {row[m]} != {w[m]}"
            )


def test_approximate_and_window(
    pct_target: tuple[str, dosi.Engine], shop_files: tuple[Path, Path]
) -> None:
    """APPROX_QUANTILE lies within each channel's values; the month-over-month delta of the
    median equals the difference of the Python medians."""
    kind, eng = pct_target
    query = {"metrics": ["amount_approx"], "group_by": ["orders.channel"]}
    if kind in UNSUPPORTED:
        with pytest.raises(QueryError) as info:
            eng.compile(query, dialect=kind)
        assert info.value.code == "dialect_unsupported_percentile"
        return
    groups = _groups(shop_files[0], ORDERS_BY.format(key="channel"))
    for r in eng.execute(query, connection=kind)["rows"]:
        vals = [float(v) for v in groups[norm(r["channel"])] if v is not None]
        assert min(vals) - 1e-9 <= float(r["amount_approx"]) <= max(vals) + 1e-9
    months = sorted(
        _groups(
            shop_files[0], ORDERS_BY.format(key="CAST(date_trunc('month', order_date) AS DATE)")
        ).items()
    )
    res = eng.execute(
        {"metrics": ["amount_median_mom"], "group_by": ["metric_time:month"]}, connection=kind
    )
    got = {norm(r["metric_time__month"]): r["amount_median_mom"] for r in res["rows"]}
    medians = {k: cont(v, 0.5) for k, v in months}
    assert set(got) == set(medians)
    for cur in medians:
        day = dt.date.fromisoformat(cur[:10])
        prev = norm(dt.date(day.year - (day.month == 1), (day.month - 2) % 12 + 1, 1))
        want = medians[cur] - medians[prev] if prev in medians else None  # type: ignore[operator]
        assert same(norm(got[cur]), want), f"{kind} {cur}: {got[cur]} != {want}"


def test_row_count_compose_by_quarter_spelling(
    pct_target: tuple[str, dosi.Engine], shop_files: tuple[Path, Path]
) -> None:
    kind, eng = pct_target
    query = {
        "metrics": ["refunds_per_order", "order_rows", "refund_rows"],
        "group_by": ["metric_time__quarter"],
    }
    res = eng.execute(query, connection=kind)
    assert res["columns"] == ["metric_time__quarter", *query["metrics"]]
    quarter = "CAST(date_trunc('quarter', {}) AS DATE)"
    orders = {
        k: len(v)
        for k, v in _groups(
            shop_files[0], f"SELECT {quarter.format('order_date')}, 1 FROM main.orders"
        ).items()
    }
    refunds = {
        k: len(v)
        for k, v in _groups(
            shop_files[0], f"SELECT {quarter.format('refund_date')}, 1 FROM main.refunds"
        ).items()
    }
    got = {norm(r["metric_time__quarter"]): r for r in res["rows"]}
    assert set(got) == set(orders) | set(refunds)
    for k, row in got.items():
        o, r = orders.get(k, 0), refunds.get(k)
        assert norm(row["order_rows"]) == float(o), (kind, k)
        assert same(norm(row["refund_rows"]), None if r is None else float(r)), (kind, k)
        want = None if r is None or not o else r / o
        assert same(norm(row["refunds_per_order"]), want), (kind, k, row)
