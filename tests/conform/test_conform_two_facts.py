"""D-CONFORM two facts: logins and payments paired on date and platform (issue 12 item 5/7).

Every expected value is hand-written SQL over the example tables: each fact aggregated alone,
the results merged on the paired key (datus-extensions §3 D-CONFORM: never joined row by row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from enginekit import Ref, assert_rows_equal, result_rows

# users / payers per month, each fact on its own date column, merged on the month
_USERS_PAYERS_BY_MONTH = """
WITH l AS (SELECT CAST(date_trunc('month', stat_date) AS DATE) AS m,
                  COUNT(DISTINCT player_id) AS users FROM netbar_login GROUP BY 1),
     p AS (SELECT CAST(date_trunc('month', pay_date) AS DATE) AS m,
                  COUNT(DISTINCT player_id) AS payers FROM netbar_payment GROUP BY 1)
SELECT COALESCE(l.m, p.m), {select}
FROM l FULL JOIN p ON l.m = p.m
"""


def test_conf_04_05_pay_rate_by_either_date_spelling(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-04 / CONF-05: the ratio of two conformed facts by month, grouped by the login
    spelling or the payment spelling; the output column follows the spelling."""
    expected = netbar_ref.rows(
        _USERS_PAYERS_BY_MONTH.format(select="CAST(p.payers AS DOUBLE) / NULLIF(l.users, 0)")
    )
    for spelling, column in (
        ("netbar_login.stat_date:month", "stat_date__month"),
        ("netbar_payment.pay_date:month", "pay_date__month"),
    ):
        res = netbar_run({"metrics": ["pay_rate"], "group_by": [spelling]})
        assert res["columns"] == [column, "pay_rate"]
        assert_rows_equal(result_rows(res), expected)


def test_conf_04_month_with_payments_only_keeps_the_s_fan_6_rules(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-04 with S-FAN-6: April 2024 has payments and no logins; `users` (a pure count)
    reads 0 there and `pay_rate` (a ratio) NULL."""
    res = netbar_run(
        {"metrics": ["users", "payers", "pay_rate"], "group_by": ["netbar_payment.pay_date:month"]}
    )
    expected = netbar_ref.rows(
        _USERS_PAYERS_BY_MONTH.format(
            select="COALESCE(l.users, 0), p.payers, CAST(p.payers AS DOUBLE) / l.users"
        )
    )
    assert_rows_equal(result_rows(res), expected)
    april = [r for r in res["rows"] if str(r["pay_date__month"]) == "2024-04-01"]
    assert len(april) == 1
    assert april[0]["users"] == 0 and april[0]["payers"] > 0 and april[0]["pay_rate"] is None


def test_conf_05_one_fact_metric_grouped_by_the_other_facts_spelling(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-05: a login-only metric groups by `netbar_payment.pay_date`: logins are grouped by
    their own stat_date, under the queried name."""
    res = netbar_run({"metrics": ["users", "logins"], "group_by": ["netbar_payment.pay_date"]})
    assert res["columns"] == ["pay_date", "users", "logins"]
    expected = netbar_ref.rows(
        "SELECT stat_date, COUNT(DISTINCT player_id), COUNT(*) FROM netbar_login GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_03_05_second_pair_platform(netbar_run: Callable[..., Any], netbar_ref: Ref) -> None:
    """CONF-03: each column pair is its own dimension: platform, grouped by either spelling
    (platform 3 only logs in, platform 4 only pays)."""
    expected = netbar_ref.rows(
        """
        WITH l AS (SELECT platform_id AS k, COUNT(DISTINCT player_id) AS users
                   FROM netbar_login GROUP BY 1),
             p AS (SELECT platform_id AS k, COUNT(DISTINCT player_id) AS payers,
                          SUM(amount) AS revenue FROM netbar_payment GROUP BY 1)
        SELECT COALESCE(l.k, p.k), COALESCE(l.users, 0), COALESCE(p.payers, 0), p.revenue
        FROM l FULL JOIN p ON l.k = p.k
        """
    )
    for spelling in ("netbar_login.platform_id", "netbar_payment.platform_id"):
        res = netbar_run({"metrics": ["users", "payers", "revenue"], "group_by": [spelling]})
        assert res["columns"] == ["platform_id", "users", "payers", "revenue"]
        assert_rows_equal(result_rows(res), expected)


def test_conf_05_where_sql_on_either_spelling_filters_both_facts(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-05: a where_sql condition on a paired column applies to each fact through its own
    spelling (here the payment spelling filters the logins too)."""
    expected = netbar_ref.rows(
        """
        WITH l AS (SELECT CAST(date_trunc('month', stat_date) AS DATE) AS m,
                          COUNT(DISTINCT player_id) AS users FROM netbar_login
                   WHERE platform_id IN (1, 4) GROUP BY 1),
             p AS (SELECT CAST(date_trunc('month', pay_date) AS DATE) AS m,
                          COUNT(DISTINCT player_id) AS payers FROM netbar_payment
                   WHERE platform_id IN (1, 4) GROUP BY 1)
        SELECT COALESCE(l.m, p.m), COALESCE(l.users, 0), COALESCE(p.payers, 0)
        FROM l FULL JOIN p ON l.m = p.m
        """
    )
    for where in ("netbar_payment.platform_id IN (1, 4)", "netbar_login.platform_id IN (1, 4)"):
        res = netbar_run(
            {
                "metrics": ["users", "payers"],
                "group_by": ["netbar_login.stat_date:month"],
                "where_sql": where,
            }
        )
        assert_rows_equal(result_rows(res), expected)


def test_conf_05_time_range_dimension_on_either_spelling(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-05: `time_range.dimension` names one spelling; each fact filters its own date."""
    expected = netbar_ref.rows(
        """
        SELECT (SELECT COUNT(DISTINCT player_id) FROM netbar_payment
                WHERE pay_date >= DATE '2024-01-15' AND pay_date < DATE '2024-03-01')::DOUBLE
             / (SELECT COUNT(DISTINCT player_id) FROM netbar_login
                WHERE stat_date >= DATE '2024-01-15' AND stat_date < DATE '2024-03-01')
        """
    )
    for dim in ("netbar_login.stat_date", "netbar_payment.pay_date", "netbar_register.reg_date"):
        res = netbar_run(
            {
                "metrics": ["pay_rate"],
                "time_range": {"start": "2024-01-15", "end": "2024-03-01", "dimension": dim},
            }
        )
        assert_rows_equal(result_rows(res), expected)


def test_conf_06_metric_time_resolves_per_branch(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-06: the primary times are paired, so metric_time is each fact's own date, in the
    grouping and in the time_range."""
    res = netbar_run(
        {
            "metrics": ["users", "payers", "pay_rate"],
            "group_by": ["metric_time:week"],
            "time_range": {"start": "2024-01-08", "end": "2024-02-05"},
        }
    )
    expected = netbar_ref.rows(
        """
        WITH l AS (SELECT CAST(date_trunc('week', stat_date) AS DATE) AS w,
                          COUNT(DISTINCT player_id) AS users FROM netbar_login
                   WHERE stat_date >= DATE '2024-01-08' AND stat_date < DATE '2024-02-05'
                   GROUP BY 1),
             p AS (SELECT CAST(date_trunc('week', pay_date) AS DATE) AS w,
                          COUNT(DISTINCT player_id) AS payers FROM netbar_payment
                   WHERE pay_date >= DATE '2024-01-08' AND pay_date < DATE '2024-02-05'
                   GROUP BY 1)
        SELECT COALESCE(l.w, p.w), COALESCE(l.users, 0), COALESCE(p.payers, 0),
               CAST(p.payers AS DOUBLE) / l.users
        FROM l FULL JOIN p ON l.w = p.w
        """
    )
    assert res["columns"] == ["metric_time__week", "users", "payers", "pay_rate"]
    assert_rows_equal(result_rows(res), expected)


def test_conf_07_grain_rollup_inside_each_branch(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-07: `:quarter` truncates each fact's own column; COUNT DISTINCT over the quarter
    (not a sum of monthly counts) proves each branch aggregates at the merged grain."""
    res = netbar_run({"metrics": ["arppu"], "group_by": ["netbar_payment.pay_date:quarter"]})
    expected = netbar_ref.rows(
        """
        WITH l AS (SELECT CAST(date_trunc('quarter', stat_date) AS DATE) AS q,
                          COUNT(DISTINCT player_id) AS users FROM netbar_login GROUP BY 1),
             p AS (SELECT CAST(date_trunc('quarter', pay_date) AS DATE) AS q,
                          SUM(amount) AS revenue FROM netbar_payment GROUP BY 1)
        SELECT COALESCE(l.q, p.q), CAST(p.revenue AS DOUBLE) / l.users
        FROM l FULL JOIN p ON l.q = p.q
        """
    )
    assert_rows_equal(result_rows(res), expected)


def test_conf_04_no_group_by_is_one_row_per_fact_total(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-04: without a group-by each fact's total is computed alone (no join inflates the
    SUM: an ordinary join would repeat each payment once per matching login)."""
    res = netbar_run({"metrics": ["revenue", "login_minutes", "pay_rate"]})
    expected = netbar_ref.rows(
        """
        SELECT (SELECT SUM(amount) FROM netbar_payment),
               (SELECT SUM(minutes) FROM netbar_login),
               (SELECT COUNT(DISTINCT player_id) FROM netbar_payment)::DOUBLE
                 / (SELECT COUNT(DISTINCT player_id) FROM netbar_login)
        """
    )
    assert_rows_equal(result_rows(res), expected)
