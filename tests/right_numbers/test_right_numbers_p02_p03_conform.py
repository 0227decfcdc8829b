"""Issue 20 points 2 and 3 (CONF-05, CONF-06, CONF-09, DRV-CMP-06, WIN-BASE 1.9): a compose
over conformed facts groups by either spelling of a paired dimension (transitively), and a
window over such a compose orders and shifts along the merged metric_time. Expected rows: each
fact aggregated on its own spelling in hand SQL, merged on the key, arithmetic after."""

from __future__ import annotations

from pathlib import Path

import pytest
from rightkit import assert_rows, rows, truth

import dosi
from dosi.errors import QueryError

OWN = {"login": "stat_date", "payment": "pay_date", "register": "reg_date"}


def merged(parts: dict[str, str], grain: str, formula: str) -> str:
    """parts: fact -> 'agg AS name'; the month/week key of each fact's own date column."""
    ctes = ", ".join(
        f"{f} AS (SELECT CAST(DATE_TRUNC('{grain}', {OWN[f]}) AS DATE) k, {agg} FROM main.{f} "
        "GROUP BY 1)"
        for f, agg in parts.items()
    )
    keys = " UNION ".join(f"SELECT k FROM {f}" for f in parts)
    joins = " ".join(f"LEFT JOIN {f} ON {f}.k = keys.k" for f in parts)
    return f"WITH {ctes}, keys AS ({keys}) SELECT keys.k, {formula} FROM keys {joins}"


@pytest.mark.parametrize("spelling", ["login.stat_date", "payment.pay_date", "register.reg_date"])
def test_conf_05_compose_groups_by_either_spelling(
    conform: dosi.Engine, worlds: dict[str, Path], spelling: str
) -> None:
    """CONF-05 / CONF-09: payers (payment) / users (login), grouped by any spelling of the one
    paired date class, register's spelling included (transitive)."""
    res = conform.execute(
        {"metrics": ["pay_rate"], "group_by": [{"field": spelling, "grain": "month"}]},
        db_path=worlds["conform"],
    )
    want = truth(
        worlds["conform"],
        merged(
            {
                "payment": "COUNT(DISTINCT player_id) AS p",
                "login": "COUNT(DISTINCT player_id) AS u",
            },
            "month",
            "CAST(p AS DOUBLE) / NULLIF(u, 0)",
        ),
    )
    assert_rows(rows(res), want)


def test_conf_05_compose_groups_by_the_paired_platform(
    conform: dosi.Engine, worlds: dict[str, Path]
) -> None:
    res = conform.execute(
        {"metrics": ["arppu"], "group_by": [{"field": "payment.platform_id"}]},
        db_path=worlds["conform"],
    )
    want = truth(
        worlds["conform"],
        """
        WITH p AS (SELECT platform_id k, SUM(amount) r FROM main.payment GROUP BY 1),
             l AS (SELECT platform_id k, COUNT(DISTINCT player_id) u FROM main.login GROUP BY 1),
             keys AS (SELECT k FROM p UNION SELECT k FROM l)
        SELECT keys.k, CAST(r AS DOUBLE) / NULLIF(u, 0) FROM keys
        LEFT JOIN p ON p.k IS NOT DISTINCT FROM keys.k LEFT JOIN l ON l.k IS NOT DISTINCT FROM keys.k""",
    )
    assert_rows(rows(res), want)


@pytest.mark.parametrize(
    ("metric", "dim"), [("pay_rate", "login.region"), ("payers_plus_regs", "payment.platform_id")]
)
def test_conf_10_unpaired_columns_stay_unconformed(
    conform: dosi.Engine, metric: str, dim: str
) -> None:
    """CONF-10: only paired columns are shared (register.platform_id is not paired)."""
    with pytest.raises(QueryError) as err:
        conform.compile({"metrics": [metric], "group_by": [{"field": dim}]})
    assert err.value.code == "unconformed_dimension"


@pytest.mark.parametrize("spelling", ["metric_time", "payment.pay_date"])
def test_window_over_a_merged_conformed_series(
    conform: dosi.Engine, worlds: dict[str, Path], spelling: str
) -> None:
    """A weekly delta of payers-per-user: the series is merged first, the shift is the
    calendar-exact previous week of the merged key."""
    res = conform.execute(
        {"metrics": ["pay_rate_wow"], "group_by": [{"field": spelling, "grain": "week"}]},
        db_path=worlds["conform"],
    )
    series = merged(
        {"payment": "COUNT(DISTINCT player_id) AS p", "login": "COUNT(DISTINCT player_id) AS u"},
        "week",
        "CAST(p AS DOUBLE) / NULLIF(u, 0) AS v",
    )
    want = truth(
        worlds["conform"],
        f"WITH s AS ({series.replace('keys.k,', 'keys.k AS k,')}) SELECT c.k, c.v - p.v "
        "FROM s c LEFT JOIN s p ON p.k = CAST(c.k - INTERVAL 1 WEEK AS DATE)",
    )
    assert_rows(rows(res), want)


def test_cross_fact_axes_outside_one_class_stay_refused(conform: dosi.Engine) -> None:
    """ads.ad_date is not paired with payment.pay_date."""
    with pytest.raises(QueryError) as err:
        conform.compile(
            {"metrics": ["roas_wow"], "group_by": [{"field": "metric_time", "grain": "week"}]}
        )
    assert err.value.code in ("no_primary_time_dimension", "not_implemented")
