"""The models and the fixed query set of the snapshot tests (tests/plan/test_plan_snapshots.py
and tests/sql/test_sql_snapshots.py).

Snapshots are an addition to the execution tests, never instead: the numbers are asserted
elsewhere; these pin the plan shape and the SQL text, so a refactor that changes either shows as
a byte difference. The models are the repository's examples (the shop, its D-LOD metric
variant, the netbar D-CONFORM example), the D-FORMAT matrix model of fmtkit, and `shop_plus`:
the shop with metrics the examples do not carry (a D-DERIVE compose over a window output,
which plans a DeriveCompute stage, a D-DERIVE filter with a D-PARAM literal, the share and
streak window families of DATUS 1.13, and CUME_DIST, which ClickHouse servers before 25.11
lack). `semi` and `conv` are the D-SEMI balances and
D-CONVERSION funnel models of semikit / convkit.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import convkit
import fmtkit
import semikit
import yaml

from dosi.engine import Engine
from dosi.errors import OsiError

REPO = Path(__file__).resolve().parents[2]
SHOP_MODEL = REPO / "examples" / "shop" / "model.yaml"
SHOP_LOD_MODEL = REPO / "examples" / "shop" / "lod_model.yaml"
NETBAR_MODEL = REPO / "examples" / "netbar" / "model.yaml"


def _datus(payload: dict[str, Any]) -> list[dict[str, str]]:
    return [{"vendor_name": "DATUS", "data": json.dumps(payload)}]


def _ansi(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


_SHOP_PLUS_METRICS: list[dict[str, Any]] = [
    {
        "name": "revenue_mom_doubled",
        "expression": _ansi("SUM(orders.amount)"),
        "description": "A compose over a window output (the D-DERIVE stage tier).",
        "custom_extensions": _datus(
            {"v": "1.4", "derive": {"type": "compose", "expr": "revenue_mom * 2"}}
        ),
    },
    {
        "name": "revenue_cume_dist",
        "expression": _ansi("SUM(orders.amount)"),
        "description": "CUME_DIST of revenue: version-gated on ClickHouse (before 25.11).",
        "custom_extensions": _datus({"v": "1.3", "window": {"rank": {"function": "cume_dist"}}}),
    },
    {
        "name": "big_order_revenue",
        "expression": _ansi("SUM(CASE WHEN orders.amount > 100.0 THEN orders.amount END)"),
        "description": "Revenue of orders above a D-PARAM threshold (a filter literal slot).",
        "custom_extensions": _datus(
            {
                "v": "1.5",
                "params": [{"name": "t", "type": "float", "default": 100, "min": 0}],
                "derive": {"type": "filter", "base": "revenue", "where": "amount > :t"},
            }
        ),
    },
    {
        "name": "revenue_share",
        "expression": _ansi("SUM(orders.amount)"),
        "description": "Each group's share of its month's revenue (the share window family).",
        "custom_extensions": _datus({"v": "1.13", "window": {"type": "share"}}),
    },
    {
        "name": "revenue_growth_streak",
        "expression": _ansi("SUM(orders.amount)"),
        "description": "Consecutive months of revenue growth (the streak window family).",
        "custom_extensions": _datus(
            {"v": "1.13", "window": {"streak": {"compare": "change", "op": ">"}}}
        ),
    },
    {
        "name": "revenue_running_month_end",
        "expression": _ansi("SUM(orders.amount)"),
        "description": "The running total of daily revenue, sampled at each month's last day.",
        "custom_extensions": _datus(
            {
                "v": "1.14",
                "window": {"type": "cumulative", "function": "sum", "period_value": "last"},
            }
        ),
    },
]


def shop_plus_text() -> str:
    doc = yaml.safe_load(SHOP_MODEL.read_text(encoding="utf-8"))
    doc["semantic_model"][0]["metrics"].extend(_SHOP_PLUS_METRICS)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


MODELS = ("shop", "shop_plus", "shop_lod", "netbar", "fmt", "semi", "conv")


@cache
def engine(model: str) -> Engine:
    """One compile-only Engine per model (no connection: snapshots never execute)."""
    if model == "shop":
        return Engine(model_path=SHOP_MODEL)
    if model == "shop_plus":
        return Engine(model_text=shop_plus_text())
    if model == "shop_lod":
        return Engine(model_path=SHOP_LOD_MODEL)
    if model == "netbar":
        return Engine(model_path=NETBAR_MODEL)
    if model == "fmt":
        return Engine(model_text=fmtkit.fmt_model_text())
    if model == "semi":
        return Engine(model_text=semikit.semi_model_text())
    if model == "conv":
        return Engine(model_text=convkit.conv_model_text())
    raise KeyError(model)


MONTH = ["metric_time:month"]
H1 = {"start": "2024-03-01", "end": "2024-07-01"}

# name -> (model, query). Grouped by feature; every window family, merges, D-LOD fields and
# metrics, streaming windows, D-FORMAT, D-CONFORM, D-DERIVE, D-PARAM and time_ranges.
SQL_QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    # core: grouping, grains, joins, filters, order / limit
    "plain_by_channel": (
        "shop",
        {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
    ),
    "no_group_by": ("shop", {"metrics": ["revenue", "customer_count"]}),
    "grain_day": ("shop", {"metrics": ["revenue"], "group_by": ["orders.order_date:day"]}),
    "grain_week": ("shop", {"metrics": ["revenue"], "group_by": ["metric_time:week"]}),
    "grain_quarter_year": (
        "shop",
        {"metrics": ["order_count"], "group_by": ["metric_time:quarter", "orders.order_date:year"]},
    ),
    "join_many_to_one": (
        "shop",
        {"metrics": ["revenue"], "group_by": ["customers.segment", "regions.region_name"]},
    ),
    "ratio_and_distinct": (
        "shop",
        {"metrics": ["avg_order_value", "customer_count"], "group_by": ["orders.channel"]},
    ),
    "where_field_and_metric": (
        "shop",
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.status = 'completed' AND revenue > 5",
        },
    ),
    "time_range_order_limit": (
        "shop",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "time_range": H1,
            "order_by": [{"key": "revenue", "desc": True, "nulls": "first"}],
            "limit": 3,
        },
    ),
    "order_items_dataset": (
        "shop",
        {"metrics": ["order_line_count", "items_sold"], "group_by": ["orders.channel"]},
    ),
    # merges of several facts
    "merge_fill": ("shop", {"metrics": ["revenue", "refund_total"], "group_by": MONTH}),
    "merge_no_dims": ("shop", {"metrics": ["revenue", "refund_total", "event_count"]}),
    # D-WINDOW: every family
    "window_offset_back": (
        "shop",
        {"metrics": ["revenue", "revenue_mom", "revenue_yoy"], "group_by": MONTH, "time_range": H1},
    ),
    "window_offset_forward": ("shop", {"metrics": ["revenue_next_month"], "group_by": MONTH}),
    "window_frame_rolling": (
        "shop",
        {"metrics": ["revenue_rolling_3m"], "group_by": ["orders.channel", "metric_time:month"]},
    ),
    "window_frame_cumulative_reset": (
        "shop",
        {"metrics": ["revenue_ytd"], "group_by": MONTH, "time_range": H1},
    ),
    "window_frame_running": ("shop", {"metrics": ["revenue_running"], "group_by": MONTH}),
    "window_rank": ("shop", {"metrics": ["revenue", "revenue_rank"], "group_by": MONTH}),
    "window_cume_dist": ("shop_plus", {"metrics": ["revenue_cume_dist"], "group_by": MONTH}),
    "window_value": ("shop", {"metrics": ["first_month_revenue"], "group_by": MONTH}),
    "window_share": (
        "shop_plus",
        {"metrics": ["revenue", "revenue_share"], "group_by": ["orders.channel", *MONTH]},
    ),
    "window_streak": (
        "shop_plus",
        {"metrics": ["revenue_growth_streak"], "group_by": ["orders.channel", *MONTH]},
    ),
    "window_over_merge_filtered": (
        "shop",
        {
            "metrics": ["revenue_mom", "refund_total"],
            "group_by": MONTH,
            "where_sql": "refund_total > 4000",
        },
    ),
    # D-DERIVE
    "derive_filter": (
        "shop",
        {"metrics": ["completed_revenue", "completed_orders"], "group_by": ["orders.channel"]},
    ),
    "derive_compose": (
        "shop",
        {"metrics": ["revenue_net_of_refunds", "close_rate"], "group_by": MONTH},
    ),
    "derive_window_base": (
        "shop",
        {"metrics": ["completed_revenue_mom", "close_rate_rank"], "group_by": MONTH},
    ),
    "derive_stage_compose": ("shop_plus", {"metrics": ["revenue_mom_doubled"], "group_by": MONTH}),
    # D-PARAM
    "params_window_slot": (
        "shop",
        {"metrics": ["revenue_moving_avg"], "group_by": MONTH, "params": {"n": 6}},
    ),
    "params_list": (
        "shop",
        {"metrics": ["revenue_moving_avg"], "group_by": MONTH, "params": {"n": [2, 4]}},
    ),
    "params_filter_literal": (
        "shop_plus",
        {"metrics": ["big_order_revenue"], "group_by": ["orders.channel"], "params": {"t": 250.5}},
    ),
    # time_ranges
    "time_ranges_tagged": (
        "shop",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "time_ranges": [
                {"tag": "h1", "start": "2024-01-01", "end": "2024-07-01"},
                {"tag": "h2", "start": "2024-07-01", "end": "2025-01-01"},
            ],
        },
    ),
    # D-LOD fields (rollup + broadcast)
    "lod_field_cohort": (
        "shop",
        {"metrics": ["customer_count"], "group_by": ["orders.cohort_month"]},
    ),
    "lod_field_row_level": (
        "shop",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.order_kind", "metric_time:year"],
        },
    ),
    # D-LOD metrics (include / exclude / fixed, context_filter)
    "lod_metric_exclude": (
        "shop_lod",
        {
            "metrics": ["revenue", "revenue_region_total", "channel_share_of_region"],
            "group_by": ["regions.region_name", "orders.channel"],
        },
    ),
    "lod_metric_fixed": (
        "shop_lod",
        {"metrics": ["revenue", "revenue_all_time"], "group_by": ["orders.channel"]},
    ),
    "lod_metric_include": (
        "shop_lod",
        {"metrics": ["revenue_per_customer"], "group_by": ["metric_time:quarter"]},
    ),
    "lod_metric_context_filter": (
        "shop_lod",
        {
            "metrics": ["revenue", "revenue_all_time"],
            "group_by": ["orders.channel"],
            "context_filter": "orders.channel <> 'web'",
        },
    ),
    # streaming windows
    "stream_tumble": (
        "shop",
        {"metrics": ["event_count"], "group_by": ["metric_time:tumble(1 hour)"]},
    ),
    "stream_hop": (
        "shop",
        {
            "metrics": ["event_count", "event_value"],
            "group_by": ["metric_time:hop(1 hour, 30 minutes)"],
        },
    ),
    "stream_session": (
        "shop",
        {
            "metrics": ["event_count"],
            "group_by": ["events.event_type", "metric_time:session(5 minutes)"],
        },
    ),
    "stream_cumulate": (
        "shop",
        {
            "metrics": ["active_users"],
            "group_by": [
                {
                    "field": "metric_time",
                    "window": {"type": "cumulate", "size": "1 day", "step": "6 hours"},
                }
            ],
        },
    ),
    # D-FORMAT
    "time_format_group": (
        "fmt",
        {"metrics": ["revenue", "users"], "group_by": ["ev.di:month", "ev.dm"]},
    ),
    "time_format_range": (
        "fmt",
        {
            "metrics": ["revenue"],
            "group_by": ["ev.dc:month"],
            "time_range": {"dimension": "ev.dc", "start": "2024-01-31", "end": "2024-12-31"},
        },
    ),
    "time_format_window": (
        "fmt",
        {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": MONTH,
            "time_range": {"start": "2024-02-01", "end": "2025-03-01"},
        },
    ),
    # D-CONFORM
    "conform_two_facts": (
        "netbar",
        {"metrics": ["users", "payers", "pay_rate"], "group_by": ["netbar_payment.pay_date:month"]},
    ),
    "conform_three_facts": (
        "netbar",
        {"metrics": ["users", "revenue", "registrations"], "group_by": ["metric_time:month"]},
    ),
    "conform_window": (
        "netbar",
        {"metrics": ["minutes_mom", "revenue_rolling"], "group_by": MONTH},
    ),
    # D-SEMI
    "semi_additive_last": (
        "semi",
        {"metrics": ["balance_by_account", "balance"], "group_by": [*MONTH, "accounts.region"]},
    ),
    "semi_additive_by_value": (
        "semi",
        {
            "metrics": ["lowest_by_account"],
            "time_range": {"start": "2024-01-01", "end": "2024-04-01"},
        },
    ),
    # D-CONVERSION
    "conversion_rate": (
        "conv",
        {"metrics": ["visit_to_buy_rate_7d"], "group_by": ["visits.referrer", "metric_time:day"]},
    ),
    "conversion_properties": (
        "conv",
        {"metrics": ["spend_same_session"]},
    ),
}


def render(model: str, query: dict[str, Any], dialect: str) -> str:
    """The SQL `compile` gives for one dialect, or the structured error it raises instead
    (a refusal is part of a dialect's behaviour too)."""
    try:
        return engine(model).compile(query, dialect=dialect)["sql"] + ";"
    except OsiError as err:  # structured refusals only; anything else fails the test
        return f"-- error {err.code}: {err.message}".replace("\n", "\n-- ")
