"""Issue 26 item 4: one Vega-Lite spec per result, drawn by every surface. Each shape of
result is built from a real query on the shop database and its spec's structure asserted:
series count, encodings, axis titles, independent y scales, small multiples; the charted
values are checked against hand-written SQL."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dosi import Engine
from dosi.frontends.charts.columns import time_iso
from dosi.frontends.charts.spec import chart_spec

YEAR_2024 = {"start": "2024-01-01", "end": "2025-01-01"}


def _run(engine: Engine, db: Path, **q: Any) -> Any:
    return engine.execute(q, db_path=db)


def _meta(spec: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = spec["usermeta"]["dosi"]
    return meta


def enc_sort(spec: dict[str, Any]) -> list[str]:
    order: list[str] = spec["encoding"]["color"]["sort"]
    return order


def test_time_by_category_is_one_line_per_channel(engine: Engine, shop_db: Path) -> None:
    """`-g orders.channel -g metric_time:quarter`: x is time (wherever it stands in the
    group-by), one line per channel, the grain in the axis title, tooltips with formats."""
    r = _run(
        engine,
        shop_db,
        metrics=["revenue"],
        group_by=["orders.channel", "metric_time:quarter"],
        time_range=YEAR_2024,
    )
    spec = chart_spec(r)
    meta = _meta(spec)
    assert (meta["kind"], meta["layout"], meta["series_field"]) == ("line", "single", "channel")
    assert meta["series"] == ["mobile", "store", "web", "NULL"]  # NULL last, as in the table
    assert enc_sort(spec) == meta["series"]
    enc = spec["encoding"]
    assert spec["mark"]["type"] == "line"
    assert enc["x"]["field"] == "metric_time__quarter" and enc["x"]["type"] == "temporal"
    assert enc["x"]["timeUnit"] == "utcyearquarter"
    assert enc["x"]["title"] == "metric_time (quarter)"
    assert enc["y"]["title"] == "revenue" and enc["color"]["field"] == "channel"
    tips = {t["field"]: t.get("format") for t in enc["tooltip"]}
    assert tips == {"metric_time__quarter": "%Y Q%q", "channel": None, "revenue": ",.2f"}
    assert spec["title"]["text"] == "revenue by quarter per channel"
    # the charted numbers are the warehouse's, by hand SQL
    con = duckdb.connect(str(shop_db), read_only=True)
    expected = {
        (ch or "NULL", f"{q.isoformat()}T00:00:00Z"): float(v)
        for ch, q, v in con.execute(
            "SELECT channel, CAST(date_trunc('quarter', order_date) AS DATE), SUM(amount) "
            "FROM orders WHERE order_date >= DATE '2024-01-01' AND order_date < DATE "
            "'2025-01-01' GROUP BY ALL"
        ).fetchall()
    }
    con.close()
    got = {(v["channel"], v["metric_time__quarter"]): v["revenue"] for v in spec["data"]["values"]}
    assert got == pytest.approx(expected)
    assert len({k[0] for k in got}) == 4 and len(got) == 16


def test_two_metrics_of_different_scales_get_two_y_axes(engine: Engine, shop_db: Path) -> None:
    """revenue (~1e5) and order_count (~1e2) per month: a layer, y independent, left/right."""
    r = _run(
        engine,
        shop_db,
        metrics=["revenue", "order_count"],
        group_by=["metric_time:month"],
        time_range=YEAR_2024,
    )
    spec = chart_spec(r, descriptions={"revenue": "Gross revenue."})
    assert _meta(spec)["layout"] == "dual"
    assert spec["resolve"] == {"scale": {"y": "independent"}}
    ys = [layer["encoding"]["y"] for layer in spec["layer"]]
    assert [y["field"] for y in ys] == ["revenue", "order_count"]
    assert [y["axis"]["orient"] for y in ys] == ["left", "right"]
    assert [y["title"] for y in ys] == ["revenue", "order_count"]
    assert {layer["encoding"]["x"]["title"] for layer in spec["layer"]} == {"metric_time (month)"}
    assert spec["title"]["subtitle"] == ["revenue: Gross revenue."]
    tips = {t["field"]: t.get("format") for t in spec["layer"][1]["encoding"]["tooltip"]}
    assert tips["order_count"] == ",d"  # an integer count
    assert len(spec["data"]["values"]) == r["row_count"] > 10


def test_many_metrics_per_series_are_small_multiples(engine: Engine, shop_db: Path) -> None:
    """Three metrics per channel: one row per metric, each its own y axis, x shared."""
    r = _run(
        engine,
        shop_db,
        metrics=["revenue", "order_count", "close_rate"],
        group_by=["orders.channel", "metric_time:quarter"],
        time_range=YEAR_2024,
    )
    spec = chart_spec(r)
    assert _meta(spec)["layout"] == "rows"
    rows = spec["vconcat"]
    assert [c["encoding"]["y"]["field"] for c in rows] == ["revenue", "order_count", "close_rate"]
    assert all(c["encoding"]["color"]["field"] == "channel" for c in rows)
    assert spec["resolve"]["scale"]["x"] == "shared"
    assert [c["encoding"]["x"]["title"] for c in rows] == [None, None, "metric_time (quarter)"]
    close = {t["field"]: t.get("format") for t in rows[2]["encoding"]["tooltip"]}
    assert close["close_rate"] == ",.6~r"  # a double: six significant digits


def test_categories_are_bars(engine: Engine, shop_db: Path) -> None:
    r = _run(engine, shop_db, metrics=["revenue"], group_by=["orders.channel"])
    spec = chart_spec(r)
    assert spec["mark"] == {"type": "bar"} and _meta(spec)["kind"] == "bar"
    x = spec["encoding"]["x"]
    assert (x["field"], x["type"], x["sort"]) == ("channel", "nominal", None)
    grouped = chart_spec(
        _run(engine, shop_db, metrics=["revenue"], group_by=["orders.channel", "orders.status"])
    )
    enc = grouped["encoding"]
    assert enc["xOffset"]["field"] == enc["color"]["field"] == "status"
    assert _meta(grouped)["series"] == ["cancelled", "completed", "returned"]


def test_metrics_of_one_scale_share_an_axis(engine: Engine, shop_db: Path) -> None:
    r = _run(
        engine,
        shop_db,
        metrics=["revenue", "completed_revenue"],
        group_by=["metric_time:year"],
    )
    spec = chart_spec(r)
    assert _meta(spec)["layout"] == "shared" and _meta(spec)["series"] == [
        "revenue",
        "completed_revenue",
    ]
    assert spec["transform"] == [
        {"fold": ["revenue", "completed_revenue"], "as": ["metric", "value"]}
    ]
    assert spec["encoding"]["color"]["field"] == "metric"
    bars = chart_spec(
        _run(engine, shop_db, metrics=["revenue", "order_count"], group_by=["orders.channel"])
    )
    assert _meta(bars)["layout"] == "rows"  # two bar layers would hide each other


def test_nothing_to_chart_is_a_value_error(engine: Engine, shop_db: Path) -> None:
    r = _run(engine, shop_db, group_by=["orders.channel"])  # dimension values only
    with pytest.raises(ValueError, match="nothing to chart"):
        chart_spec(r)


def test_time_values_are_utc_strings() -> None:
    """Vega reads `...Z` the same in every time zone; a naive value is the warehouse's."""
    assert time_iso(dt.date(2024, 3, 1)) == "2024-03-01T00:00:00Z"
    assert time_iso(dt.datetime(2024, 3, 1, 5, 6, 7)) == "2024-03-01T05:06:07Z"
    aware = dt.datetime(2024, 3, 1, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert time_iso(aware) == "2024-03-01T03:00:00Z"
    assert time_iso("2024-03-01") == "2024-03-01T00:00:00Z"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", None]),
            st.dates(dt.date(2020, 1, 1), dt.date(2021, 12, 1)).map(lambda d: d.replace(day=1)),
            st.decimals(-1e6, 1e6, places=2, allow_nan=False),
        ),
        min_size=1,
        max_size=30,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_every_row_is_charted_once_with_one_series_per_category(
    rows: list[tuple[str | None, dt.date, decimal.Decimal]],
) -> None:
    result = {
        "columns": ["cat", "metric_time__month", "m"],
        "rows": [{"cat": c, "metric_time__month": d, "m": v} for c, d, v in rows],
        "outputs": [{"column": "m", "metric": "m"}],
    }
    spec = chart_spec(result)
    cats = sorted({c for c, _, _ in rows if c is not None})
    assert _meta(spec)["series"] == cats + ["NULL"] * any(c is None for c, _, _ in rows)
    values = spec["data"]["values"]
    assert [(v["cat"], v["metric_time__month"], v["m"]) for v in values] == [
        ("NULL" if c is None else c, f"{d.isoformat()}T00:00:00Z", float(v)) for c, d, v in rows
    ]
