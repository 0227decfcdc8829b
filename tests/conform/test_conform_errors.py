"""D-CONFORM query errors: only paired columns are shared (CONF-10, CONF-11, CONF-08).

Codes follow the reference engine: grouping or filtering a cross-fact query by a column only
one fact has is `no_join_path` (with the paired columns and the D-DERIVE `filter` hint); a
single condition that some metrics can read and others cannot is `where_needs_context`; a
conformed edge named as a path is `invalid_relationship_path`; a grain under the coarser
fact's D-GRAIN floor is `grain_too_fine`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import Ref, assert_rows_equal, result_rows
from netbarkit import field_of, netbar_doc, to_yaml

from dosi.engine import Engine
from dosi.errors import QueryError


def _error(engine: Engine, query: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        engine.compile(query)
    return info.value


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["pay_rate"], "group_by": ["netbar_login.region"]},
        {"metrics": ["pay_rate"], "group_by": ["netbar_payment.channel"]},
        {"metrics": ["users", "payers"], "group_by": ["netbar_login.region"]},
        {"metrics": ["registrations", "payers"], "group_by": ["netbar_register.platform_id"]},
        {"metrics": ["users"], "group_by": ["platforms.platform_name"]},
    ],
)
def test_conf_10_grouping_by_an_unpaired_column_is_no_join_path(
    netbar: Engine, query: dict[str, Any]
) -> None:
    """CONF-10: a column only one fact has cannot group the other fact's rows."""
    err = _error(netbar, query)
    assert err.code == "no_join_path"
    assert err.hint is not None and "filter" in err.hint and "paired column" in err.hint
    assert "conformed" in err.message


def test_conf_10_filtering_by_an_unpaired_column_is_no_join_path(netbar: Engine) -> None:
    """CONF-10: a one-sided filter on a grouped dataset cannot land on one side only; the
    hint names the D-DERIVE `filter` member and the paired columns."""
    err = _error(
        netbar,
        {
            "metrics": ["pay_rate"],
            "group_by": ["netbar_login.stat_date:month"],
            "where_sql": "netbar_login.region = 'north'",
        },
    )
    assert err.code == "no_join_path"
    assert err.metrics == ["pay_rate"]
    assert "netbar_login.platform_id" in err.candidates
    assert "D-DERIVE `filter`" in (err.hint or "")


def test_conf_10_single_condition_some_metrics_read_is_where_needs_context(
    netbar: Engine,
) -> None:
    """CONF-10: `users` reads `region`, `payers` cannot: the reference's
    `where_needs_context` names the metric that cannot read it."""
    err = _error(
        netbar,
        {
            "metrics": ["users", "payers"],
            "group_by": ["netbar_payment.pay_date:month"],
            "where_sql": "netbar_login.region = 'north'",
        },
    )
    assert err.code == "where_needs_context"
    assert err.metrics == ["payers"]
    assert "context filter" in (err.hint or "")


def test_conf_10_one_fact_query_may_filter_on_its_own_unpaired_column(
    netbar_run: Callable[..., Any], netbar_ref: Ref
) -> None:
    """CONF-10 is about cross-fact queries: logins alone filter by region and group by the
    payment spelling of their date."""
    res = netbar_run(
        {
            "metrics": ["users"],
            "group_by": ["netbar_payment.pay_date:month"],
            "where_sql": "netbar_login.region = 'north'",
        }
    )
    expected = netbar_ref.rows(
        "SELECT CAST(date_trunc('month', stat_date) AS DATE), COUNT(DISTINCT player_id) "
        "FROM netbar_login WHERE region = 'north' GROUP BY 1"
    )
    assert_rows_equal(result_rows(res), expected)


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["users"], "group_by": ["login_payment_conformed.pay_date"]},
        {"metrics": ["users"], "where_sql": "login_payment_conformed.platform_id = 1"},
        {
            "metrics": ["users"],
            "time_range": {"start": "2024-02-01", "dimension": "login_register_conformed.reg_date"},
        },
    ],
)
def test_conf_11_conformed_edge_in_a_path_is_invalid_relationship_path(
    netbar: Engine, query: dict[str, Any]
) -> None:
    """CONF-11: `relationship.field` through a many_to_many edge has no row to walk to."""
    err = _error(netbar, query)
    assert err.code == "invalid_relationship_path"
    assert err.candidates  # the two dataset spellings to write instead


def test_conf_11_select_through_a_conformed_edge_is_invalid_relationship_path(
    netbar: Engine,
) -> None:
    """CONF-11 on detail queries too."""
    with pytest.raises(QueryError) as info:
        netbar.compile_select(
            {"from": "netbar_login", "fields": ["login_payment_conformed.amount"]}
        )
    assert info.value.code == "invalid_relationship_path"


@pytest.fixture(scope="module")
def monthly_payments() -> Any:
    """Payments declared stored at month grain (D-GRAIN), logins at day."""
    doc = netbar_doc()
    field_of(doc, "netbar_payment", "pay_date")["custom_extensions"] = [
        {"vendor_name": "DATUS", "data": '{"v": "1.1", "time_granularity": "month"}'}
    ]
    engine = Engine(model_text=to_yaml(doc))
    yield engine
    engine.close()


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["users", "payers"], "group_by": ["netbar_login.stat_date:day"]},
        {"metrics": ["users", "payers"], "group_by": ["netbar_login.stat_date:week"]},
        {"metrics": ["payers"], "group_by": ["netbar_login.stat_date:day"]},
        {"metrics": ["users"], "group_by": ["netbar_payment.pay_date:day"]},
        {"metrics": ["pay_rate"], "group_by": ["metric_time:day"]},
    ],
)
def test_conf_08_coarser_facts_grain_floor_applies(
    monthly_payments: Engine, query: dict[str, Any]
) -> None:
    """CONF-08: a branch on the month-stored fact refuses day and week, whichever spelling
    the query uses (and the spelled field's own floor still applies)."""
    assert _error(monthly_payments, query).code == "grain_too_fine"


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["users", "payers"], "group_by": ["netbar_login.stat_date:month"]},
        {"metrics": ["users"], "group_by": ["netbar_login.stat_date:day"]},
        {"metrics": ["pay_rate"], "group_by": ["metric_time:quarter"]},
    ],
)
def test_conf_08_grains_at_or_above_every_floor_compile(
    monthly_payments: Engine, query: dict[str, Any]
) -> None:
    """CONF-08: month and coarser are fine; a login-only query keeps its day grain."""
    assert monthly_payments.compile(query)["sql"]
