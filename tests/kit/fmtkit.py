"""The D-FORMAT matrix of the conformance suite (issue 12): one fact table whose time lives in
the columns warehouses really use (string and integer day keys, a DECIMAL(8,0) key, integer
month keys, `%Y-%m` strings, a year column, a `%Y年%m月%d日` column, an hour key, ISO strings,
`%Y/%m/%d`), each declared with a DATUS `time` block, loaded into every engine beside the shop.

Every stored value describes the same instant of its row (`ts`), so hand-written SQL over `ts`
gives the expected numbers (tests/time_format/test_time_format.py checks DuckDB against
it; the conformance test compares every other engine with DuckDB, value by value).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

FMT_TABLES = ("f_events",)

# (id, ts, amount, user): the ground truth every encoded column is derived from. Row 9 has
# no time at all (NULL in every time column).
ROWS = [
    (1, "2024-01-05 12:00:00", 10.0, "a"),
    (2, "2024-01-31 00:00:00", 20.0, "b"),
    (3, "2024-02-01 23:00:00", 30.0, "a"),
    (4, "2024-03-15 01:00:00", 40.0, "c"),
    (5, "2024-12-31 23:00:00", 5.0, "b"),
    (6, "2025-01-01 00:00:00", 50.0, "a"),
    (7, "2025-02-28 10:00:00", 60.0, "d"),
    (8, "2025-12-31 23:00:00", 70.0, "c"),
    (9, None, 1.0, "e"),
]

# column -> (SQL type, DuckDB expression of `ts` giving the stored value, datatype, format)
COLUMNS: dict[str, tuple[str, str, str, str]] = {
    "ds": ("VARCHAR", "strftime(ts, '%Y%m%d')", "String", "%Y%m%d"),
    "di": ("INTEGER", "CAST(strftime(ts, '%Y%m%d') AS INTEGER)", "Integer", "%Y%m%d"),
    "dd": ("DECIMAL(8,0)", "CAST(strftime(ts, '%Y%m%d') AS DECIMAL(8,0))", "Integer", "%Y%m%d"),
    "dm": ("INTEGER", "CAST(strftime(ts, '%Y%m') AS INTEGER)", "Integer", "%Y%m"),
    "dms": ("VARCHAR", "strftime(ts, '%Y-%m')", "String", "%Y-%m"),
    "dy": ("VARCHAR", "strftime(ts, '%Y')", "String", "%Y"),
    "dyi": ("INTEGER", "CAST(strftime(ts, '%Y') AS INTEGER)", "Integer", "%Y"),
    "dc": (
        "VARCHAR",
        "strftime(ts, '%Y') || '年' || strftime(ts, '%m') || '月' || strftime(ts, '%d') || '日'",
        "String",
        "%Y年%m月%d日",
    ),
    "dh": ("BIGINT", "CAST(strftime(ts, '%Y%m%d%H') AS BIGINT)", "Integer", "%Y%m%d%H"),
    "dx": ("VARCHAR", "strftime(ts, '%Y-%m-%d')", "String", "%Y-%m-%d"),
    "dsl": ("VARCHAR", "strftime(ts, '%Y/%m/%d')", "String", "%Y/%m/%d"),
    "dts": ("VARCHAR", "strftime(ts, '%Y-%m-%d %H:%M:%S')", "String", "%Y-%m-%d %H:%M:%S"),
    "dpc": ("VARCHAR", "'%' || strftime(ts, '%Y%m%d')", "String", "%%%Y%m%d"),
}


def data_statements() -> list[str]:
    """DDL and rows of `f_events` (the stored columns computed from `ts` by DuckDB)."""
    cols = ", ".join(f"{c} {t}" for c, (t, *_rest) in COLUMNS.items())
    values = ", ".join(
        f"({i}, {'NULL' if at is None else repr(at)}::TIMESTAMP, {amt}, '{user}')"
        for i, at, amt, user in ROWS
    )
    derived = ", ".join(f"{expr} AS {c}" for c, (_, expr, *_r) in COLUMNS.items())
    return [
        f"CREATE TABLE f_events (id INTEGER, ts TIMESTAMP, amount DOUBLE, user_id VARCHAR, {cols})",
        f"INSERT INTO f_events SELECT id, ts, amount, user_id, {derived} "
        f"FROM (VALUES {values}) AS v(id, ts, amount, user_id)",
    ]


def build_fmt(db: Path, parquet: Path | None) -> None:
    """`f_events` into schema main of a DuckDB file (and one Parquet file)."""
    con = duckdb.connect(str(db))
    try:
        for statement in data_statements():
            con.execute(statement)
        if parquet is not None:
            for t in FMT_TABLES:
                con.execute(
                    f"COPY main.{t} TO '{(parquet / f'{t}.parquet').as_posix()}' (FORMAT parquet)"
                )
    finally:
        con.close()


def _expr(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


def _time(fmt: str) -> list[dict[str, str]]:
    payload = {"v": "1.6", "requires": ["time"], "time": {"format": fmt}}
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def fmt_model_doc(source: str = "main.f_events", axis: str = "ds") -> dict[str, Any]:
    """One dataset, every stored column a D-FORMAT time field; `axis` is the primary time."""
    fields: list[dict[str, Any]] = [
        {"name": "id", "expression": _expr("id"), "datatype": "Integer"},
        {"name": "amount", "expression": _expr("amount"), "datatype": "Float"},
        {"name": "user_id", "expression": _expr("user_id"), "datatype": "String"},
    ]
    for c, (_t, _e, datatype, fmt) in COLUMNS.items():
        fields.append(
            {
                "name": c,
                "expression": _expr(c),
                "datatype": datatype,
                "dimension": {"is_time": True},
                "custom_extensions": _time(fmt),
            }
        )
    dataset = {
        "name": "ev",
        "source": source,
        "primary_key": ["id"],
        "fields": fields,
        "custom_extensions": [
            {"vendor_name": "DATUS", "data": json.dumps({"v": "1.6", "time_dimension": axis})}
        ],
    }
    window = {"type": "pop", "offset": "1 month", "calculation": "delta"}
    metrics = [
        {"name": "revenue", "expression": _expr("SUM(ev.amount)")},
        {"name": "events", "expression": _expr("COUNT(*)")},
        {"name": "users", "expression": _expr("COUNT(DISTINCT ev.user_id)")},
        {
            "name": "revenue_mom",
            "expression": _expr("SUM(ev.amount)"),
            "custom_extensions": [
                {"vendor_name": "DATUS", "data": json.dumps({"v": "1.6", "window": window})}
            ],
        },
    ]
    return {
        "version": "0.2.0.dev0",
        "semantic_model": [{"name": "fmt", "datasets": [dataset], "metrics": metrics}],
    }


def fmt_model_text(source: str = "main.f_events", axis: str = "ds") -> str:
    return yaml.safe_dump(fmt_model_doc(source, axis), sort_keys=False, allow_unicode=True)


def q(metrics: list[str], *group_by: str, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"metrics": metrics, "group_by": list(group_by)}
    out.update(kw)
    return out


def _range(dim: str, start: str, end: str) -> dict[str, str]:
    return {"dimension": f"ev.{dim}", "start": start, "end": end}


# the grains each column may be grouped by (never finer than its layout: FMT-GRP-01)
GRAINS = {
    "ds": ("day", "week", "month", "quarter", "year"),
    "di": ("day", "month", "year"),
    "dd": ("day", "quarter"),
    "dm": ("month", "quarter", "year"),
    "dms": ("month", "year"),
    "dy": ("year",),
    "dyi": ("year",),
    "dc": ("day", "month", "year"),
    "dh": ("day", "week", "month"),
    "dx": ("day", "month"),
    "dsl": ("day", "year"),
    "dts": ("day", "month"),
    "dpc": ("day", "month"),
}

FMT_QUERIES: dict[str, dict[str, Any]] = {}
for _c, _grains in GRAINS.items():
    FMT_QUERIES[f"{_c}_raw"] = q(["revenue", "events"], f"ev.{_c}")
    for _g in _grains:
        FMT_QUERIES[f"{_c}_{_g}"] = q(["revenue", "users"], f"ev.{_c}:{_g}")
FMT_QUERIES.update(
    {
        "range_ds": q(["revenue"], time_range=_range("ds", "2024-01-31", "2025-01-01")),
        "range_di": q(
            ["revenue"], "ev.di:month", time_range=_range("di", "2024-02-01", "2025-03-01")
        ),
        "range_dd": q(["revenue"], time_range=_range("dd", "2024-01-06", "2025-12-31")),
        "range_dm": q(["revenue"], "ev.dm", time_range=_range("dm", "2024-02-01", "2025-02-01")),
        "range_dms": q(["events"], time_range=_range("dms", "2024-03-01", "2025-03-01")),
        "range_dy": q(["revenue"], "ev.dy", time_range=_range("dy", "2025-01-01", "2026-01-01")),
        "range_dyi": q(["revenue"], time_range=_range("dyi", "2024-01-01", "2025-01-01")),
        "range_dc": q(
            ["revenue"], "ev.dc:month", time_range=_range("dc", "2024-01-31", "2024-12-31")
        ),
        "range_dh": q(["revenue"], time_range=_range("dh", "2024-02-02", "2025-01-01")),
        "range_dts": q(["revenue"], time_range=_range("dts", "2024-02-02", "2025-12-31")),
        "range_open_start": q(["revenue"], time_range={"dimension": "ev.dm", "end": "2025-01-01"}),
        "metric_time_month": q(["revenue", "events"], "metric_time:month"),
        "metric_time_range": q(
            ["revenue"],
            "metric_time:quarter",
            time_range={"start": "2024-01-01", "end": "2025-07-01"},
        ),
        "mom": q(
            ["revenue", "revenue_mom"],
            "metric_time:month",
            time_range={"start": "2024-02-01", "end": "2025-03-01"},
        ),
        "mixed": q(["revenue"], "ev.dm", "ev.dy:year", "ev.user_id"),
        "two_layouts": q(
            ["events"], "ev.dc:year", "ev.dh:month", order_by=[{"key": "events", "desc": True}]
        ),
    }
)
