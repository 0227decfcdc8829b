"""A small gappy sales table, its model, and plain-Python expectations for the densify tests.

Expected values never come from dosi: `calendar_buckets` walks the calendar with `datetime`,
`bucket_sums` sums the hand-written rows per bucket.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from enginekit import dataset, datus, field, make_db, metric, model_doc, to_yaml

D = dt.date
# (sale_id, sale_date, region, amount): January, March and June 2024 have sales; February,
# April and May none; west sells in January and June only
SALES: tuple[tuple[int, dt.date, str, Decimal], ...] = (
    (1, D(2024, 1, 5), "east", Decimal(10)),
    (2, D(2024, 1, 20), "west", Decimal(5)),
    (3, D(2024, 3, 2), "east", Decimal(7)),
    (4, D(2024, 6, 11), "west", Decimal(3)),
    (5, D(2024, 6, 30), "east", Decimal(1)),
)


def sales_statements(rows: Iterable[tuple[int, dt.date, str, Decimal]] = SALES) -> list[str]:
    values = ", ".join(
        f"({i}, DATE '{d.isoformat()}', '{r}', {a})" for i, d, r, a in rows
    )
    out = ["CREATE TABLE sales (sale_id INTEGER, sale_date DATE, region VARCHAR, amount DECIMAL(10,2))"]
    if values:
        out.append(f"INSERT INTO sales VALUES {values}")
    # the model's time-spine table: one row per day of 2023-2025
    out.append(
        "CREATE TABLE cal AS SELECT CAST(range AS DATE) AS d "
        "FROM range(DATE '2023-01-01', DATE '2026-01-01', INTERVAL 1 DAY)"
    )
    return out


def build(path: Path, rows: Iterable[tuple[int, dt.date, str, Decimal]] = SALES) -> Path:
    return make_db(path, sales_statements(rows))


def _w(window: dict[str, Any]) -> dict[str, Any]:
    return {"v": "1.3", "window": window}


def model_text(settings: dict[str, Any] | None = None) -> str:
    """The sales model; `settings` is the semantic model's DOSI entry (densify, time_spine)."""
    doc = model_doc(
        [
            dataset(
                "sales",
                [
                    field("sale_id", datatype="Integer"),
                    field("sale_date", datatype="Date", is_time=True),
                    field("region", datatype="String"),
                    field("amount", datatype="Decimal"),
                ],
                primary_key=["sale_id"],
            ),
            dataset("cal", [field("d", datatype="Date", is_time=True)], primary_key=["d"]),
        ],
        metrics=[
            metric("revenue", "SUM(sales.amount)"),
            metric("sales_count", "COUNT(sales.sale_id)"),
            metric("revenue_or_zero", "SUM(sales.amount)", {"v": "1.3", "fill_nulls_with": 0}),
            metric("rev_roll3", "SUM(sales.amount)", _w({"type": "rolling", "function": "sum", "periods": 3})),
            metric("count_roll3", "COUNT(sales.sale_id)", _w({"type": "rolling", "function": "sum", "periods": 3})),
            metric(
                "rev_mom",
                "SUM(sales.amount)",
                _w({"type": "pop", "offset": "1 month", "calculation": "value"}),
            ),
            metric("rev_run", "SUM(sales.amount)", _w({"type": "cumulative", "function": "sum"})),
            metric("count_run", "COUNT(sales.sale_id)", _w({"type": "cumulative", "function": "sum"})),
            metric(
                "rev_ytd",
                "SUM(sales.amount)",
                _w({"type": "cumulative", "function": "sum", "reset": "year"}),
            ),
        ],
    )
    if settings is not None:
        doc["semantic_model"][0]["custom_extensions"] = datus(json.dumps(settings), vendor="DOSI")
    return to_yaml(doc)


# ------------------------------------------------------------------------------ the calendar


def bucket(d: dt.date, grain: str) -> dt.date:
    """The first day of the `grain` bucket holding `d` (ISO weeks start on Monday)."""
    if grain == "day":
        return d
    if grain == "week":
        return d - dt.timedelta(days=d.weekday())
    if grain == "month":
        return d.replace(day=1)
    if grain == "quarter":
        return D(d.year, (d.month - 1) // 3 * 3 + 1, 1)
    return D(d.year, 1, 1)


def next_bucket(b: dt.date, grain: str) -> dt.date:
    if grain == "day":
        return b + dt.timedelta(days=1)
    if grain == "week":
        return b + dt.timedelta(days=7)
    months = {"month": 1, "quarter": 3, "year": 12}[grain]
    y, m = divmod(b.month - 1 + months, 12)
    return D(b.year + y, m + 1, 1)


def calendar_buckets(start: dt.date, end: dt.date, grain: str) -> list[dt.date]:
    """Every bucket from the one holding `start` up to the ones starting before `end`."""
    out, b = [], bucket(start, grain)
    while b < end:
        out.append(b)
        b = next_bucket(b, grain)
    return out


def bucket_sums(
    rows: Sequence[tuple[int, dt.date, str, Decimal]],
    grain: str,
    start: dt.date | None = None,
    end: dt.date | None = None,
    by_region: bool = False,
) -> dict[Any, tuple[float, int]]:
    """(sum of amount, count of sales) per bucket (and region) of the rows in [start, end)."""
    out: dict[Any, tuple[float, int]] = {}
    for _, d, region, amount in rows:
        if (start is not None and d < start) or (end is not None and d >= end):
            continue
        key: Any = (bucket(d, grain), region) if by_region else bucket(d, grain)
        s, n = out.get(key, (0.0, 0))
        out[key] = (s + float(amount), n + 1)
    return out
