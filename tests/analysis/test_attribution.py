"""Attribution (`Engine.attribute`): two windows, one statement, exact / approximate status
(SURF-ATTR-01, -02, -04 as far as this engine has LOD, -05 for the metric kinds it has)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi.errors import QueryError

CUR = {"start": "2024-03-01", "end": "2024-04-01"}
BASE = {"start": "2024-01-01", "end": "2024-02-01"}


def _window_sql(col: str, value: str, w: dict[str, str], join: str = "") -> str:
    return (
        f"SELECT {col} AS k, {value} AS v FROM orders o {join} WHERE o.order_date >= "
        f"DATE '{w['start']}' AND o.order_date < DATE '{w['end']}' GROUP BY ALL"
    )


def _by(ref: Any, col: str, value: str, w: dict[str, str], join: str = "") -> dict[Any, float]:
    return {k: float(v) for k, v in ref.rows(_window_sql(col, value, w, join))}


def _attr(shop: Any, db: Path, metric: str, dims: list[str], **kw: Any) -> dict[str, Any]:
    req = {"metric": metric, "current": CUR, "baseline": BASE, "dimensions": dims, **kw}
    return shop.attribute(req, db_path=db)


def test_term_wise_sum_matches_hand_written_sql(shop: Any, shop_db: Path, shop_ref: Any) -> None:
    """SURF-ATTR-01: SUM metric, exact; per-value deltas and contributions from plain SQL."""
    out = _attr(shop, shop_db, "revenue", ["orders.channel", "customers.segment"])
    assert out["strategy"] == "term_wise" and out["attribution"] == "exact"
    assert out["attributable"] is True
    base = _by(shop_ref, "1", "SUM(o.amount)", BASE)[1]
    cur = _by(shop_ref, "1", "SUM(o.amount)", CUR)[1]
    t = out["total_change"]
    assert t["baseline_value"] == pytest.approx(base)
    assert t["current_value"] == pytest.approx(cur)
    assert t["delta"] == pytest.approx(cur - base)
    assert t["pct_change"] == pytest.approx((cur - base) / base * 100)
    join = "LEFT JOIN customers c ON o.customer_id = c.customer_id"
    for dim, col, j in (
        ("orders.channel", "o.channel", ""),
        ("customers.segment", "c.segment", join),
    ):
        b = _by(shop_ref, col, "SUM(o.amount)", BASE, j)
        c = _by(shop_ref, col, "SUM(o.amount)", CUR, j)
        values = {v["value"]: v for v in out["per_dimension"][dim]["values"]}
        assert set(values) == {"(null)" if k is None else k for k in {*b, *c}}
        for k in {*b, *c}:
            v = values["(null)" if k is None else k]
            assert v["baseline_value"] == pytest.approx(b.get(k, 0.0))
            assert v["current_value"] == pytest.approx(c.get(k, 0.0))
            assert v["contribution_pct"] == pytest.approx(
                (c.get(k, 0.0) - b.get(k, 0.0)) / (cur - base) * 100
            )
        assert out["per_dimension"][dim]["reconciliation"]["passed"] is True
        score = max(abs(v["contribution_pct"]) for v in values.values()) / 100
        assert out["per_dimension"][dim]["score"] == pytest.approx(score)
    assert [r["score"] for r in out["dimension_ranking"]] == sorted(
        (r["score"] for r in out["dimension_ranking"]), reverse=True
    )
    web = next(v for v in out["per_dimension"]["orders.channel"]["values"] if v["value"] == "web")
    assert web["drill_down"] == {"where_sql": "orders.channel = 'web'"}


def test_one_statement_for_both_windows_and_all_dimensions(shop: Any, shop_db: Path) -> None:
    """SURF-ATTR-01: the comparison runs as ONE statement."""
    out = _attr(shop, shop_db, "net_revenue", ["orders.channel", "orders.status"])
    assert out["comparison_metadata"]["queries_executed"] == 1
    assert len(sqlglot.parse(out["sql"], read="duckdb")) == 1
    assert out["comparison_metadata"]["equal_length_windows"] is True
    assert out["comparison_metadata"]["params"] == {}
    assert out["attribution"] == "exact"  # a linear combination of SUMs


def test_ratio_is_mix_shift_and_approximate(shop: Any, shop_db: Path, shop_ref: Any) -> None:
    """SURF-ATTR-05: a ratio of SUM / COUNT is never exact; mix + rate add up to the change."""
    out = _attr(shop, shop_db, "avg_order_value", ["orders.channel"])
    assert out["strategy"] == "mix_shift" and out["attribution"] == "approximate"
    b = _by(shop_ref, "1", "SUM(o.amount) / COUNT(o.order_id)", BASE)[1]
    c = _by(shop_ref, "1", "SUM(o.amount) / COUNT(o.order_id)", CUR)[1]
    assert out["total_change"]["baseline_value"] == pytest.approx(b)
    assert out["total_change"]["current_value"] == pytest.approx(c)
    values = out["per_dimension"]["orders.channel"]["values"]
    assert sum(v["delta"] for v in values) == pytest.approx(c - b)
    for v in values:
        assert v["mix_effect"] + v["rate_effect"] == pytest.approx(v["delta"])
    base_n = _by(shop_ref, "o.channel", "SUM(o.amount)", BASE)
    base_d = _by(shop_ref, "o.channel", "COUNT(o.order_id)", BASE)
    cur_n = _by(shop_ref, "o.channel", "SUM(o.amount)", CUR)
    cur_d = _by(shop_ref, "o.channel", "COUNT(o.order_id)", CUR)
    web = next(v for v in values if v["value"] == "web")
    br, cr = base_n["web"] / base_d["web"], cur_n["web"] / cur_d["web"]
    bs, cs = base_d["web"] / sum(base_d.values()), cur_d["web"] / sum(cur_d.values())
    assert web["baseline_rate"] == pytest.approx(br)
    assert web["baseline_share"] == pytest.approx(bs)
    # LMDI: L(cv, bv) * ln(share ratio) and L(cv, bv) * ln(rate ratio)
    lmean = (cs * cr - bs * br) / math.log((cs * cr) / (bs * br))
    assert web["mix_effect"] == pytest.approx(lmean * math.log(cs / bs))
    assert web["rate_effect"] == pytest.approx(lmean * math.log(cr / br))
    totals = out["factor_totals"]
    assert totals["mix_effect"] + totals["rate_effect"] == pytest.approx(c - b)


@pytest.mark.parametrize(
    ("metric", "reason"),
    [("customer_count", "non_sum_tier_measure"), ("revenue_rank", "window_metric")],
)
def test_unsupported_metrics_are_not_attributable(
    shop: Any, shop_db: Path, metric: str, reason: str
) -> None:
    """COUNT(DISTINCT) segments overlap; non-offset windows transform a series."""
    out = _attr(shop, shop_db, metric, ["orders.channel"])
    assert out["attributable"] is False and out["strategy"] == "unsupported"
    assert out["unsupported_reason"]["code"] == reason
    assert out["comparison_metadata"]["queries_executed"] == 0
    listed = {m["name"]: m for m in shop.metrics()}
    assert listed[metric]["attributable"] is False


def test_offset_window_attributes_its_base_aggregate(shop: Any, shop_db: Path) -> None:
    mom = _attr(shop, shop_db, "revenue_mom", ["orders.channel"])
    rev = _attr(shop, shop_db, "revenue", ["orders.channel"])
    assert mom["attribution"] == "approximate" and mom["window_mapping"]["family"] == "offset"
    assert mom["total_change"] == rev["total_change"]


def test_bad_dimension_is_skipped_with_a_warning(shop: Any, shop_db: Path) -> None:
    out = _attr(
        shop, shop_db, "refund_total", ["orders.chanel", "products.category", "orders.channel"]
    )
    skipped = [w["dimension"] for w in out["warnings"] if w["code"] == "dimension_skipped"]
    assert skipped == ["orders.chanel", "products.category"]
    assert out["selected_dimensions"] == ["orders.channel"]


def test_dimensions_required_lists_recommended_candidates(shop: Any) -> None:
    """SURF-ATTR-02: the candidate list leaves out is_dimension: false fields."""
    with pytest.raises(QueryError) as err:
        shop.attribute({"metric": "revenue", "current": CUR, "baseline": BASE})
    assert err.value.code == "dimensions_required"
    assert "orders.channel" in err.value.candidates
    assert "orders.amount" not in err.value.candidates


@pytest.mark.parametrize(
    ("req", "code"),
    [
        (
            {
                "metric": "revenu",
                "current": CUR,
                "baseline": BASE,
                "dimensions": ["orders.channel"],
            },
            "unknown_metric",
        ),
        (
            {"metric": "revenue", "baseline": BASE, "dimensions": ["orders.channel"]},
            "invalid_query",
        ),
        (
            {
                "metric": "revenue",
                "current": CUR,
                "baseline": BASE,
                "dimensions": ["orders.channel"],
                "x": 1,
            },
            "unknown_query_key",
        ),
        (
            {
                "metric": "revenue",
                "current": {"start": "2024-01-01"},
                "baseline": BASE,
                "dimensions": [],
            },
            "invalid_query",
        ),
    ],
)
def test_attribution_request_errors(shop: Any, req: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as err:
        shop.attribute(req)
    assert err.value.code == code


def test_listed_attributable_flags(shop: Any) -> None:
    """SURF-CLI-03: `attributable` in the catalog; no time axis or no decomposition -> false."""
    flags = {m["name"]: m["attributable"] for m in shop.metrics()}
    assert {n for n, ok in flags.items() if not ok} == {
        "customer_count",  # COUNT(DISTINCT)
        "active_users",  # COUNT(DISTINCT)
        "items_sold",  # order_items has no time axis
        "line_revenue",
        "order_line_count",
        "revenue_rolling_3m",  # frame / rank / value windows
        "revenue_moving_avg",  # a rolling frame whose width is a D-PARAM
        "revenue_ytd",
        "revenue_running",
        "revenue_rank",
        "first_month_revenue",
        "first_order_date",  # MIN (the base of the D-LOD field orders.first_order_day)
        "close_rate_rank",  # a rank window over close_rate (D-DERIVE window.base)
        # orders and refunds each have their own time axis: no single one for the windows
        # (the reference engine lists it attributable, with per-branch axes)
        "revenue_net_of_refunds",
    }


def test_metric_without_time_axis_needs_window_dimensions(
    shop: Any, shop_db: Path, shop_ref: Any
) -> None:
    with pytest.raises(QueryError) as err:
        _attr(shop, shop_db, "items_sold", ["orders.channel"])
    assert err.value.code == "no_primary_time_dimension"  # the reference code (issue 20 point 10)
    assert "__dosi" not in err.value.message
    dim = {"dimension": "orders.order_date"}
    out = shop.attribute(
        {
            "metric": "items_sold",
            "current": {**CUR, **dim},
            "baseline": {**BASE, **dim},
            "dimensions": ["orders.channel"],
        },
        db_path=shop_db,
    )
    join = "JOIN order_items i ON i.order_id = o.order_id"
    assert out["total_change"]["current_value"] == pytest.approx(
        _by(shop_ref, "1", "SUM(i.quantity)", CUR, join)[1]
    )


def test_filled_metric_has_no_entered_or_exited_segments(shop: Any, shop_db: Path) -> None:
    """D-FILL: a segment missing in one window reads the fill value (0), a normal segment."""
    out = shop.attribute(
        {
            "metric": "refund_total",
            "current": {"start": "2024-06-01", "end": "2024-07-01"},
            "baseline": BASE,
            "dimensions": ["customers.segment"],
        },
        db_path=shop_db,
    )
    values = out["per_dimension"]["customers.segment"]["values"]
    assert {v["segment_kind"] for v in values} == {"normal"}
    assert any(v["current_value"] == 0 for v in values)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cur=st.integers(min_value=0, max_value=34),
    base=st.integers(min_value=0, max_value=34),
    months=st.integers(min_value=1, max_value=3),
    metric=st.sampled_from(["revenue", "order_count", "net_revenue", "refund_total"]),
)
def test_segments_add_up_to_the_total(
    shop: Any, shop_db: Path, cur: int, base: int, months: int, metric: str
) -> None:
    """Invariant of a term-wise split: per dimension, the segments' deltas sum to the total."""

    def window(start: int) -> dict[str, str]:
        def month(i: int) -> str:
            return f"{2023 + i // 12}-{i % 12 + 1:02d}-01"

        return {"start": month(start), "end": month(start + months)}

    out = shop.attribute(
        {
            "metric": metric,
            "current": window(cur),
            "baseline": window(base),
            "dimensions": ["orders.channel", "customers.segment"],
        },
        db_path=shop_db,
    )
    total = out["total_change"]["delta"]
    for dim in out["selected_dimensions"]:
        entry = out["per_dimension"][dim]
        assert sum(v["delta"] for v in entry["values"]) == pytest.approx(total, abs=1e-6)
        assert entry["reconciliation"]["passed"]
