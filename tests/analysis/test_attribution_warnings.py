"""Attribution warnings that tell the caller a number is degenerate (issue 20 leftovers,
checked against the reference engine's codes): `zero_total_delta` (no contribution shares of
a zero change), `null_metric_value` (an empty window counts as 0), and `lmdi_fallback` (a
zero share or rate where the LMDI split is undefined: the segment's change is one term).
Expected numbers from hand SQL on the shop tables and by hand on a six-visit table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import pytest

import dosi
from dosi.errors import QueryError

CUR = {"start": "2024-03-01", "end": "2024-04-01"}


def _codes(out: dict[str, Any]) -> list[str]:
    return [w["code"] for w in out["warnings"]]


def test_zero_total_delta_omits_contribution_shares(
    shop: Any, shop_db: Path, shop_ref: Any
) -> None:
    req = {"metric": "revenue", "current": CUR, "baseline": CUR, "dimensions": ["orders.channel"]}
    out = shop.attribute(req, db_path=shop_db)
    total = shop_ref.scalar(
        "SELECT SUM(amount) FROM main.orders "
        "WHERE order_date >= DATE '2024-03-01' AND order_date < DATE '2024-04-01'"
    )
    tc = out["total_change"]
    assert tc["delta"] == 0 and tc["baseline_value"] == pytest.approx(float(total))
    assert _codes(out) == ["zero_total_delta"]
    values = out["per_dimension"]["orders.channel"]["values"]
    assert values and all(v["contribution_pct"] is None and v["delta"] == 0 for v in values)


def test_an_empty_window_is_null_metric_value(shop: Any, shop_db: Path, shop_ref: Any) -> None:
    base = {"start": "2019-01-01", "end": "2019-02-01"}  # before the first order
    req = {"metric": "revenue", "current": CUR, "baseline": base, "dimensions": ["orders.channel"]}
    out = shop.attribute(req, db_path=shop_db)
    assert _codes(out) == ["null_metric_value"]
    assert "baseline" in out["warnings"][0]["message"]
    tc = out["total_change"]
    assert tc["baseline_value"] == 0.0 and tc["pct_change"] is None
    values = out["per_dimension"]["orders.channel"]["values"]
    assert all(v["segment_kind"] == "entered" for v in values)
    assert sum(v["contribution_pct"] for v in values) == pytest.approx(100.0)


VISITS = [  # (id, date, region, converted): January east 1/2 and west 1/1, March west 0/2,
    (1, "2024-01-01", "east", 1),  # April east 2/2 and west 1/1
    (2, "2024-01-02", "east", 0),
    (3, "2024-01-03", "west", 1),
    (4, "2024-03-01", "west", 0),
    (5, "2024-03-02", "west", 0),
    (6, "2024-04-01", "east", 1),
    (7, "2024-04-02", "east", 1),
    (8, "2024-04-03", "west", 1),
]
MODEL = """
version: 0.2.0.dev0
semantic_model:
- name: visits_mini
  datasets:
  - name: visits
    source: visits
    primary_key: [visit_id]
    fields:
    - {name: visit_id, expression: {dialects: [{dialect: ANSI_SQL, expression: visit_id}]}}
    - name: visit_date
      expression: {dialects: [{dialect: ANSI_SQL, expression: visit_date}]}
      dimension: {is_time: true}
    - name: region
      expression: {dialects: [{dialect: ANSI_SQL, expression: region}]}
      dimension: {is_time: false}
    - {name: converted, expression: {dialects: [{dialect: ANSI_SQL, expression: converted}]}}
  metrics:
  - name: close_rate
    expression:
      dialects: [{dialect: ANSI_SQL, expression: SUM(visits.converted) / COUNT(visits.visit_id)}]
"""


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    db = tmp_path_factory.mktemp("visits") / "v.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE visits (visit_id INT, visit_date DATE, region VARCHAR, converted INT)"
    )
    con.executemany("INSERT INTO visits VALUES (?, ?, ?, ?)", VISITS)
    con.close()
    return dosi.Engine(model_text=MODEL), db


def _rate(visits: tuple[Any, Path], base: str, cur: str) -> dict[str, Any]:
    engine, db = visits
    month = {"01": "2024-02-01", "03": "2024-04-01", "04": "2024-05-01"}
    req = {
        "metric": "close_rate",
        "baseline": {"start": f"2024-{base}-01", "end": month[base]},
        "current": {"start": f"2024-{cur}-01", "end": month[cur]},
        "dimensions": ["visits.region"],
    }
    return engine.attribute(req, db_path=db)


def test_a_zero_rate_is_one_fallback_term(visits: tuple[Any, Path]) -> None:
    """January 2/3 -> March 0/2. West's rate falls to 0 (no log): its share-weighted value
    1/3 -> 0 is one `fallback` term; east is absent in March (exited, 1/3 -> 0)."""
    out = _rate(visits, "01", "03")
    assert out["strategy"] == "mix_shift"
    assert out["total_change"]["delta"] == pytest.approx(-2 / 3)
    assert "lmdi_fallback" in _codes(out)
    warn = next(w for w in out["warnings"] if w["code"] == "lmdi_fallback")
    assert warn["dimension"] == "visits.region"
    by = {v["value"]: v for v in out["per_dimension"]["visits.region"]["values"]}
    assert by["west"]["segment_kind"] == "fallback" and by["west"]["mix_effect"] is None
    assert by["west"]["delta"] == pytest.approx(-1 / 3)
    assert by["east"]["segment_kind"] == "exited" and by["east"]["rate_effect"] is None
    f = out["per_dimension"]["visits.region"]["factor_totals"]
    assert f["fallback"] == pytest.approx(-1 / 3) and f["exited"] == pytest.approx(-1 / 3)
    assert f["mix_effect"] == 0 and f["rate_effect"] == 0
    assert f["residual"] == pytest.approx(0.0, abs=1e-12)


def test_positive_shares_and_rates_split_by_lmdi(visits: tuple[Any, Path]) -> None:
    """January -> April: every share and rate positive, no fallback; mix + rate add up to
    the delta, each from the LMDI formula by hand (east: share 2/3 -> 2/3, rate 1/2 -> 1)."""
    out = _rate(visits, "01", "04")
    assert "lmdi_fallback" not in _codes(out)
    by = {v["value"]: v for v in out["per_dimension"]["visits.region"]["values"]}
    bv, cv = 2 / 3 * 1 / 2, 2 / 3 * 1
    lmean = (cv - bv) / math.log(cv / bv)
    assert by["east"]["rate_effect"] == pytest.approx(lmean * math.log(1 / (1 / 2)))
    assert by["east"]["mix_effect"] == pytest.approx(0.0, abs=1e-12)
    f = out["per_dimension"]["visits.region"]["factor_totals"]
    assert f["mix_effect"] + f["rate_effect"] == pytest.approx(out["total_change"]["delta"])


def test_context_filter_is_taken_and_skipped_with_a_warning(shop: Any, shop_db: Path) -> None:
    """The reference engine takes `context_filter` and ignores it; dosi gives the same
    numbers and says so (`context_skipped`), so the caller never reads a filtered answer."""
    base = {"start": "2024-01-01", "end": "2024-02-01"}
    req = {"metric": "revenue", "current": CUR, "baseline": base, "dimensions": ["orders.channel"]}
    plain = shop.attribute(req, db_path=shop_db)
    ctx = shop.attribute({**req, "context_filter": "orders.status = 'completed'"}, db_path=shop_db)
    assert _codes(ctx) == ["context_skipped"] and "where_sql" in ctx["warnings"][0]["message"]
    assert ctx["total_change"] == plain["total_change"]
    assert ctx["per_dimension"] == plain["per_dimension"]


@pytest.mark.parametrize(
    ("base", "cur", "window"), [("02", "03", "baseline"), ("03", "02", "current")]
)
def test_a_ratio_over_an_empty_window_is_denominator_nonpositive(
    visits: tuple[Any, Path], base: str, cur: str, window: str
) -> None:
    """February has no visit: close_rate is 0 / 0 there, never a delta against 0."""
    engine, db = visits
    ends = {"02": "2024-03-01", "03": "2024-04-01"}
    req = {
        "metric": "close_rate",
        "baseline": {"start": f"2024-{base}-01", "end": ends[base]},
        "current": {"start": f"2024-{cur}-01", "end": ends[cur]},
        "dimensions": ["visits.region"],
    }
    with pytest.raises(QueryError) as err:
        engine.attribute(req, db_path=db)
    assert err.value.code == "denominator_nonpositive" and window in err.value.message
