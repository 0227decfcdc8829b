"""A window metric beside metrics of another fact dataset (issue 10, proof of composability):
the branches merge on the group-by keys, then the window stage reads the merged series, so a
month only the other dataset has is a row of the frame with its base NULL (as the reference
engine answers). Expected values come from hand-written SQL over the shop example DB (the shop
has refunds but no orders in 2024-02)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from enginekit import Ref

from dosi.engine import Engine

MERGED = """
WITH o AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) AS m, SUM(amount) AS rev
           FROM main.orders GROUP BY 1),
     r AS (SELECT CAST(DATE_TRUNC('month', refund_date) AS DATE) AS m,
                  SUM(refund_amount) AS ref, COUNT(refund_id) AS n
           FROM main.refunds GROUP BY 1),
     k AS (SELECT m FROM o UNION SELECT m FROM r),
     j AS (SELECT k.m, o.rev, r.ref, r.n FROM k LEFT JOIN o ON o.m = k.m LEFT JOIN r ON r.m = k.m)
SELECT j.m, j.rev,
       CAST(j.rev - p.rev AS DOUBLE) / NULLIF(p.rev, 0) AS mom,
       AVG(j.rev) OVER (ORDER BY j.m ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS roll3,
       SUM(j.rev) OVER (ORDER BY j.m ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run,
       COALESCE(j.ref, 0) AS ref, COALESCE(j.n, 0) AS n
FROM j LEFT JOIN j AS p ON p.m = j.m - INTERVAL 1 MONTH
ORDER BY j.m
"""


def _num(v: Any) -> Any:
    return float(v) if isinstance(v, Decimal) else v


def _rows(rows: list[dict[str, Any]], cols: list[str]) -> list[tuple[Any, ...]]:
    return [tuple(_num(r[c]) for c in cols) for r in rows]


def _expected(ref: Ref, cols: list[int], start: str | None = None, end: str | None = None):
    out = []
    for row in ref.con.execute(MERGED).fetchall():
        m = row[0]
        if start is not None and m < dt.date.fromisoformat(start):
            continue
        if end is not None and m >= dt.date.fromisoformat(end):
            continue
        out.append((m.isoformat(), *(_num(row[i]) for i in cols)))
    return out


def _same(actual: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a[0] == e[0]
        for x, y in zip(a[1:], e[1:], strict=True):
            assert (x is None and y is None) or x == pytest.approx(y, rel=1e-9), (a, e)


def test_window_metric_beside_another_fact_dataset(shop: Engine, shop_db: Any, shop_ref: Ref):
    """`revenue, revenue_mom, refund_total` by month: not_implemented before issue 10."""
    q = {"metrics": ["revenue", "revenue_mom", "refund_total"], "group_by": ["metric_time:month"]}
    out = shop.execute(q, db_path=shop_db)
    assert out["columns"] == ["metric_time__month", "revenue", "revenue_mom", "refund_total"]
    actual = _rows(out["rows"], out["columns"])
    _same([(str(a[0]), *a[1:]) for a in actual], _expected(shop_ref, [1, 2, 5]))


def test_frames_read_the_merged_series(shop: Engine, shop_db: Any, shop_ref: Ref) -> None:
    """A month with refunds and no orders (2024-02) is a row of the rolling / running frame."""
    q = {
        "metrics": ["revenue_rolling_3m", "revenue_running", "refund_count"],
        "group_by": ["metric_time:month"],
    }
    out = shop.execute(q, db_path=shop_db)
    actual = [(str(a[0]), *a[1:]) for a in _rows(out["rows"], out["columns"])]
    _same(actual, _expected(shop_ref, [3, 4, 6]))
    feb = next(a for a in actual if a[0] == "2024-02-01")
    assert feb[1] is not None and feb[3] > 0


def test_time_range_widens_every_branch_then_trims(
    shop: Engine, shop_db: Any, shop_ref: Ref
) -> None:
    """WIN-OFF-05 lookback across the merge: 2024-04's month-over-month reads 2024-03 (in
    range) and 2024-03's reads the empty 2024-02; the trim keeps exactly the range."""
    q = {
        "metrics": ["revenue", "revenue_mom", "refund_total"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    }
    out = shop.execute(q, db_path=shop_db)
    actual = [(str(a[0]), *a[1:]) for a in _rows(out["rows"], out["columns"])]
    _same(actual, _expected(shop_ref, [1, 2, 5], "2024-03-01", "2024-07-01"))


def test_explain_shows_the_window_above_the_merge(shop: Engine) -> None:
    text = shop.explain(
        {"metrics": ["revenue", "revenue_mom", "refund_total"], "group_by": ["metric_time:month"]}
    )
    lines = text.splitlines()
    window = next(i for i, x in enumerate(lines) if x.strip().startswith("Window "))
    merge = next(i for i, x in enumerate(lines) if x.strip().startswith("Merge "))
    assert window < merge  # the root is printed first: the window reads the merge


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite"])
def test_merge_strategy_is_the_dialects(shop: Engine, dialect: str) -> None:
    """Dialects without a NULL-safe FULL JOIN merge through the UNION of the branch keys."""
    sql = shop.compile(
        {"metrics": ["revenue", "revenue_mom", "refund_total"], "group_by": ["metric_time:month"]},
        dialect=dialect,
    )["sql"]
    assert "merge_keys" in sql and "FULL" not in sql.upper().replace("FULL_", "")
