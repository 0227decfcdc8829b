"""D-CONFORM three facts: payments <-> logins <-> registrations share one date (CONF-09).

payment <-> login (date, platform) plus login <-> register (date) puts the three dates in one
conformed class: payments and registrations line up although no relationship names both.
Expected values: each fact aggregated alone in hand-written SQL, merged on the date bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import Ref, assert_rows_equal, result_rows

_FUNNEL = """
WITH l AS (SELECT CAST(date_trunc('{g}', stat_date) AS DATE) AS k,
                  COUNT(DISTINCT player_id) AS users FROM netbar_login {wl} GROUP BY 1),
     p AS (SELECT CAST(date_trunc('{g}', pay_date) AS DATE) AS k,
                  COUNT(DISTINCT player_id) AS payers FROM netbar_payment {wp} GROUP BY 1),
     r AS (SELECT CAST(date_trunc('{g}', reg_date) AS DATE) AS k,
                  COUNT(reg_id) AS registrations FROM netbar_register {wr} GROUP BY 1),
     keys AS (SELECT k FROM l UNION SELECT k FROM p UNION SELECT k FROM r)
SELECT keys.k, COALESCE(l.users, 0), COALESCE(p.payers, 0), COALESCE(r.registrations, 0),
       CAST(p.payers AS DOUBLE) / (l.users + r.registrations)
FROM keys LEFT JOIN l ON l.k = keys.k LEFT JOIN p ON p.k = keys.k LEFT JOIN r ON r.k = keys.k
"""


@pytest.mark.parametrize(
    "spelling",
    [
        "netbar_register.reg_date",
        "netbar_payment.pay_date",
        "netbar_login.stat_date",
        "metric_time",
    ],
)
def test_conf_09_three_facts_one_date(
    netbar_run: Callable[..., Any], netbar_ref: Ref, spelling: str
) -> None:
    """CONF-09: users, payers, registrations and the three-fact ratio by month, under any of
    the three spellings (payments and registrations meet only through the chain)."""
    res = netbar_run(
        {
            "metrics": ["users", "payers", "registrations", "payers_per_visitor"],
            "group_by": [f"{spelling}:month"],
        }
    )
    name = spelling.split(".")[-1]
    assert res["columns"] == [f"{name}__month", "users", "payers", "registrations",
                              "payers_per_visitor"]  # fmt: skip
    expected = netbar_ref.rows(_FUNNEL.format(g="month", wl="", wp="", wr=""))
    assert_rows_equal(result_rows(res), expected)


def test_conf_09_payments_and_registrations_without_logins(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-09: a query of the two facts no relationship names directly still merges them
    on the date (the class is transitive), here by week under the registration spelling."""
    res = netbar_run(
        {"metrics": ["revenue", "registrations"], "group_by": ["netbar_register.reg_date:week"]}
    )
    expected = netbar_ref.rows(
        """
        WITH p AS (SELECT CAST(date_trunc('week', pay_date) AS DATE) AS k, SUM(amount) AS rev
                   FROM netbar_payment GROUP BY 1),
             r AS (SELECT CAST(date_trunc('week', reg_date) AS DATE) AS k, COUNT(reg_id) AS n
                   FROM netbar_register GROUP BY 1)
        SELECT COALESCE(p.k, r.k), p.rev, COALESCE(r.n, 0) FROM p FULL JOIN r ON p.k = r.k
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_09_filter_on_one_spelling_reaches_all_three(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-05 / CONF-09: a where_sql range on the registration date filters logins and
    payments through their own date columns."""
    res = netbar_run(
        {
            "metrics": ["users", "payers", "registrations", "payers_per_visitor"],
            "group_by": ["netbar_login.stat_date:month"],
            "where_sql": "netbar_register.reg_date BETWEEN '2024-01-10' AND '2024-02-20'",
        }
    )
    cond = "WHERE {c} BETWEEN DATE '2024-01-10' AND DATE '2024-02-20'"
    expected = netbar_ref.rows(
        _FUNNEL.format(
            g="month",
            wl=cond.format(c="stat_date"),
            wp=cond.format(c="pay_date"),
            wr=cond.format(c="reg_date"),
        )
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_09_three_fact_total(netbar_run: Callable[..., Any], netbar_ref: Ref) -> None:
    """CONF-09: the three-fact ratio over everything: each fact's total alone."""
    res = netbar_run({"metrics": ["payers_per_visitor"]})
    expected = netbar_ref.scalar(
        """
        SELECT (SELECT COUNT(DISTINCT player_id) FROM netbar_payment)::DOUBLE
             / ((SELECT COUNT(DISTINCT player_id) FROM netbar_login)
                + (SELECT COUNT(reg_id) FROM netbar_register))
        """
    )
    assert_rows_equal(result_rows(res), [(expected,)])
