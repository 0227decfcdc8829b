"""Issue 20, found by the differential harness against the reference engine: each case checked
with hand SQL over the shop fixture (tests/right_numbers/fixtures/shop.sql).

- CORE-Q-11 / CORE-Q-07: under `time_ranges` without a dimension, a compose over two fact
  datasets gates each member on its own dataset's primary time (it gated every member on the
  first member's axis, through the join: refunds of January's orders instead of January's
  refunds), and a member that no many-to-one path joins to the other no longer fails with
  `no_join_path`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rightkit import assert_rows, rows, truth

import dosi
from dosi.errors import QueryError

TAGS = [
    {"tag": "jan", "start": "2025-01-01", "end": "2025-02-01"},
    {"tag": "feb", "start": "2025-02-01", "end": "2025-03-01"},
]
JAN = "{c} >= DATE '2025-01-01' AND {c} < DATE '2025-02-01'"
FEB = "{c} >= DATE '2025-02-01' AND {c} < DATE '2025-03-01'"


def test_core_q_11_compose_members_gated_on_their_own_axis(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """net_revenue = revenue - refund_total (fill 0): orders by order_date, refunds by
    refund_date, per tag."""
    res = shop.execute({"metrics": ["net_revenue"], "time_ranges": TAGS}, db_path=worlds["shop"])
    o, r = "order_date", "refund_date"
    want = truth(
        worlds["shop"],
        f"""SELECT
          COALESCE((SELECT SUM(amount) FROM main.orders WHERE {JAN.format(c=o)}), 0)
        - COALESCE((SELECT SUM(refund_amount) FROM main.refunds WHERE {JAN.format(c=r)}), 0),
          COALESCE((SELECT SUM(amount) FROM main.orders WHERE {FEB.format(c=o)}), 0)
        - COALESCE((SELECT SUM(refund_amount) FROM main.refunds WHERE {FEB.format(c=r)}), 0)""",
    )
    assert_rows(rows(res, ["net_revenue__jan", "net_revenue__feb"]), want)


def test_core_q_11_compose_over_unjoined_facts_under_time_ranges(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """revenue_per_visit = revenue / visit_count: visits reach no orders; each side is its own
    branch, gated on its own date (was `no_join_path`)."""
    res = shop.execute(
        {"metrics": ["revenue_per_visit"], "time_ranges": TAGS}, db_path=worlds["shop"]
    )
    o, v = "order_date", "visit_date"
    want = truth(
        worlds["shop"],
        f"""SELECT
          CAST((SELECT SUM(amount) FROM main.orders WHERE {JAN.format(c=o)}) AS DOUBLE)
            / NULLIF((SELECT COUNT(visit_id) FROM main.visits WHERE {JAN.format(c=v)}), 0),
          CAST((SELECT SUM(amount) FROM main.orders WHERE {FEB.format(c=o)}) AS DOUBLE)
            / NULLIF((SELECT COUNT(visit_id) FROM main.visits WHERE {FEB.format(c=v)}), 0)""",
    )
    assert_rows(rows(res, ["revenue_per_visit__jan", "revenue_per_visit__feb"]), want)


MID = {"start": "2025-01-20", "end": "2025-04-01"}  # inside January, on a month boundary


def test_win_frm_15_unwidened_frame_keeps_its_partial_first_bucket(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """WIN-FRM-15 / WIN-QRY-04: a rolling frame counts the buckets the range holds and widens
    nothing, so a start inside January keeps January (its rows from the 20th), as the same
    query without a window shows it (the trim dropped it while February's frame still read
    it)."""
    res = shop.execute(
        {
            "metrics": ["revenue", "revenue_roll3"],
            "group_by": ["metric_time:month"],
            "time_range": MID,
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        """WITH b AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) AS m, SUM(amount) AS v
                   FROM main.orders
                   WHERE order_date >= DATE '2025-01-20' AND order_date < DATE '2025-04-01'
                   GROUP BY 1)
        SELECT m, v, SUM(v) OVER (ORDER BY m ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM b""",
    )
    assert [r[0] for r in want] == ["2025-01-01", "2025-03-01"]  # February has no orders
    assert_rows(rows(res, ["metric_time__month", "revenue", "revenue_roll3"]), want)


@pytest.mark.parametrize(
    ("metric", "time_range"),
    [
        ("revenue_mom", MID),  # a back offset widens the start
        ("revenue_ytd", MID),  # a reset aligns the start to its year
        ("revenue_next", {"start": "2025-01-01", "end": "2025-03-20"}),  # forward: the end
        ("revenue_mom", {**MID, "dimension": "orders.ship_date"}),  # before the axis check
    ],
    ids=["back_offset", "reset", "forward_offset", "other_field"],
)
def test_win_off_05_10_bound_inside_a_widened_bucket_is_grain_too_fine(
    shop: dosi.Engine, metric: str, time_range: dict
) -> None:
    """WIN-OFF-05 / WIN-OFF-10: the widened scan would load the edge month whole (a March
    "next month" read April's first 19 days as April), so a bound inside a bucket on a
    widened side is `grain_too_fine`, as the reference engine has it."""
    with pytest.raises(QueryError) as err:
        shop.compile(
            {"metrics": [metric], "group_by": ["metric_time:month"], "time_range": time_range}
        )
    assert err.value.code == "grain_too_fine"


def test_win_off_10_aligned_bounds_still_widen_and_trim(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """WIN-OFF-10: on month boundaries the lookback is loaded and trimmed away: January's
    month-over-month reads December 2024 from outside the range."""
    res = shop.execute(
        {
            "metrics": ["revenue_mom"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01", "end": "2025-04-01"},
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        """WITH b AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) AS m, SUM(amount) AS v
                   FROM main.orders GROUP BY 1)
        SELECT c.m, CAST(c.v - p.v AS DOUBLE) / NULLIF(p.v, 0) FROM b AS c
        LEFT JOIN b AS p ON p.m = c.m - INTERVAL 1 MONTH
        WHERE c.m >= DATE '2025-01-01' AND c.m < DATE '2025-04-01'""",
    )
    assert_rows(rows(res, ["metric_time__month", "revenue_mom"]), want)


@pytest.mark.parametrize(
    "query",
    [
        {"metrics": ["revenue_mom"], "group_by": ["sessions.active_day"]},
        {
            "metrics": ["revenue_mom"],
            "group_by": ["orders.channel_id"],
            "where_sql": "sessions.active_day > 1",
        },
    ],
    ids=["group_by", "where"],
)
def test_win_qry_time_axis_not_grouped_before_the_lod_restriction(
    lod: dosi.Engine, query: dict
) -> None:
    """A window metric with no time item in group_by is `time_axis_not_grouped` (the fix is to
    add the axis) before the D-LOD field restriction (LOD-NI-08), as the reference orders
    them; with the axis grouped the restriction stays (tests p07_p09)."""
    with pytest.raises(QueryError) as err:
        lod.compile(query)
    assert err.value.code == "time_axis_not_grouped"
    assert err.value.missing_dimensions == ["orders.event_date"]


def test_conf_where_a_compose_member_cannot_read_is_where_needs_context(shop: dosi.Engine) -> None:
    """D-CONFORM / D-LOD context layer: a where_sql field one member of a compose reads
    (orders) and the other cannot (visits) is `where_needs_context` pointing at
    context_filter, as between two metrics (was `no_join_path`, whose hint, a relationship,
    would not help)."""
    with pytest.raises(QueryError) as err:
        shop.compile(
            {
                "metrics": ["revenue_per_visit"],
                "group_by": ["metric_time:month"],
                "where_sql": "orders.status = 'done'",
            }
        )
    assert err.value.code == "where_needs_context"
    assert "context filter" in (err.value.hint or "")


def test_conf_where_on_one_side_of_a_two_dataset_expression_stays_no_join_path(
    conform: dosi.Engine,
) -> None:
    """A metric written as one expression over two datasets (not a D-DERIVE compose) has no
    member branch to filter: `no_join_path`, as the reference engine answers."""
    with pytest.raises(QueryError) as err:
        conform.compile(
            {
                "metrics": ["pay_rate_raw"],
                "group_by": ["metric_time:month"],
                "where_sql": "login.region IS NOT NULL",
            }
        )
    assert err.value.code == "no_join_path"


@pytest.mark.parametrize("field", ["sessions.minutes", "sessions.active_day"])
def test_drv_cmp_06_lod_compose_grouped_outside_its_members_reach(
    lod: dosi.Engine, field: str
) -> None:
    """DRV-CMP-06 / LOD-REL-10: revenue_share (revenue / revenue_grand, both on orders) grouped
    by a sessions field neither member reaches is `unconformed_dimension` naming the members
    (was `no_join_path`, or the D-LOD field restriction for a D-LOD field)."""
    with pytest.raises(QueryError) as err:
        lod.compile({"metrics": ["revenue_share"], "group_by": [field]})
    assert err.value.code == "unconformed_dimension"
    assert "revenue_grand" in str(err.value)


WINDOWS = {
    "baseline": {"start": "2025-01-01", "end": "2025-02-01"},
    "current": {"start": "2025-02-01", "end": "2025-03-01"},
}


def test_attribution_ratio_with_a_distinct_count_side_is_unsupported_first(
    conform: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """Attribution (issue 20 point 4 fallback): a ratio whose numerator is a COUNT DISTINCT
    answers `strategy: unsupported` with the ratio's side, before the time-axis question its
    two datasets raise (was `time_range_needs_dimension`)."""
    res = conform.attribute(
        {"metric": "pay_rate_raw", "dimensions": ["platforms.platform_name"], **WINDOWS},
        db_path=worlds["conform"],
    )
    assert res["strategy"] == "unsupported"
    reason = res["unsupported_reason"]
    assert (reason["code"], reason["side"]) == ("ratio_non_sum_tier", "numerator")


def test_attribution_without_one_time_axis_is_no_primary_time_dimension(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """CORE-Q-07 / issue 20 point 10 for attribution: net_revenue spans orders and refunds,
    each on its own date: `no_primary_time_dimension`, the hint naming the window dimension."""
    with pytest.raises(QueryError) as err:
        shop.attribute(
            {"metric": "net_revenue", "dimensions": ["orders.channel"], **WINDOWS},
            db_path=worlds["shop"],
        )
    assert err.value.code == "no_primary_time_dimension"
    assert "dimension" in (err.value.hint or "")


def test_detail_where_naming_a_metric_is_unsupported_filter(shop: dosi.Engine) -> None:
    """Detail rows: a where_sql naming a metric is `unsupported_filter` (a metric is not a
    dimension), the reference's code; an inline aggregate stays `aggregate_in_where`."""
    q = {"from": "orders", "fields": ["orders.order_id"]}
    with pytest.raises(QueryError) as err:
        shop.compile_select({**q, "where_sql": "revenue > 10"})
    assert err.value.code == "unsupported_filter"
    with pytest.raises(QueryError) as err:
        shop.compile_select({**q, "where_sql": "SUM(orders.amount) > 10"})
    assert err.value.code == "aggregate_in_where"


def test_attribution_unequal_windows_warns_first(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """Attribution: windows of 31 and 28 days carry `unequal_windows` first (the reference's
    warning and order); windows of equal length do not."""
    res = shop.attribute(
        {"metric": "revenue", "dimensions": ["orders.channel"], **WINDOWS}, db_path=worlds["shop"]
    )
    assert res["warnings"][0]["code"] == "unequal_windows"
    same = {
        "baseline": {"start": "2025-01-01", "end": "2025-01-15"},
        "current": {"start": "2025-02-01", "end": "2025-02-15"},
    }
    res = shop.attribute(
        {"metric": "revenue", "dimensions": ["orders.channel"], **same}, db_path=worlds["shop"]
    )
    assert "unequal_windows" not in [w["code"] for w in res["warnings"]]


def test_lod_fxm_fixed_key_rule_before_an_unreadable_time_range(lod: dosi.Engine) -> None:
    """Issue 20 point 8 for plain metrics: a fixed metric whose key the view does not group
    by, under a time_range on a field its dataset cannot reach, is `lod_dimension_not_grouped`
    (the restriction), not `no_join_path` (a relationship would not help)."""
    with pytest.raises(QueryError) as err:
        lod.compile(
            {
                "metrics": ["revenue_by_channel_fixed"],
                "group_by": ["metric_time:month"],
                "time_range": {
                    "start": "2025-01-01",
                    "end": "2025-03-01",
                    "dimension": "sessions.event_date",
                },
            }
        )
    assert err.value.code == "lod_dimension_not_grouped"
