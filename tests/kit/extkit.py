"""The conformance suite's extension matrix (loaded by tests/engines/matrix/conftest.py): a
hand-sized copy of the mini shop (tables `x_*` next to the shop's, in every engine) under a
model carrying the DATUS extensions that exist today, and the queries exercising them:

- D-JOIN `join_type: inner` on orders -> customers (orphan order 6 drops) and a multi-hop path,
- D-FILL `fill_nulls_with` on merged and single-branch plans,
- D-TIME dataset and metric `time_dimension` (two axes on one table merge by FULL JOIN),
- D-GRAIN `time_granularity: month` on refunds.refund_date (month and coarser grains),
- D-DATASET pinning COUNT(*) to order_items, D-DIM / D-MEASURE declarations (labels only),
- metric filters in where_sql (HAVING semantics after the window stage),
- DATE-typed buckets (orders) merged with TIMESTAMP axes (visits) at every grain,
- `select()` detail rows and `attribute()` (one statement, two windows).

The expected answers are DuckDB's (the conformance suite's oracle), value by value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

EXT_TABLES = ("x_customers", "x_orders", "x_order_items", "x_refunds", "x_visits")

_DATA = [
    "CREATE TABLE x_customers (id INTEGER, region VARCHAR, segment VARCHAR)",
    """INSERT INTO x_customers VALUES
        (1, 'east', 'consumer'), (2, 'west', 'corporate'), (3, NULL, 'consumer'),
        (4, 'east', NULL), (5, 'west', 'consumer')""",
    """CREATE TABLE x_orders (order_id INTEGER, customer_id INTEGER, order_date DATE,
        ship_date DATE, amount DECIMAL(10,2), discount DECIMAL(10,2), status VARCHAR,
        channel VARCHAR)""",
    """INSERT INTO x_orders VALUES
        (1, 1, DATE '2024-01-05', DATE '2024-01-07', 100, 10, 'paid', 'web'),
        (2, 1, DATE '2024-01-31', DATE '2024-02-02', 50, 0, 'paid', 'store'),
        (3, 2, DATE '2024-02-01', DATE '2024-02-03', 70, 0, 'refunded', 'web'),
        (4, 3, DATE '2024-03-10', DATE '2024-03-12', 30, 0, 'paid', 'web'),
        (5, 4, DATE '2024-03-31', DATE '2024-04-01', 20, 0, 'paid', NULL),
        (6, 99, DATE '2024-04-01', DATE '2024-04-02', 40, 0, 'paid', 'phone'),
        (7, 2, DATE '2024-04-15', DATE '2024-05-01', NULL, 0, 'paid', 'web'),
        (8, 5, DATE '2024-12-30', DATE '2025-01-02', 15.5, 1.25, 'paid', 'store')""",
    """CREATE TABLE x_order_items (order_id INTEGER, line INTEGER, product VARCHAR,
        qty INTEGER, price DECIMAL(10,2))""",
    """INSERT INTO x_order_items VALUES
        (1, 1, 'A', 2, 30), (1, 2, 'B', 1, 40), (2, 1, 'A', 1, 50), (3, 1, 'C', 7, 10),
        (4, 1, 'B', 3, 10), (5, 1, 'A', 1, 20), (7, 1, 'C', 1, 5), (8, 1, 'B', 2, 7.75)""",
    """CREATE TABLE x_refunds (refund_id INTEGER, order_id INTEGER, refund_date DATE,
        refund_amount DECIMAL(10,2))""",
    """INSERT INTO x_refunds VALUES
        (1, 3, DATE '2024-02-10', 70), (2, 1, DATE '2024-05-03', 10),
        (3, 50, DATE '2024-05-20', 5)""",
    """CREATE TABLE x_visits (visit_id INTEGER, customer_id INTEGER, visit_ts TIMESTAMP,
        pages INTEGER)""",
    """INSERT INTO x_visits VALUES
        (1, 1, TIMESTAMP '2024-01-05 08:15:00', 3), (2, 1, TIMESTAMP '2024-01-05 23:59:59', 1),
        (3, 2, TIMESTAMP '2024-01-07 00:00:00', 4), (4, 3, TIMESTAMP '2024-01-31 12:30:00', 2),
        (5, 4, TIMESTAMP '2024-02-01 00:00:01', 5), (6, 2, TIMESTAMP '2024-03-10 18:45:00', 1),
        (7, 5, TIMESTAMP '2024-03-31 23:00:00', 2), (8, 1, TIMESTAMP '2024-04-01 06:00:00', 6),
        (9, 99, TIMESTAMP '2024-06-15 10:00:00', 2), (10, 2, TIMESTAMP '2024-12-29 20:00:00', 3),
        (11, 3, TIMESTAMP '2024-12-30 01:00:00', 1), (12, 4, TIMESTAMP '2025-01-01 00:00:00', 7)""",
]


def build_ext(db: Path, parquet: Path) -> None:
    """The `x_*` tables into schema main of the shop's DuckDB file, and one Parquet file each."""
    con = duckdb.connect(str(db))
    try:
        for statement in _DATA:
            con.execute(statement)
        for t in EXT_TABLES:
            con.execute(
                f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT parquet)"
            )
    finally:
        con.close()


# ------------------------------------------------------------------------------ the model


def _expr(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


def _datus(payload: dict[str, Any]) -> list[dict[str, str]]:
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def _field(name: str, datatype: str, *, is_time: bool = False, ext: Any = None) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "expression": _expr(name), "datatype": datatype}
    if is_time:
        f["dimension"] = {"is_time": True}
    if ext is not None:
        f["custom_extensions"] = _datus(ext)
    return f


def _dataset(name: str, pk: list[str], fields: list[dict[str, Any]], ext: Any = None) -> dict:
    d: dict[str, Any] = {"name": name, "source": f"main.x_{name}", "primary_key": pk}
    d["fields"] = fields
    if ext is not None:
        d["custom_extensions"] = _datus(ext)
    return d


def _rel(name: str, frm: str, to: str, fc: str, tc: str, ext: Any = None) -> dict[str, Any]:
    r: dict[str, Any] = {
        "name": name,
        "from": frm,
        "to": to,
        "from_columns": [fc],
        "to_columns": [tc],
    }
    if ext is not None:
        r["custom_extensions"] = _datus(ext)
    return r


def _metric(name: str, expression: str, ext: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "expression": _expr(expression)}
    if ext is not None:
        m["custom_extensions"] = _datus(ext)
    return m


def ext_model_text() -> str:
    """The mini shop with every DATUS extension that exists today."""
    not_dim = {"is_dimension": False}
    datasets = [
        _dataset(
            "orders",
            ["order_id"],
            [
                _field("order_id", "Integer", ext=not_dim),
                _field("customer_id", "Integer", ext=not_dim),
                _field("order_date", "Date", is_time=True),
                _field("ship_date", "Date", is_time=True),
                _field("amount", "Decimal"),
                _field("discount", "Decimal"),
                _field("status", "String", ext={"is_dimension": True}),
                _field("channel", "String"),
            ],
            ext={"time_dimension": "order_date"},  # D-TIME: two is_time fields, one primary
        ),
        _dataset(
            "customers",
            ["id"],
            [
                _field("id", "Integer"),
                _field("region", "String"),
                _field("segment", "String"),
            ],
        ),
        _dataset(
            "order_items",
            ["order_id", "line"],
            [
                _field("order_id", "Integer"),
                _field("line", "Integer"),
                _field("product", "String"),
                _field("qty", "Integer"),
                _field("price", "Decimal"),
            ],
        ),
        _dataset(
            "refunds",
            ["refund_id"],
            [
                _field("refund_id", "Integer"),
                _field("order_id", "Integer"),
                # D-GRAIN: refunds are booked monthly
                _field("refund_date", "Date", is_time=True, ext={"time_granularity": "month"}),
                _field("refund_amount", "Decimal"),
            ],
        ),
        _dataset(
            "visits",
            ["visit_id"],
            [
                _field("visit_id", "Integer"),
                _field("customer_id", "Integer"),
                _field("visit_ts", "DateTime", is_time=True),
                _field("pages", "Integer"),
            ],
        ),
    ]
    relationships = [
        _rel(
            "orders_to_customers",
            "orders",
            "customers",
            "customer_id",
            "id",
            {"join_type": "inner"},
        ),
        _rel("items_to_orders", "order_items", "orders", "order_id", "order_id"),
        _rel(
            "refunds_to_orders", "refunds", "orders", "order_id", "order_id", {"join_type": "left"}
        ),
        _rel("visits_to_customers", "visits", "customers", "customer_id", "id"),
    ]
    metrics = [
        _metric("revenue", "SUM(orders.amount)"),
        _metric("order_count", "COUNT(orders.order_id)"),
        _metric("customer_count", "COUNT(DISTINCT customers.id)"),
        _metric(
            "avg_order", "SUM(orders.amount) / COUNT(orders.order_id)", {"fill_nulls_with": -1}
        ),
        _metric(
            "net_revenue",
            "SUM(orders.amount) - SUM(orders.discount)",
        ),
        _metric(
            "discounted",
            "SUM(orders.discount)",
            {"measure": {"name": "disc_sum"}, "requires": ["measure"]},
        ),
        _metric("rev_ship", "SUM(orders.amount)", {"time_dimension": "orders.ship_date"}),
        _metric("units", "SUM(order_items.qty)", {"fill_nulls_with": 0}),
        _metric("line_rows", "COUNT(*)", {"dataset": "order_items"}),
        _metric("refund_total", "SUM(refunds.refund_amount)", {"fill_nulls_with": 0}),
        _metric("refund_count", "COUNT(refunds.refund_id)"),
        _metric("refund_share", "SUM(refunds.refund_amount) / SUM(orders.amount)"),
        _metric("visit_count", "COUNT(visits.visit_id)", {"fill_nulls_with": 0}),
        _metric("pages", "SUM(visits.pages)"),
        _metric(
            "revenue_running",
            "SUM(orders.amount)",
            {"window": {"type": "cumulative", "function": "sum"}},
        ),
        _metric(
            "visits_mom",
            "COUNT(visits.visit_id)",
            {"window": {"type": "pop", "offset": "1 month", "calculation": "delta"}},
        ),
        # D-WINDOW share and streak (DATUS 1.13)
        _metric("revenue_share", "SUM(orders.amount)", {"window": {"type": "share"}}),
        _metric(
            "revenue_share_all",
            "SUM(orders.amount)",
            {"window": {"share": {"partition": {"mode": "none"}}}},
        ),
        _metric(
            "visits_growth",
            "COUNT(visits.visit_id)",
            {"window": {"type": "streak", "compare": "change", "op": ">"}},
        ),
        _metric(
            "revenue_days",
            "SUM(orders.amount)",
            {"window": {"streak": {"op": ">=", "target": 20}}},
        ),
    ]
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "mini_ext",
                "datasets": datasets,
                "relationships": relationships,
                "metrics": metrics,
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------------------------ the matrix


def q(metrics: list[str], *group_by: Any, **kw: Any) -> dict[str, Any]:
    return {"metrics": metrics, "group_by": list(group_by), **kw}


H1 = {"start": "2024-01-01", "end": "2024-07-01"}

EXT_QUERIES: dict[str, dict[str, Any]] = {
    # D-JOIN
    "join-inner-region": q(["revenue", "order_count"], "customers.region"),
    "join-inner-segment-where": q(
        ["revenue", "customer_count"], "customers.segment", where_sql="orders.channel = 'web'"
    ),
    "join-inner-filter-only": q(
        ["revenue"], "orders.channel", where_sql="customers.region = 'east'"
    ),
    "join-inner-multihop": q(["units", "line_rows"], "customers.region"),
    "join-left-refunds": q(["refund_total", "refund_count"], "orders.channel"),
    "join-no-join-needed": q(["revenue", "order_count"]),
    # D-FILL
    "fill-merge-month": q(["revenue", "refund_total", "refund_count"], "metric_time:month"),
    "fill-single-channel": q(["refund_total"], "orders.status"),
    "fill-ratio": q(["avg_order", "refund_share"], "orders.channel"),
    "fill-units-status": q(["units", "revenue"], "orders.status", "orders.channel"),
    # D-TIME
    "time-dataset-month": q(["revenue", "order_count"], "metric_time:month"),
    "time-metric-ship": q(["rev_ship"], "metric_time:month"),
    "time-two-axes": q(["revenue", "rev_ship"], "metric_time:month"),
    "time-two-axes-range": q(
        ["revenue", "rev_ship"], time_range={"start": "2024-02-01", "end": "2024-04-01"}
    ),
    "time-ship-explicit-week": q(["revenue"], "orders.ship_date:week"),
    # D-GRAIN
    "grain-floor-month": q(["refund_total", "refund_count"], "metric_time:month"),
    "grain-floor-quarter": q(["refund_total"], "metric_time:quarter"),
    "grain-floor-year-merge": q(["refund_total", "revenue"], "metric_time:year"),
    # D-DATASET, D-DIM, D-MEASURE
    "dataset-pin-product": q(["line_rows", "units"], "order_items.product"),
    "dataset-pin-status": q(["line_rows"], "orders.status"),
    "measure-named": q(["discounted", "net_revenue", "revenue"], "orders.status"),
    # DATE buckets (orders) merged with TIMESTAMP axes (visits)
    "axes-day": q(["revenue", "visit_count", "pages"], "metric_time:day"),
    "axes-week": q(["revenue", "visit_count"], "metric_time:week"),
    "axes-month": q(["revenue", "visit_count"], "metric_time:month"),
    "axes-quarter": q(["order_count", "visit_count"], "metric_time:quarter"),
    "axes-year": q(["revenue", "visit_count", "refund_total"], "metric_time:year"),
    "axes-day-range": q(
        ["revenue", "visit_count"],
        "metric_time:day",
        time_range={"start": "2024-01-05T12:00:00", "end": "2024-04-01T03:00:00"},
    ),
    "axes-visit-ts-plain": q(["pages"], "visits.visit_ts", time_range=H1),
    "axes-region-month": q(["revenue", "visit_count"], "customers.region", "metric_time:month"),
    "axes-window-mom": q(["visit_count", "visits_mom"], "metric_time:month"),
    "axes-week-ts-range": q(
        ["revenue", "visit_count"],
        "metric_time:week",
        time_range={"start": "2024-01-03T06:00:00", "end": "2024-04-01"},
    ),
    "axes-visit-ts-day": q(["visit_count", "pages"], "visits.visit_ts:day", "customers.segment"),
    "axes-visit-ts-week": q(["visit_count"], "visits.visit_ts:week"),
    "axes-tumble": q(["revenue", "visit_count"], "metric_time:tumble(7 days)", time_range=H1),
    "axes-hop": q(
        ["order_count", "visit_count"],
        "metric_time:hop(2 days, 1 day)",
        time_range={"start": "2024-01-01", "end": "2024-02-05"},
    ),
    "fill-window": q(["revenue_running", "order_count", "avg_order"], "metric_time:quarter"),
    # D-WINDOW share and streak (1.13): a TIMESTAMP axis (visits), NULL regions, gaps
    "window-share": q(["revenue", "revenue_share"], "customers.region", "metric_time:month"),
    "window-share-all-range": q(
        ["revenue_share_all", "visits_mom"], "customers.region", "metric_time:month", time_range=H1
    ),
    "window-streak-week": q(["visit_count", "visits_growth"], "metric_time:week"),
    "window-streak-day": q(
        ["revenue", "revenue_days"], "customers.region", "metric_time:day", time_range=H1
    ),
    # metric filters in where_sql (HAVING semantics after the window stage)
    "mfilter-plain": q(["revenue"], "customers.segment", where_sql="revenue > 60"),
    "mfilter-and-dim": q(
        ["revenue", "order_count"],
        "orders.channel",
        where_sql="revenue >= 50 AND orders.status = 'paid'",
    ),
    "mfilter-or": q(
        ["revenue", "order_count"], "orders.channel", where_sql="(revenue > 100 OR order_count = 1)"
    ),
    "mfilter-merge": q(
        ["revenue", "refund_total"], "metric_time:month", where_sql="refund_total > 0"
    ),
    "mfilter-window": q(
        ["revenue", "revenue_running"], "metric_time:month", where_sql="revenue_running > 200"
    ),
    "mfilter-window-range": q(
        ["visit_count", "visits_mom"],
        "metric_time:month",
        where_sql="visits_mom <> 0",
        time_range=H1,
    ),
    "mfilter-axes-range": q(
        ["revenue", "visit_count"],
        "metric_time:month",
        where_sql="visit_count >= 2 OR revenue > 60",
        time_range=H1,
    ),
    "mfilter-ratio": q(["avg_order", "order_count"], "orders.status", where_sql="avg_order > 35"),
    "mfilter-timestamp-day": q(
        ["visit_count", "pages"], "metric_time:day", where_sql="visit_count >= 2"
    ),
}

SELECTS: dict[str, dict[str, Any]] = {
    "select-orders": {
        "from": "orders",
        "fields": ["orders.order_id", "orders.order_date", "orders.amount", "customers.region"],
        "order_by": [{"key": "order_id", "desc": False}],
    },
    "select-where-limit": {
        "from": "orders",
        "fields": ["orders.order_id", "orders.amount", "customers.segment"],
        "where_sql": "orders.amount > 25",
        "order_by": [{"key": "amount", "desc": True}],
        "limit": 3,
    },
    "select-visits": {
        "from": "visits",
        "fields": ["visits.visit_id", "visits.visit_ts", "visits.pages", "customers.segment"],
        "where_sql": "visits.visit_ts >= TIMESTAMP '2024-01-05 12:00:00'",
        "order_by": [{"key": "visit_ts", "desc": False}],
    },
    "select-date-filter": {
        "from": "orders",
        "fields": ["orders.order_id", "orders.ship_date", "orders.channel", "customers.region"],
        "where_sql": "orders.order_date >= DATE '2024-02-01' AND orders.order_date < "
        "DATE '2024-04-01' AND customers.region IS NULL OR orders.channel = 'store'",
        "order_by": [{"key": "ship_date", "desc": True}],
    },
    "select-nulls-first": {
        "from": "orders",
        "fields": ["orders.order_id", "orders.channel", "orders.discount"],
        "order_by": [
            {"key": "channel", "desc": True, "nulls": "first"},
            {"key": "order_id", "desc": False},
        ],
    },
}

ATTRIBUTIONS: dict[str, dict[str, Any]] = {
    "attr-revenue": {
        "metric": "revenue",
        "current": {"start": "2024-03-01", "end": "2024-05-01"},
        "baseline": {"start": "2024-01-01", "end": "2024-03-01"},
        "dimensions": ["orders.channel", "orders.status"],
    },
    "attr-count-region": {
        "metric": "order_count",
        "current": {"start": "2024-02-01", "end": "2024-04-01"},
        "baseline": {"start": "2024-01-01", "end": "2024-02-01"},
        "dimensions": ["customers.region"],
    },
    "attr-ratio-where": {
        "metric": "avg_order",
        "current": {"start": "2024-03-01", "end": "2025-01-01"},
        "baseline": {"start": "2024-01-01", "end": "2024-03-01"},
        "dimensions": ["orders.channel", "customers.segment"],
        "where_sql": "orders.status = 'paid'",
    },
    "attr-fill-refunds": {
        "metric": "refund_total",
        "current": {"start": "2024-05-01", "end": "2024-06-01"},
        "baseline": {"start": "2024-02-01", "end": "2024-03-01"},
        "dimensions": ["orders.channel"],
    },
    "attr-visits-ts": {
        "metric": "pages",
        "current": {"start": "2024-03-01", "end": "2024-07-01"},
        "baseline": {"start": "2024-01-01", "end": "2024-03-01"},
        "dimensions": ["customers.segment"],
    },
}


def category(name: str) -> str:
    return {
        "join": "D-JOIN",
        "fill": "D-FILL",
        "time": "D-TIME",
        "grain": "D-GRAIN",
        "dataset": "D-DATASET/DIM/MEASURE",
        "measure": "D-DATASET/DIM/MEASURE",
        "axes": "DATE vs TIMESTAMP axes",
        "mfilter": "metric filters",
        "window": "D-WINDOW share / streak",
        "select": "select()",
        "attr": "attribute()",
    }[name.split("-")[0]]
