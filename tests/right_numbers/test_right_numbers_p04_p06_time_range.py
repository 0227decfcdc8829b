"""Issue 20 points 4, 5, 6 and 10 (CORE-Q-07, D-TIME, LOD-FLT-01, WIN-QRY-04): what a
`time_range` filters. 4: without `dimension` it filters the explicit time field the query
groups by; 5: it is a context filter, applied to every branch that can read it (the others
unfiltered, with a warning; an error only when none can); 6: a dimension that is not a window
metric's axis is `not_implemented` for it; 10: no primary time for the fallback is
`no_primary_time_dimension`. Expected rows: hand SQL over the shop fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from rightkit import assert_rows, rows, truth

import dosi
from dosi.errors import QueryError

R = {"start": "2025-01-01", "end": "2025-04-01"}
IN_R = "{c} >= DATE '2025-01-01' AND {c} < DATE '2025-04-01'"


@pytest.mark.parametrize("grain", ["month", "day", None])
def test_core_q_07_range_filters_the_grouped_time_field(
    shop: dosi.Engine, worlds: dict[str, Path], grain: str | None
) -> None:
    """CORE-Q-07: grouped by ship_date, the range is on ship_date (today: order_date, so the
    2025-04 ship month of a March order appears and January loses a December order)."""
    g = (
        {"field": "orders.ship_date"}
        if grain is None
        else {"field": "orders.ship_date", "grain": grain}
    )
    key = (
        "ship_date" if grain in (None, "day") else f"CAST(DATE_TRUNC('{grain}', ship_date) AS DATE)"
    )
    res = shop.execute(
        {"metrics": ["revenue", "order_count"], "group_by": [g], "time_range": R},
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        f"SELECT {key}, SUM(amount), COUNT(order_id) FROM main.orders "
        f"WHERE {IN_R.format(c='ship_date')} GROUP BY 1",
    )
    assert_rows(rows(res), want)


def test_core_q_07_range_filters_a_joined_time_field(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    res = shop.execute(
        {
            "metrics": ["revenue"],
            "time_range": R,
            "group_by": [{"field": "customers.signup_date", "grain": "month"}],
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        "SELECT CAST(DATE_TRUNC('month', c.signup_date) AS DATE), SUM(o.amount) FROM "
        "main.orders o LEFT JOIN main.customers c ON o.customer_id = c.customer_id "
        f"WHERE {IN_R.format(c='c.signup_date')} GROUP BY 1",
    )
    assert_rows(rows(res), want)


def test_core_q_07_two_grouped_time_fields_need_a_dimension(shop: dosi.Engine) -> None:
    with pytest.raises(QueryError) as err:
        shop.compile(
            {
                "metrics": ["revenue"],
                "time_range": R,
                "group_by": [
                    {"field": "orders.ship_date", "grain": "month"},
                    {"field": "orders.order_date", "grain": "month"},
                ],
            }
        )
    assert err.value.code == "time_range_needs_dimension"


def test_core_q_07_tagged_ranges_gate_the_grouped_time_field(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """CORE-Q-07 / CORE-Q-11: tagged ranges without `dimension` gate the grouped ship_date
    too (today: order_date, so each tag counts orders placed, not shipped, in its range)."""
    res = shop.execute(
        {
            "metrics": ["revenue"],
            "group_by": [{"field": "orders.ship_date", "grain": "quarter"}],
            "time_ranges": [
                {"tag": "h1", "start": "2025-01-01", "end": "2025-07-01"},
                {"tag": "q1", **R},
            ],
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        "SELECT CAST(DATE_TRUNC('quarter', ship_date) AS DATE), "
        "SUM(CASE WHEN ship_date >= DATE '2025-01-01' AND ship_date < DATE '2025-07-01' "
        f"THEN amount END), SUM(CASE WHEN {IN_R.format(c='ship_date')} THEN amount END) "
        "FROM main.orders WHERE ship_date >= DATE '2025-01-01' AND ship_date < DATE '2025-07-01' "
        "GROUP BY 1",
    )
    assert_rows(rows(res), want)


def test_core_q_07_no_grouped_time_item_falls_back_per_metric(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """Each metric's primary time (shipped_revenue's D-TIME is ship_date), per branch."""
    res = shop.execute(
        {"metrics": ["revenue", "shipped_revenue"], "time_range": R}, db_path=worlds["shop"]
    )
    want = truth(
        worlds["shop"],
        f"SELECT (SELECT SUM(amount) FROM main.orders WHERE {IN_R.format(c='order_date')}), "
        f"(SELECT SUM(amount) FROM main.orders WHERE {IN_R.format(c='ship_date')})",
    )
    assert_rows(rows(res), want)


def test_lod_flt_01_unreadable_branch_is_unfiltered_with_a_warning(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    """A range on orders.ship_date: buyers reads it; visitors (visits reach orders only
    through a fan-out) is computed unfiltered and named in a structured warning."""
    res = shop.execute(
        {
            "metrics": ["buyers", "visitors"],
            "group_by": [{"field": "customers.segment"}],
            "time_range": {**R, "dimension": "orders.ship_date"},
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        f"""
        WITH b AS (SELECT c.segment s, COUNT(DISTINCT o.customer_id) n FROM main.orders o
                   LEFT JOIN main.customers c ON o.customer_id = c.customer_id
                   WHERE {IN_R.format(c="o.ship_date")} GROUP BY 1),
             v AS (SELECT c.segment s, COUNT(DISTINCT v.customer_id) n FROM main.visits v
                   LEFT JOIN main.customers c ON v.customer_id = c.customer_id GROUP BY 1),
             k AS (SELECT s FROM b UNION SELECT s FROM v)
        SELECT k.s, COALESCE(b.n, 0), COALESCE(v.n, 0) FROM k
        LEFT JOIN b ON b.s IS NOT DISTINCT FROM k.s LEFT JOIN v ON v.s IS NOT DISTINCT FROM k.s""",
    )
    assert_rows(rows(res), want)
    warned = [w for w in res["warnings"] if "visitors" in w.get("message", "")]
    assert warned, res["warnings"]


def test_lod_flt_01_no_branch_reads_it_is_an_error(shop: dosi.Engine) -> None:
    with pytest.raises(QueryError) as err:
        shop.compile(
            {"metrics": ["visitors"], "time_range": {**R, "dimension": "orders.ship_date"}}
        )
    assert err.value.code in ("no_join_path", "fan_out_risk")


@pytest.mark.parametrize(
    "metric",
    ["revenue_mom", "revenue_cum", "revenue_roll3", "revenue_ytd", "revenue_next", "revenue_first"],
)
@pytest.mark.parametrize("dim", ["orders.ship_date", "customers.signup_date"])
def test_win_qry_04_range_off_the_window_axis_is_not_implemented(
    shop: dosi.Engine, metric: str, dim: str
) -> None:
    """WIN-QRY-04: the window cannot widen or trim along a dimension that is not its axis
    (today: +800% month-over-month from a truncated previous month)."""
    with pytest.raises(QueryError) as err:
        shop.compile(
            {
                "metrics": [metric],
                "group_by": [{"field": "metric_time", "grain": "month"}],
                "time_range": {"start": "2025-01-01", "end": "2025-05-01", "dimension": dim},
            }
        )
    assert err.value.code == "not_implemented"
    assert metric in err.value.metrics


def test_win_qry_04_range_on_the_axis_widens_and_trims(
    shop: dosi.Engine, worlds: dict[str, Path]
) -> None:
    res = shop.execute(
        {
            "metrics": ["revenue_mom"],
            "group_by": [{"field": "metric_time", "grain": "month"}],
            "time_range": {
                "start": "2025-01-01",
                "end": "2025-05-01",
                "dimension": "orders.order_date",
            },
        },
        db_path=worlds["shop"],
    )
    want = truth(
        worlds["shop"],
        """
        WITH s AS (SELECT CAST(DATE_TRUNC('month', order_date) AS DATE) k, SUM(amount) v
                   FROM main.orders GROUP BY 1)
        SELECT c.k, CAST(c.v - p.v AS DOUBLE) / NULLIF(p.v, 0) FROM s c
        LEFT JOIN s p ON p.k = CAST(c.k - INTERVAL 1 MONTH AS DATE)
        WHERE c.k >= DATE '2025-01-01' AND c.k < DATE '2025-05-01'""",
    )
    assert_rows(rows(res), want)


NOTIME = """
version: 0.2.0.dev0
semantic_model:
  - name: notime
    datasets:
      - name: events
        source: main.events
        fields:
          - {name: event_id, expression: {dialects: [{dialect: ANSI_SQL, expression: event_id}]}}
          - {name: created_at, expression: {dialects: [{dialect: ANSI_SQL, expression: created_at}]}, datatype: Date}
          - {name: updated_at, expression: {dialects: [{dialect: ANSI_SQL, expression: updated_at}]}, datatype: Date}
    metrics:
      - name: events
        expression: {dialects: [{dialect: ANSI_SQL, expression: COUNT(events.event_id)}]}
"""


def test_no_primary_time_for_the_range_fallback() -> None:
    """Two is_time fields, no D-TIME: the fallback has no column (keeping the hint that names
    the fields)."""
    eng = dosi.Engine(model_text=NOTIME)
    with pytest.raises(QueryError) as err:
        eng.compile({"metrics": ["events"], "time_range": R})
    assert err.value.code == "no_primary_time_dimension"
    assert err.value.hint and set(err.value.candidates) >= {
        "events.created_at",
        "events.updated_at",
    }


def test_no_primary_time_for_the_tagged_range_fallback() -> None:
    """CORE-Q-11 beside point 10: tagged ranges without `dimension` on a metric without a
    primary time have no column to gate either."""
    eng = dosi.Engine(model_text=NOTIME)
    with pytest.raises(QueryError) as err:
        eng.compile({"metrics": ["events"], "time_ranges": [{"tag": "q1", **R}]})
    assert err.value.code == "no_primary_time_dimension"
    assert set(err.value.candidates) >= {"events.created_at", "events.updated_at"}
