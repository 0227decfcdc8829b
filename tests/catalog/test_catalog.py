"""Catalog truth (issue 8 item 6): what dimensions() lists is what a query accepts, and
execute() runs the dialect it reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dosi.engine import Engine
from dosi.errors import ExecuteError, QueryError
from dosi.ir.model import GRAINS


def test_dimensions_of_a_metric_start_with_metric_time_and_its_axis(shop: Engine) -> None:
    first = shop.dimensions("revenue_yoy")[0]
    assert first["name"] == "metric_time"
    assert first["time_axis"] == "orders.order_date"
    assert first["is_time"] is True and first["is_dimension"] is True
    assert first["grains"] == ["day", "month", "quarter", "year"]  # 1 year lands on these


def test_metric_without_a_time_axis_lists_no_metric_time(shop: Engine) -> None:
    """items_sold (order_items) has no time axis: metric_time is not offered, and grouping by
    it is refused."""
    assert all(d["name"] != "metric_time" for d in shop.dimensions("items_sold"))
    with pytest.raises(QueryError):
        shop.compile({"metrics": ["items_sold"], "group_by": ["metric_time:month"]})


@pytest.mark.parametrize(
    "metric", ["revenue", "refund_total", "event_count", "revenue_mom", "revenue_yoy"]
)
def test_listed_grains_are_exactly_the_grains_a_query_accepts(shop: Engine, metric: str) -> None:
    """Every grain listed for metric_time compiles; every other grain is refused."""
    listed = shop.dimensions(metric)[0]
    assert listed["name"] == "metric_time"
    for grain in GRAINS:
        query: dict[str, Any] = {"metrics": [metric], "group_by": [f"metric_time:{grain}"]}
        if grain in listed["grains"]:
            shop.compile(query)
        else:
            with pytest.raises(QueryError):
                shop.compile(query)


def test_model_listing_has_one_metric_time_row_per_axis_and_grain_set(shop: Engine) -> None:
    rows = [d for d in shop.dimensions() if d["name"] == "metric_time"]
    named = [m for d in rows for m in d["metrics"]]
    assert len(named) == len(set(named))  # each metric in one row
    for d in rows:
        for m in d["metrics"]:
            assert shop.dimensions(m)[0]["grains"] == d["grains"]
            assert shop.metric(m)["time_dimension"] == d["time_axis"]


def test_execute_runs_the_dialect_it_reports(shop: Engine, shop_db: Path) -> None:
    """execute(dialect="duckdb") on a DuckDB database runs and reports duckdb."""
    res = shop.execute({"metrics": ["revenue"]}, dialect="duckdb", db_path=shop_db)
    assert res["dialect"] == "duckdb" and res["row_count"] == 1


@pytest.mark.parametrize("dialect", ["postgres", "snowflake", "mysql"])
def test_execute_with_another_dialect_is_a_mismatch(
    shop: Engine, shop_db: Path, dialect: str
) -> None:
    """A dialect the connection does not run is refused (before, DuckDB SQL ran and the
    result claimed the requested dialect); compile() stays the way to get that SQL."""
    with pytest.raises(ExecuteError) as info:
        shop.execute({"metrics": ["revenue"]}, dialect=dialect, db_path=shop_db)
    err = info.value
    assert err.code == "dialect_mismatch"
    assert dialect in err.message and "duckdb" in err.message
    assert err.candidates == ["duckdb"]
    assert "compile" in (err.hint or "")
    assert shop.compile({"metrics": ["revenue"]}, dialect=dialect)["dialect"] == dialect


def test_execute_with_an_unknown_dialect_is_unknown_dialect(shop: Engine, shop_db: Path) -> None:
    with pytest.raises(QueryError) as info:
        shop.execute({"metrics": ["revenue"]}, dialect="nosuch", db_path=shop_db)
    assert info.value.code == "unknown_dialect"
