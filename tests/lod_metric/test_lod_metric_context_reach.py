"""context_filter applies to the metrics that can read it (D-LOD filter placement; the reference
engine's rule): a metric whose dataset cannot reach the context's fields is computed without
it, and a query none of whose metrics can read the context is `context_unreadable`.
Expected values are computed in plain Python from the kit's rows. Requirement IDs: LOD-FLT-01
(context layer), CORE-Q-10 (context_filter query key)."""

from __future__ import annotations

import lodmetrickit as kit
import pytest

import dosi


def test_context_applies_only_to_metrics_that_read_it(lod_engine: dosi.Engine) -> None:
    res = lod_engine.execute(
        {"metrics": ["revenue", "refunds"], "context_filter": "orders.user_id <> 'B'"}
    )
    want_revenue = sum(r[4] for r in kit.ORDERS if r[1] != "B")
    want_refunds = sum(r[4] for r in kit.REFUNDS)  # refunds never reach orders: unfiltered
    assert res["rows"] == [{"revenue": want_revenue, "refunds": want_refunds}]


def test_context_per_month_beside_an_unreading_metric(lod_engine: dosi.Engine) -> None:
    res = lod_engine.execute(
        {
            "metrics": ["revenue", "refunds"],
            "group_by": ["metric_time:month"],
            "context_filter": "orders.user_id <> 'B'",
        }
    )
    got = {str(r["metric_time__month"])[:7]: (r["revenue"], r["refunds"]) for r in res["rows"]}
    want: dict[str, tuple[float | None, float | None]] = {}
    for _, user, _, day, amount in kit.ORDERS:
        if user != "B":
            rev, ref = want.get(day[:7], (0.0, None))
            want[day[:7]] = ((rev or 0.0) + amount, ref)
    for _, _, _, day, amount in kit.REFUNDS:
        rev, ref = want.get(day[:7], (None, None))
        want[day[:7]] = (rev, (ref or 0.0) + amount)
    assert got == want


def test_context_no_metric_can_read_is_context_unreadable(lod_engine: dosi.Engine) -> None:
    with pytest.raises(dosi.QueryError) as err:
        lod_engine.execute({"metrics": ["refunds"], "context_filter": "orders.user_id <> 'B'"})
    assert err.value.code == "context_unreadable"
    assert "orders.user_id" in str(err.value)


def test_where_sql_still_needs_every_metric_to_read_it(lod_engine: dosi.Engine) -> None:
    """The dimension filter is not skipped: the message points at context_filter."""
    with pytest.raises(dosi.QueryError) as err:
        lod_engine.execute(
            {"metrics": ["revenue", "refunds"], "where_sql": "orders.user_id <> 'B'"}
        )
    assert err.value.code == "where_needs_context"
