"""D-CONFORM window metrics over either spelling (CONF-14, CONF-15).

A window on one fact, queried under the other fact's date, is still its own fact's series,
ordered by its own column; windows of two paired facts share the conformed axis. Expected
values: the base series in hand-written SQL, the window applied in plain Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import Ref, assert_rows_equal, result_rows
from netbarkit import netbar_doc, sm, to_yaml

from dosi.engine import Engine
from dosi.errors import ModelError

_MINUTES = (
    "SELECT CAST(date_trunc('month', stat_date) AS DATE) AS m, SUM(minutes) "
    "FROM netbar_login GROUP BY 1 ORDER BY 1"
)
_REVENUE = (
    "SELECT CAST(date_trunc('month', pay_date) AS DATE) AS m, SUM(amount) "
    "FROM netbar_payment GROUP BY 1 ORDER BY 1"
)


def _mom(series: list[tuple]) -> dict[str, float | None]:
    """percent_change against the previous calendar month (None without one)."""
    by_month = dict(series)
    out: dict[str, float | None] = {}
    for m, v in series:
        y, mo = int(m[:4]), int(m[5:7])
        prev = f"{y - (mo == 1)}-{(mo - 2) % 12 + 1:02d}-01"
        p = by_month.get(prev)
        out[m] = None if p in (None, 0) else (v - p) / p
    return out


@pytest.mark.parametrize(
    ("spelling", "column"),
    [
        ("netbar_payment.pay_date:month", "pay_date__month"),
        ("netbar_register.reg_date:month", "reg_date__month"),
        ("netbar_login.stat_date:month", "stat_date__month"),
    ],
)
def test_conf_14_window_grouped_by_the_other_facts_spelling(
    netbar_run: Callable[..., Any], netbar_ref: Ref, spelling: str, column: str
) -> None:
    """CONF-14: the login month-over-month, grouped by any conformed spelling, is the login
    series under the queried name."""
    res = netbar_run({"metrics": ["minutes_mom"], "group_by": [spelling]})
    assert res["columns"] == [column, "minutes_mom"]
    mom = _mom(netbar_ref.rows(_MINUTES))
    assert_rows_equal(result_rows(res), list(mom.items()))


def test_conf_14_windows_of_two_paired_facts_share_the_axis(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-14: a login window and a payment window in one query: the conformed dates are one
    axis; each series is its own fact's, merged by month (April has payments only)."""
    res = netbar_run(
        {
            "metrics": ["minutes_mom", "revenue_rolling", "registrations"],
            "group_by": ["metric_time:month"],
        }
    )
    minutes = netbar_ref.rows(_MINUTES)
    revenue = netbar_ref.rows(_REVENUE)
    regs = dict(
        netbar_ref.rows(
            "SELECT CAST(date_trunc('month', reg_date) AS DATE), COUNT(*) "
            "FROM netbar_register GROUP BY 1"
        )
    )
    months = sorted({m for m, _ in minutes} | {m for m, _ in revenue} | set(regs))
    mom = _mom(minutes)
    rev = dict(revenue)
    # rolling sum over the current and previous row of the merged month series
    rolling = {}
    for i, m in enumerate(months):
        window = [rev.get(x) for x in months[max(0, i - 1) : i + 1]]
        vals = [v for v in window if v is not None]
        rolling[m] = sum(vals) if vals else None
    expected = [(m, mom.get(m), rolling[m], regs.get(m, 0)) for m in months]
    assert_rows_equal(result_rows(res), expected)


def test_conf_14_time_range_on_the_paired_spelling_widens_each_fact(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-14: a range on the payment date still reads February for March's login
    month-over-month (each fact's scan widens on its own column), then trims."""
    res = netbar_run(
        {
            "metrics": ["minutes_mom"],
            "group_by": ["netbar_payment.pay_date:month"],
            "time_range": {
                "start": "2024-03-01",
                "end": "2024-04-01",
                "dimension": "netbar_payment.pay_date",
            },
        }
    )
    mom = _mom(netbar_ref.rows(_MINUTES))
    assert_rows_equal(result_rows(res), [("2024-03-01", mom["2024-03-01"])])


def test_conf_15_window_over_both_facts_has_no_single_order_column() -> None:
    """CONF-15: a window whose own series spans the paired facts has no single column to
    order by; without `window.base` (D-DERIVE) such a window is refused at model compile (the
    window needs one aggregate), never evaluated over a mixed series."""
    doc = netbar_doc()
    sm(doc)["metrics"].append(
        {
            "name": "pay_rate_running",
            "expression": {
                "dialects": [
                    {
                        "dialect": "ANSI_SQL",
                        "expression": "COUNT(DISTINCT netbar_payment.player_id) "
                        "/ COUNT(DISTINCT netbar_login.player_id)",
                    }
                ]
            },
            "custom_extensions": [
                {
                    "vendor_name": "DATUS",
                    "data": '{"v": "1.3", "window": {"type": "cumulative", "function": "sum"}}',
                }
            ],
        }
    )
    with pytest.raises(ModelError) as info:
        Engine(model_text=to_yaml(doc))
    assert "invalid_datus_extension" in [i.code for i in info.value.issues]
