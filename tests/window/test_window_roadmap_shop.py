"""The 1.14 example model (examples/shop/window_roadmap_model.yaml) over the shop tables: the
documented metrics against the shop's monthly series read by hand-written DuckDB SQL and
windowed in plain Python (roadmap_ref). The shop has no orders in February 2024, a gap the
frames step over. CHECKLIST: WIN-FRM-01, WIN-FRM-15, WIN-QRY-05, WIN-VAL-01."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import Ref, build_shop
from roadmap_ref import framed, navigate
from wm_common import assert_series

import dosi

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "shop" / "window_roadmap_model.yaml"
RANGE = {"start": "2024-01-01", "end": "2024-07-01"}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="module")
def ref(shop: Path) -> Iterator[Ref]:
    r = Ref(shop)
    yield r
    r.close()


def _monthly(ref: Ref, expr: str, start: str | None = None) -> dict[tuple[str], Any]:
    where = f"WHERE order_date >= DATE '{start}'" if start else ""
    rows = ref.rows(
        f"SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) AS m, {expr} FROM main.orders "
        f"{where} GROUP BY 1"
    )
    return {(str(m)[:10],): None if v is None else float(v) for m, v in rows}


def _query(shop: Path, metrics: list[str], **kw: Any) -> dict[str, dict[tuple[str], Any]]:
    eng = dosi.Engine(model_path=MODEL)
    try:
        rows = eng.execute(
            {"metrics": metrics, "group_by": ["metric_time:month"], **kw}, db_path=shop
        )["rows"]
    finally:
        eng.close()
    return {m: {(str(r["metric_time__month"])[:10],): r[m] for r in rows} for m in metrics}


def test_documented_frames_over_the_shop(shop: Path, ref: Ref) -> None:
    """The d-window page's query: centered, forward, neighbour (exclusion), median,
    percentile and regression frames under the range Jan-Jul 2024."""
    revenue = _monthly(ref, "SUM(amount)", RANGE["start"])
    orders = _monthly(ref, "COUNT(order_id)", RANGE["start"])
    names = [
        "revenue_centered_3m",
        "revenue_next_2m",
        "revenue_vs_neighbours",
        "revenue_median_5m",
        "revenue_p90_6m",
        "revenue_per_order_trend",
    ]
    got = _query(shop, names, time_range=RANGE)
    want = {
        "revenue_centered_3m": framed(revenue, "avg", 1, 1, partition=lambda k: ()),
        "revenue_next_2m": framed(revenue, "sum", 0, 2, partition=lambda k: ()),
        "revenue_vs_neighbours": framed(
            revenue, "avg", 1, 1, exclusion="current_row", partition=lambda k: ()
        ),
        "revenue_median_5m": framed(revenue, "median", 2, 2, partition=lambda k: ()),
        "revenue_p90_6m": framed(
            revenue, "percentile_cont", 5, 0, fraction=0.9, partition=lambda k: ()
        ),
        "revenue_per_order_trend": framed(
            revenue, "regr_slope", 5, 0, second=orders, partition=lambda k: ()
        ),
    }
    for m in names:
        expected = {k: v for k, v in want[m].items() if k[0] < RANGE["end"]}
        assert_series(got[m], expected, m)
    assert got["revenue_centered_3m"][("2024-06-01",)] == pytest.approx(73017.266667)


def test_last_store_revenue_ignores_null_months(shop: Path, ref: Ref) -> None:
    """`ignore_nulls`: the last month with store revenue, over months without any."""
    store = _monthly(ref, "SUM(CASE WHEN channel = 'store' THEN amount END)")
    got = _query(shop, ["last_store_revenue"])["last_store_revenue"]
    assert_series(got, navigate(store, "last_value", ignore_nulls=True, partition=lambda k: ()))
