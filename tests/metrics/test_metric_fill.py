"""D-FILL `fill_nulls_with` (issue 3): COALESCE of the metric output in merge and
single-branch plans; overrides the count default; never applied to a measure in a ratio.

Requirement IDs: FILL-01..05, FILL-08, FILL-09 (basic: see tests/ext/test_ext_engine_modes.py).

Mini data by month: orders in 2024-01..04, refunds in 2024-02 and 2024-05 only, so
2024-01/03/04 exist only in the orders branch and 2024-05 only in the refunds branch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import by_key, metric, mini_yaml

from dosi.engine import Engine
from dosi.errors import ModelError

ONLY_ORDERS = ("2024-01-01", "2024-03-01", "2024-04-01")
ONLY_REFUNDS = "2024-05-01"
BOTH = "2024-02-01"
MONTH = {"group_by": ["metric_time:month"]}


def monthly(run: Callable[..., Any], *metrics: str) -> dict[Any, dict[str, Any]]:
    return by_key(run({"metrics": list(metrics), **MONTH}), "metric_time__month")


def test_fill_04_merge_plan_fills_the_missing_groups(
    mini_engine: Callable[..., Any], mini_run: Callable[..., Any]
) -> None:
    """FILL-04: refund_total with fill 0 reads 0 (not NULL) in months without refunds; months
    with refunds keep their values."""
    _, run = mini_engine(metric_ext={"refund_total": {"fill_nulls_with": 0}})
    filled = monthly(run, "revenue", "refund_total")
    plain = monthly(mini_run, "revenue", "refund_total")
    for m in ONLY_ORDERS:
        assert plain[m]["refund_total"] is None
        assert filled[m]["refund_total"] == 0
    assert filled[BOTH]["refund_total"] == plain[BOTH]["refund_total"] == 70.0
    assert filled[ONLY_REFUNDS]["refund_total"] == 15.0


def test_fill_04_single_branch_plan_fills_the_metric_null(
    mini_engine: Callable[..., Any], mini_ref: Any
) -> None:
    """FILL-04: in a one-branch plan the fill wraps the aggregate: order 7 (amount NULL) makes
    SUM NULL on 2024-04-15, which reads 0."""
    engine, run = mini_engine(metric_ext={"revenue": {"fill_nulls_with": 0}})
    q = {"metrics": ["revenue"], "group_by": ["orders.order_date"]}
    rows = by_key(run(q), "order_date")
    assert mini_ref.scalar("SELECT SUM(amount) FROM orders WHERE order_date = '2024-04-15'") is None
    assert rows["2024-04-15"]["revenue"] == 0
    assert rows["2024-01-05"]["revenue"] == 100.0
    assert "COALESCE(" in engine.compile(q)["sql"].upper()


def test_fill_03_overrides_the_count_default(mini_engine: Callable[..., Any]) -> None:
    """FILL-03: an explicit fill on a COUNT metric wins over the S-FAN-6 zero."""
    _, run = mini_engine(metric_ext={"refund_count": {"fill_nulls_with": 7}})
    rows = monthly(run, "revenue", "refund_count")
    assert [rows[m]["refund_count"] for m in ONLY_ORDERS] == [7, 7, 7]
    assert rows[BOTH]["refund_count"] == 1
    assert rows[ONLY_REFUNDS]["refund_count"] == 2


def test_fill_03_applies_to_a_ratio_output(mini_engine: Callable[..., Any]) -> None:
    """FILL-03/05: a filled ratio reads the fill where it would be NULL, and its real value
    (refund 70 / revenue 70 = 1.0) elsewhere."""
    _, run = mini_engine(metric_ext={"refund_share": {"fill_nulls_with": -1.5}})
    rows = monthly(run, "refund_share")
    assert rows[BOTH]["refund_share"] == 1.0
    assert [rows[m]["refund_share"] for m in (*ONLY_ORDERS, ONLY_REFUNDS)] == [-1.5] * 4


def test_fill_03_applies_to_an_expression_output(mini_engine: Callable[..., Any]) -> None:
    """FILL-03: any metric kind, here an expression over two branches."""
    _, run = mini_engine(
        extra_metrics=[
            metric("gross_minus_refunds", "SUM(orders.amount) - SUM(refunds.refund_amount)")
        ],
        metric_ext={"gross_minus_refunds": {"fill_nulls_with": 0}},
    )
    rows = monthly(run, "gross_minus_refunds")
    assert rows[BOTH]["gross_minus_refunds"] == 0.0  # 70 - 70, a real value
    assert [rows[m]["gross_minus_refunds"] for m in (*ONLY_ORDERS, ONLY_REFUNDS)] == [0, 0, 0, 0]


def test_fill_05_fill_on_a_metric_never_reaches_a_ratio_sharing_its_measure(
    mini_engine: Callable[..., Any],
) -> None:
    """FILL-05: revenue (fill 0) and avg_order share the measure SUM(orders.amount); only the
    revenue output is filled — avg_order in May stays NULL instead of 0 / 0 or 0 / NULL."""
    _, run = mini_engine(
        metric_ext={"revenue": {"fill_nulls_with": 0}, "order_count": {"fill_nulls_with": 0}}
    )
    rows = monthly(run, "revenue", "order_count", "avg_order", "refund_share", "refund_total")
    may = rows[ONLY_REFUNDS]
    assert (may["revenue"], may["order_count"]) == (0, 0)
    assert may["avg_order"] is None
    assert may["refund_share"] is None  # 15 / NULL, not 15 / 0 and not inf


def test_fill_05_filled_ratio_is_still_null_safe(mini_engine: Callable[..., Any]) -> None:
    """FILL-05: to fill a ratio, fill the ratio; its zero denominator still gives the fill,
    never inf (discount_rate for `refunded`: SUM(discount) = 0)."""
    _, run = mini_engine(metric_ext={"discount_rate": {"fill_nulls_with": 0}})
    rows = by_key(run({"metrics": ["discount_rate"], "group_by": ["orders.status"]}), "status")
    assert rows["refunded"]["discount_rate"] == 0
    assert rows["paid"]["discount_rate"] == pytest.approx(240 / 10)


def test_fill_04_shop_refund_total_in_months_without_refunds(
    shop_run: Callable[..., Any], shop_ref: Any
) -> None:
    """FILL-04 on the shop model (refund_total has fill 0): 2023-05 and 2024-10 have orders
    but no refunds, so refund_total reads 0 there."""
    res = shop_run({"metrics": ["revenue", "refund_total"], **MONTH})
    rows = by_key(res, "metric_time__month")
    for month in ("2023-05-01", "2024-10-01"):
        assert rows[month]["refund_total"] == 0
        assert [(rows[month]["revenue"],)] == shop_ref.exact(
            "SELECT SUM(amount) FROM main.orders "
            f"WHERE DATE_TRUNC('month', order_date) = DATE '{month[:10]}'"
        )


@pytest.mark.parametrize("value", ["zero", "0", True, [0], {"v": 0}])
def test_fill_08_non_number_is_invalid(value: Any) -> None:
    """FILL-08: the value must be a JSON number."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(metric_ext={"revenue": {"fill_nulls_with": value}}))
    assert [(d.code, d.path) for d in info.value.issues] == [
        ("invalid_datus_extension", "metrics[revenue]")
    ]


def test_fill_08_null_is_invalid() -> None:
    """FILL-08 / reference §3.5: `null` is not a number."""
    with pytest.raises(ModelError) as info:
        Engine(model_text=mini_yaml(metric_ext={"revenue": {"fill_nulls_with": None}}))
    assert [i.code for i in info.value.issues] == ["invalid_datus_extension"]


def test_fill_01_catalog_reports_the_fill(mini_engine: Callable[..., Any]) -> None:
    """FILL-01: the metric carries its fill value."""
    engine, _ = mini_engine(metric_ext={"refund_total": {"fill_nulls_with": 0}})
    assert engine.metric("refund_total")["fill_nulls_with"] == 0
