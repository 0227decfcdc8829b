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

from rightkit import assert_rows, rows, truth

import dosi

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
