"""Issue 20 points 7, 8 and 9 (LOD-NI-06/08/09, DX D-LOD not-yet table, diagnostics).
7: a D-LOD metric or a query reading a D-LOD field under `time_ranges` is `not_implemented`
   (today every tag returns the all-time value); 8: D-LOD shape restrictions come before join
   paths; 9: diagnostics name the declaration and are not repeated for consequences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rightkit import FIX, assert_rows, rows, truth

import dosi
from dosi.errors import ModelError, QueryError

TAGS = [
    {"tag": "jan", "start": "2025-01-01", "end": "2025-02-01"},
    {"tag": "feb", "start": "2025-02-01", "end": "2025-03-01"},
]


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["user_num"], "group_by": [{"field": "sessions.active_day"}]},
        {"metrics": ["avg_active_day"]},
        {"metrics": ["user_num"], "where_sql": "sessions.active_day > 1"},
        {"metrics": ["revenue_per_user"], "group_by": [{"field": "orders.channel_id"}]},
        {"metrics": ["revenue_grand", "revenue"], "group_by": [{"field": "orders.channel_id"}]},
        {"metrics": ["revenue_fixed_all", "revenue"]},
        {"metrics": ["revenue_share"], "group_by": [{"field": "orders.channel_id"}]},
    ],
    ids=[
        "by_field",
        "metric_reads_field",
        "where_field",
        "include",
        "exclude",
        "fixed",
        "compose_over_exclude",
    ],
)
def test_lod_ni_08_09_lod_under_time_ranges_is_not_implemented(
    lod: dosi.Engine, query: dict
) -> None:
    with pytest.raises(QueryError) as err:
        lod.compile({**query, "time_ranges": TAGS})
    assert err.value.code == "not_implemented"


def test_core_q_11_plain_metrics_under_time_ranges(
    lod: dosi.Engine, worlds: dict[str, Path]
) -> None:
    res = lod.execute({"metrics": ["revenue"], "time_ranges": TAGS}, db_path=worlds["lod"])
    want = truth(
        worlds["lod"],
        """SELECT
        SUM(CASE WHEN event_date >= DATE '2025-01-01' AND event_date < DATE '2025-02-01' THEN amount END),
        SUM(CASE WHEN event_date >= DATE '2025-02-01' AND event_date < DATE '2025-03-01' THEN amount END)
        FROM main.orders""",
    )
    assert_rows(rows(res, ["revenue__jan", "revenue__feb"]), want)


@pytest.mark.parametrize(
    "query",
    [
        {
            "metrics": ["revenue_mom"],
            "group_by": [
                {"field": "sessions.active_day"},
                {"field": "metric_time", "grain": "month"},
            ],
        },
        {
            "metrics": ["revenue_mom"],
            "where_sql": "sessions.active_day > 1",
            "group_by": [{"field": "metric_time", "grain": "month"}],
        },
    ],
    ids=["group_by", "where"],
)
def test_lod_ni_08_window_with_a_lod_field_before_paths(lod: dosi.Engine, query: dict) -> None:
    """A window metric of orders with a D-LOD field of sessions: the restriction, not
    `no_join_path` (declaring a relationship would not help)."""
    with pytest.raises(QueryError) as err:
        lod.compile(query)
    assert err.value.code == "not_implemented"


def shop_with(*metrics: dict) -> str:
    doc = yaml.safe_load((FIX / "shop.yaml").read_text())
    doc["semantic_model"][0]["metrics"] += list(metrics)
    return yaml.safe_dump(doc, sort_keys=False)


def m(name: str, sql: str, ext: dict | None = None) -> dict:
    out: dict = {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": sql}]},
    }
    if ext:
        out["custom_extensions"] = [{"vendor_name": "DATUS", "data": json.dumps(ext)}]
    return out


def codes(text: str) -> list[str]:
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    return sorted(i.code for i in err.value.issues)


@pytest.mark.parametrize(
    "metric",
    [
        m(
            "x",
            "SUM(SUM(orders.amount))",
            {"v": "1.4", "derive": {"type": "compose", "expr": "SUM(revenue)"}},
        ),
        m(
            "x",
            "SUM(CASE WHEN SUM(orders.amount) > 10 THEN orders.amount END)",
            {
                "v": "1.4",
                "derive": {"type": "filter", "base": "revenue", "where": "SUM(orders.amount) > 10"},
            },
        ),
    ],
    ids=["compose_expr", "filter_where"],
)
def test_aggregate_in_the_datus_key_is_invalid_datus_extension(metric: dict) -> None:
    assert codes(shop_with(metric)) == ["invalid_datus_extension"]


@pytest.mark.parametrize(
    "sql", ["COUNT(DISTINCT channel)", "SUM(CASE WHEN channel = 'web' THEN orders.amount END)"]
)
def test_an_unqualified_column_of_several_datasets_is_ambiguous_column(sql: str) -> None:
    """Issue 20 point 9: a bare column several datasets hold, in a metric expression, is
    `ambiguous_column` (the code derive.where already used)."""
    assert codes(shop_with(m("x", sql))) == ["ambiguous_column"]


def test_a_consequence_of_a_rejected_declaration_is_not_reported_again() -> None:
    web = "SUM(CASE WHEN orders.channel = 'web' THEN orders.amount END)"
    bad = m(
        "x",
        web,
        {"v": "1.4", "derive": {"type": "filter", "base": "revenue", "where": "channel = 'web'"}},
    )
    cum = m(
        "y", web, {"v": "1.9", "window": {"type": "cumulative", "function": "sum", "base": "x"}}
    )
    assert codes(shop_with(bad, cum)) == ["ambiguous_column"]
