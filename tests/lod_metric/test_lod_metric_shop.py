"""D-LOD metrics in the shop example (examples/shop/lod_model.yaml over the shop tables): "share of the region's total" (a compose over an
exclude metric), all-time revenue before dimension filters (keyless fixed) and revenue per
customer within each row (include); expected values from hand-written SQL over the shop tables
(datus-extensions §3 D-LOD; CHECKLIST LOD-REL-02/08/10, LOD-FXM-02/04).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from enginekit import Ref, assert_rows_equal, result_rows

import dosi
from dosi.errors import ModelError

LOD_MODEL = Path(__file__).resolve().parents[2] / "examples" / "shop" / "lod_model.yaml"


@pytest.fixture(scope="module")
def lod_shop(shop_db: Path) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    eng = dosi.Engine(model_path=str(LOD_MODEL))
    yield lambda q: eng.execute(q, db_path=shop_db)
    eng.close()


_ORDERS_BY_REGION = """
    FROM orders o
    LEFT JOIN customers c ON o.customer_id = c.customer_id
    LEFT JOIN regions r ON c.region_id = r.region_id
"""


def test_share_of_the_regions_total(lod_shop, shop_ref: Ref) -> None:
    """Each channel's share of its region's revenue in 2024: the denominator is the region's
    total over every channel, attached to each (region, channel) row."""
    res = lod_shop(
        {
            "metrics": ["revenue", "revenue_region_total", "channel_share_of_region"],
            "group_by": ["regions.region_name", "orders.channel"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        }
    )
    want = shop_ref.rows(
        f"""
        WITH v AS (SELECT r.region_name, o.channel, SUM(o.amount) AS rev {_ORDERS_BY_REGION}
                   WHERE o.order_date >= DATE '2024-01-01' AND o.order_date < DATE '2025-01-01'
                   GROUP BY 1, 2)
        SELECT region_name, channel, rev,
               SUM(rev) OVER (PARTITION BY region_name),
               rev / SUM(rev) OVER (PARTITION BY region_name)
        FROM v
        """
    )
    assert_rows_equal(result_rows(res), want)
    # every region's shares add up to 1
    shares: dict[object, float] = {}
    for row in res["rows"]:
        key = row["region_name"]
        shares[key] = shares.get(key, 0.0) + row["channel_share_of_region"]
    assert all(abs(v - 1.0) < 1e-9 for v in shares.values())


def test_all_time_revenue_ignores_dimension_filters(lod_shop, shop_ref: Ref) -> None:
    res = lod_shop(
        {
            "metrics": ["revenue", "revenue_all_time"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.status = 'completed'",
        }
    )
    want = shop_ref.rows(
        "SELECT channel, SUM(amount), (SELECT SUM(amount) FROM orders) FROM orders "
        "WHERE status = 'completed' GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), want)


def test_revenue_per_customer_within_the_row(lod_shop, shop_ref: Ref) -> None:
    res = lod_shop(
        {
            "metrics": ["revenue_per_customer"],
            "group_by": ["metric_time:quarter"],
            "where_sql": "orders.status = 'completed'",
        }
    )
    want = shop_ref.rows(
        "SELECT q, AVG(s) FROM (SELECT CAST(DATE_TRUNC('quarter', order_date) AS DATE) AS q, customer_id, "
        "SUM(amount) AS s FROM orders WHERE status = 'completed' GROUP BY 1, 2) GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), want)


def test_basic_mode_refuses_the_lod_metrics() -> None:
    """LOD-BAS-02: basic mode fails closed on every D-LOD metric and the compose over one."""
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_path=str(LOD_MODEL), mode="basic")
    codes = {(d.code, d.path) for d in err.value.issues}
    assert codes == {
        ("nested_aggregate", f"metrics[{n}]")
        for n in (
            "revenue_region_total",
            "channel_share_of_region",
            "revenue_all_time",
            "revenue_per_customer",
        )
    }
