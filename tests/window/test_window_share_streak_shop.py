"""The share and streak example model (examples/shop/share_streak_model.yaml) over the shop
tables: values against hand-written DuckDB SQL and, for the channel's share of its region,
against the D-LOD metric of the same name in examples/shop/lod_model.yaml (two independent
lowerings of one number). The shop has no orders in February 2024: a gap inside the monthly
series that breaks every run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import Ref, build_shop, norm, same
from test_window_streak import streaked

import dosi

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "shop" / "share_streak_model.yaml"
LOD_MODEL = REPO / "examples" / "shop" / "lod_model.yaml"

YEAR = {"start": "2024-01-01", "end": "2025-01-01"}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="module")
def ref(shop: Path) -> Iterator[Ref]:
    r = Ref(shop)
    yield r
    r.close()


def _rows(model: Path, shop: Path, query: dict[str, Any]) -> list[dict[str, Any]]:
    eng = dosi.Engine(model_path=model)
    try:
        return eng.execute(query, db_path=shop)["rows"]
    finally:
        eng.close()


def _by(rows: list[dict[str, Any]], keys: tuple[str, ...], metric: str) -> dict[Any, Any]:
    return {tuple(norm(r[k]) for k in keys): norm(r[metric]) for r in rows}


def _assert_same(got: dict[Any, Any], want: dict[Any, Any]) -> None:
    assert set(got) == set(want)
    bad = {k: (got[k], want[k]) for k in want if not same(got[k], want[k])}
    assert not bad, bad


def test_channel_share_of_region_three_ways(shop: Path, ref: Ref) -> None:
    """The window share (total across the excluded channel), the D-LOD compose and a
    hand-written windowed SUM agree on every (region, channel) row, the NULL channel
    included."""
    q = {
        "metrics": ["channel_share_of_region"],
        "group_by": ["regions.region_name", "orders.channel"],
        "time_range": YEAR,
    }
    keys = ("region_name", "channel")
    window = _by(_rows(MODEL, shop, q), keys, "channel_share_of_region")
    lod = _by(_rows(LOD_MODEL, shop, q), keys, "channel_share_of_region")
    hand = {
        (r, c): v
        for r, c, v in ref.rows(
            "SELECT g.region_name, o.channel, "
            "CAST(SUM(o.amount) AS DOUBLE) / SUM(SUM(o.amount)) OVER (PARTITION BY g.region_name) "
            "FROM orders o LEFT JOIN customers c ON o.customer_id = c.customer_id "
            "LEFT JOIN regions g ON c.region_id = g.region_id "
            "WHERE o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2025-01-01' "
            "GROUP BY 1, 2"
        )
    }
    _assert_same(window, hand)
    _assert_same(lod, hand)
    assert len(hand) > 8


def test_share_per_quarter_and_of_the_total(shop: Path, ref: Ref) -> None:
    q = {
        "metrics": ["revenue_share", "revenue_share_of_total"],
        "group_by": ["orders.channel", "metric_time:quarter"],
        "time_range": YEAR,
    }
    rows = _rows(MODEL, shop, q)
    keys = ("channel", "metric_time__quarter")
    base = ref.rows(
        "SELECT channel, CAST(date_trunc('quarter', order_date) AS DATE), SUM(amount) "
        "FROM orders WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01' "
        "GROUP BY 1, 2"
    )
    by_q: dict[Any, float] = {}
    for _, quarter, v in base:
        by_q[quarter] = by_q.get(quarter, 0) + v
    grand = sum(v for *_, v in base)
    _assert_same(_by(rows, keys, "revenue_share"), {(c, q_): v / by_q[q_] for c, q_, v in base})
    _assert_same(
        _by(rows, keys, "revenue_share_of_total"), {(c, q_): v / grand for c, q_, v in base}
    )


def test_growth_and_target_streaks(shop: Path, ref: Ref) -> None:
    """Monthly runs against the Python definition over the hand-SQL series; February 2024 has
    no orders, so March 2024 opens no growth run."""
    q = {
        "metrics": ["revenue", "revenue_growth_months", "big_months", "order_growth_streak"],
        "group_by": ["metric_time:month"],
        "time_range": YEAR,
    }
    rows = _rows(MODEL, shop, q)
    series = ref.rows(
        "SELECT CAST(date_trunc('month', order_date) AS DATE), SUM(amount), COUNT(order_id) "
        "FROM orders WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01' "
        "GROUP BY 1"
    )
    revenue = {(m,): v for m, v, _ in series}
    orders = {(m,): n for m, _, n in series}
    assert ("2024-02-01",) not in revenue
    keys = ("metric_time__month",)
    _assert_same(
        _by(rows, keys, "revenue_growth_months"), streaked(revenue, "month", ">", compare="change")
    )
    _assert_same(_by(rows, keys, "big_months"), streaked(revenue, "month", ">=", 90000))
    _assert_same(
        _by(rows, keys, "order_growth_streak"), streaked(orders, "month", ">", compare="change")
    )
    assert _by(rows, keys, "revenue_growth_months")[("2024-03-01",)] == 0
