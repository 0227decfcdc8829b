"""D-CONFORM plan shape and invariants (CONF-04, CONF-05).

The SQL never joins two facts: each branch reads one fact table, and the branches merge on the
output name. Property: the spelling of a conformed date never changes a number, only the name
of the output column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from dosi.engine import Engine

FACTS = {"netbar_login", "netbar_payment", "netbar_register"}


def _tables(node: exp.Expression) -> set[str]:
    return {t.name for t in node.find_all(exp.Table)}


def test_conf_04_each_branch_reads_one_fact_and_the_merge_joins_branches(netbar: Engine) -> None:
    """CONF-04: three facts, three CTEs, each over one fact table; the final SELECT joins CTEs
    only, never two fact tables."""
    sql = netbar.compile(
        {
            "metrics": ["payers_per_visitor", "revenue"],
            "group_by": ["netbar_register.reg_date:month"],
        }
    )["sql"]
    tree = sqlglot.parse_one(sql, read="duckdb")
    ctes = list(tree.find_all(exp.CTE))
    assert sorted(len(_tables(c.this) & FACTS) for c in ctes) == [1, 1, 1]
    src = tree.args.get("from") or tree.args.get("from_")
    outer = [src.this, *(j.this for j in tree.args.get("joins") or ())]
    assert sorted(t.name for t in outer) == ["m0", "m1", "m2"]


def test_conf_04_explain_shows_per_fact_aggregates_and_a_merge(netbar: Engine) -> None:
    """CONF-04: explain names one Aggregate per fact and the Merge on the output name."""
    text = netbar.explain({"metrics": ["pay_rate"], "group_by": ["netbar_payment.pay_date:month"]})
    assert "Aggregate m0 over netbar_payment" in text
    assert "Aggregate m1 over netbar_login" in text
    assert "Merge FULL OUTER on [pay_date__month]" in text


_METRICS = ["users", "logins", "payers", "revenue", "registrations", "pay_rate", "arppu"]
_DATES = ["netbar_login.stat_date", "netbar_payment.pay_date", "netbar_register.reg_date"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    metrics=st.lists(st.sampled_from(_METRICS), min_size=1, max_size=4, unique=True),
    grain=st.sampled_from(["day", "week", "month", "quarter", "year"]),
    a=st.sampled_from(_DATES),
    b=st.sampled_from(_DATES),
)
def test_conf_05_spelling_changes_only_the_column_name(
    netbar_run: Callable[..., Any], metrics: list[str], grain: str, a: str, b: str
) -> None:
    """CONF-05 property: grouping by one conformed spelling or another gives the same rows."""

    def rows(spelling: str) -> list[tuple]:
        res = netbar_run({"metrics": metrics, "group_by": [f"{spelling}:{grain}"]})
        return sorted(tuple(r.values()) for r in res["rows"])

    assert rows(a) == rows(b)
