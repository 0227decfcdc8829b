"""D-CONFORM in basic mode (CONF-18, datus-extensions §5): the payload is inert, so the
pairing is an ordinary many-to-one join: the facts are joined row by row, duplicate-sensitive
aggregates over the join are refused as a fan-out, and duplicate-insensitive ones count
through the join. Expected values: the LEFT JOIN written by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import Ref, assert_rows_equal, result_rows
from netbarkit import NETBAR_MODEL

from dosi.engine import Engine
from dosi.errors import QueryError

# the basic-mode model: COUNT(*) cannot be pinned to a dataset without D-DATASET, so the
# example's `logins` is unavailable; the other metrics are plain Ossie
_JOINED = """
SELECT CAST(date_trunc('month', l.stat_date) AS DATE),
       CAST(COUNT(DISTINCT p.player_id) AS DOUBLE) / COUNT(DISTINCT l.player_id)
FROM netbar_login l
LEFT JOIN netbar_payment p ON l.stat_date = p.pay_date AND l.platform_id = p.platform_id
GROUP BY 1
"""


@pytest.fixture(scope="module")
def basic() -> Any:
    engine = Engine(model_path=NETBAR_MODEL, mode="basic")
    yield engine
    engine.close()


def test_conf_18_basic_mode_warns_the_edge_is_a_join(basic: Any) -> None:
    """CONF-18: one ignored_vendor_extension per conformed edge, naming the fallback."""
    warned = [
        w
        for w in basic.warnings
        if w["code"] == "ignored_vendor_extension" and "conformed" in w.get("path", "")
    ]
    assert len(warned) == 2
    assert all("joined row by row" in w["message"] for w in warned)


def test_conf_18_basic_mode_joins_row_by_row(basic: Any, netbar_db: Any, netbar_ref: Ref) -> None:
    """CONF-18: pay_rate by the login month counts payers through the join, so payment days
    with no login on that platform are lost (datus mode answers from each fact alone)."""
    res = basic.execute(
        {"metrics": ["pay_rate"], "group_by": ["netbar_login.stat_date:month"]}, db_path=netbar_db
    )
    assert_rows_equal(result_rows(res), netbar_ref.rows(_JOINED))


def test_conf_18_basic_mode_differs_from_datus_mode(
    basic: Any, netbar_db: Any, netbar_run: Callable[..., Any]
) -> None:
    """CONF-18: the two modes give different numbers for the same query: the reason the key
    is silent and belongs in `requires`."""
    q = {"metrics": ["pay_rate"], "group_by": ["netbar_login.stat_date:month"]}
    joined = {
        r["stat_date__month"]: r["pay_rate"] for r in basic.execute(q, db_path=netbar_db)["rows"]
    }
    merged = {r["stat_date__month"]: r["pay_rate"] for r in netbar_run(q)["rows"]}
    assert joined != merged


def test_conf_18_basic_mode_sum_over_the_join_is_a_fan_out(basic: Any) -> None:
    """CONF-18: a SUM of payments by the login date would repeat payments once per login:
    refused (fan_out_risk), where datus mode answers it."""
    with pytest.raises(QueryError) as info:
        basic.compile({"metrics": ["revenue"], "group_by": ["netbar_login.stat_date:month"]})
    assert info.value.code == "fan_out_risk"
