"""D-CONVERSION values: of the entities that did a base event, the conversion events they did
within a window after it (MetricFlow's conversion metrics are the reference point).

Expected values come from `attributed` below, a plain-Python restatement: a conversion event
counts when the same user (and each constant property) has a base event at or before it and,
with a window, less than the window before it; it belongs to the latest such base event,
whose dimensions and day it is grouped by. A group with base events and no attributed
conversion has a NULL rate (MetricFlow's FULL OUTER JOIN of the two aggregates)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import convkit
import duckdb
import yaml

import dosi

Visit = tuple[int, int, str, str, str]
Buy = tuple[int, int, str, str, int]


def attributed(window_days: int | None, same_session: bool = False) -> list[tuple[Visit, Buy]]:
    out = []
    for buy in convkit.BUYS:
        when = dt.date.fromisoformat(buy[2])
        cands = [
            v
            for v in convkit.VISITS
            if v[1] == buy[1]
            and dt.date.fromisoformat(v[2]) <= when
            and (
                window_days is None
                or dt.date.fromisoformat(v[2]) > when - dt.timedelta(window_days)
            )
            and (not same_session or v[3] == buy[3])
        ]
        if cands:
            out.append((max(cands, key=lambda v: v[2]), buy))
    return out


def _rows(engine: dosi.Engine, query: dict[str, Any]) -> list[tuple[Any, ...]]:
    res = engine.execute(query)
    return sorted((tuple(r.values()) for r in res["rows"]), key=repr)


def _rate(conv: int, base: int) -> float | None:
    return conv / base if conv else None


def test_totals(conv_engine) -> None:
    """User 1 buys twice after two visits, user 2 buys before the visit and 10 days after it,
    user 3 buys the day of the visit and the day after, user 6 buys without a visit."""
    got = _rows(
        conv_engine,
        {
            "metrics": [
                "visit_to_buy_rate_7d",
                "visit_to_buy_rate",
                "buyers_7d",
                "buys_7d",
                "spend_7d",
                "spend_same_session",
            ]
        },
    )
    w7, unbounded = attributed(7), attributed(None)
    visitors = len({v[1] for v in convkit.VISITS})
    expect = (
        len({b[1] for _, b in w7}) / visitors,
        len({b[1] for _, b in unbounded}) / visitors,
        len({b[1] for _, b in w7}),
        len(w7),
        sum(b[4] for _, b in w7),
        sum(b[4] for _, b in attributed(7, same_session=True)),
    )
    assert got == [expect] == [(0.4, 0.6, 2, 4, 47, 47)]


def test_grouped_by_the_base_events_dimension(conv_engine) -> None:
    """Each conversion belongs to its latest base event: user 1's buys to the 01-03 `fb`
    visit; with session_id held constant, the 01-06 buy (session s1) to the 01-01 `google`
    visit instead."""
    got = _rows(
        conv_engine,
        {
            "metrics": ["visit_to_buy_rate_7d", "buys_7d", "spend_same_session", "visitors"],
            "group_by": ["visits.referrer"],
        },
    )
    expect = []
    for ref in ("fb", "google"):
        visitors = len({v[1] for v in convkit.VISITS if v[4] == ref})
        w7 = [(v, b) for v, b in attributed(7) if v[4] == ref]
        same = [(v, b) for v, b in attributed(7, True) if v[4] == ref]
        expect.append(
            (
                ref,
                _rate(len({b[1] for _, b in w7}), visitors),
                len(w7),
                sum(b[4] for _, b in same) or None,
                visitors,
            )
        )
    assert got == expect
    assert got == [("fb", 1.0, 4, 27, 2), ("google", None, 0, 20, 4)]


def test_grouped_by_the_base_events_day(conv_engine) -> None:
    got = _rows(
        conv_engine,
        {"metrics": ["buys_7d", "visit_to_buy_rate_7d"], "group_by": ["metric_time:day"]},
    )
    w7 = attributed(7)
    expect = []
    for day in sorted({v[2] for v in convkit.VISITS}):
        visitors = len({v[1] for v in convkit.VISITS if v[2] == day})
        mine = [b for v, b in w7 if v[2] == day]
        expect.append((day, len(mine), _rate(len({b[1] for b in mine}), visitors)))
    assert [(str(d)[:10], n, r) for d, n, r in got] == expect


def test_conversions_alone_keep_every_base_events_group(conv_engine) -> None:
    """A conversions metric asked alone still has a row for each group with base events and
    no attributed conversion (MetricFlow joins the converted and the base aggregates FULL
    OUTER): a count reads 0 there, a sum NULL. Days 01-02 (user 2 bought before visiting),
    01-10 and 01-20 (never bought) are such groups. CORE-FAN-03 (the merge of the two branches)."""
    w7 = attributed(7)
    days = sorted({v[2] for v in convkit.VISITS})
    for metric, value in (("buys_7d", lambda bs: len(bs)), ("spend_7d", None)):
        got = _rows(conv_engine, {"metrics": [metric], "group_by": ["metric_time:day"]})
        expect = []
        for day in days:
            mine = [b for v, b in w7 if v[2] == day]
            if value is not None:
                expect.append((day, value(mine)))
            else:
                expect.append((day, sum(b[4] for b in mine) if mine else None))
        assert [(str(d)[:10], n) for d, n in got] == expect, metric
    assert ("2024-01-02", 0) in [
        (str(d)[:10], n)
        for d, n in _rows(conv_engine, {"metrics": ["buys_7d"], "group_by": ["metric_time:day"]})
    ]


def test_time_range_filters_base_events_only(conv_engine) -> None:
    """Visits on 01-03 only: both of user 1's buys (01-04, 01-06) convert although they fall
    after the range."""
    got = _rows(
        conv_engine,
        {"metrics": ["buys_7d"], "time_range": {"start": "2024-01-03", "end": "2024-01-04"}},
    )
    assert got == [(len([1 for v, _ in attributed(7) if v[2] == "2024-01-03"]),)] == [(2,)]


def test_hand_written_sql(conv_engine, conv_db: Path) -> None:
    """The 7-day rate by referrer against MetricFlow-style SQL: latest visit per buy."""
    sql = """
    WITH matched AS (
      SELECT b.buy_id, b.user_id, v.referrer,
             ROW_NUMBER() OVER (PARTITION BY b.buy_id ORDER BY v.ds DESC) AS rk
      FROM cv_visits v JOIN cv_buys b
        ON v.user_id = b.user_id AND v.ds <= b.ds AND v.ds > b.ds - INTERVAL 7 DAY
    ), conv AS (SELECT referrer, COUNT(DISTINCT user_id) AS n FROM matched WHERE rk = 1 GROUP BY 1),
    base AS (SELECT referrer, COUNT(DISTINCT user_id) AS n FROM cv_visits GROUP BY 1)
    SELECT base.referrer, CAST(conv.n AS DOUBLE) / NULLIF(base.n, 0)
    FROM base FULL OUTER JOIN conv ON base.referrer = conv.referrer
    """
    con = duckdb.connect(str(conv_db), read_only=True)
    try:
        expect = sorted(con.execute(sql).fetchall(), key=repr)
    finally:
        con.close()
    got = _rows(conv_engine, {"metrics": ["visit_to_buy_rate_7d"], "group_by": ["visits.referrer"]})
    assert got == [tuple(r) for r in expect]


def test_explain_and_catalog(conv_engine) -> None:
    text = conv_engine.explain({"metrics": ["visit_to_buy_rate_7d"]})
    assert (
        "ConversionJoin buyers after visitors by visits.user_id = buys.user_id, within 7 days"
        in text
    )
    assert "each conversion event kept once, attributed to its latest base event" in text
    c = conv_engine.metric("spend_same_session")["conversion"]
    assert c["base_metric"] == "visits" and c["conversion_metric"] == "spend"
    assert c["window"] == {"count": 7, "granularity": "day"}
    assert c["constant_properties"] == [
        {"base": "visits.session_id", "conversion": "buys.session_id"}
    ]
    assert c["calculation"] == "conversions"
    assert conv_engine.metric("visits")["conversion"] is None


def test_attribution(conv_engine) -> None:
    """A conversions count is term-wise (each conversion belongs to one base event, so one
    segment); the distinct-user rate is unsupported (count distinct overlaps)."""
    assert conv_engine.metric("visit_to_buy_rate_7d")["attribution_strategy"] == "unsupported"
    r = conv_engine.attribute(
        {
            "metric": "buys_7d",
            "baseline": {"start": "2024-01-01", "end": "2024-01-04"},
            "current": {"start": "2024-01-04", "end": "2024-01-11"},
            "dimensions": ["visits.referrer"],
        }
    )
    w7 = attributed(7)
    base = len([1 for v, _ in w7 if "2024-01-01" <= v[2] < "2024-01-04"])
    cur = len([1 for v, _ in w7 if "2024-01-04" <= v[2] < "2024-01-11"])
    assert (r["total_change"]["baseline_value"], r["total_change"]["current_value"]) == (base, cur)
    assert r["attribution"] == "exact"


def test_a_filled_rate_reads_zero_where_nothing_converted(conv_db: Path) -> None:
    """`fill_nulls_with: 0` on a rate: a group with base events and no attributed conversion
    reads 0 instead of MetricFlow's NULL."""
    filled = convkit.metric(
        "rate_filled",
        convkit.RATE,
        {**convkit.conv({**convkit.BASE, "window": "7 days"}), "fill_nulls_with": 0},
    )
    engine = dosi.Engine(
        model_text=convkit.conv_model_text([*convkit.METRICS, filled]),
        connections={"db": {"type": "duckdb", "uri": str(conv_db)}},
    )
    got = _rows(engine, {"metrics": ["rate_filled"], "group_by": ["visits.referrer"]})
    assert got == [("fb", 1.0), ("google", 0.0)]


def test_event_rate_by_day_against_metricflow_shaped_sql(conv_engine, conv_db: Path) -> None:
    """MetricFlow's conversion_rate_metric check query, restated: opportunities (visits per
    day) FULL OUTER JOIN conversions (each buy once, at its latest visit within 7 days)."""
    sql = """
    WITH buy_source AS (SELECT *, ROW_NUMBER() OVER () AS uid FROM cv_buys),
    matched AS (
      SELECT v.ds, buy_source.uid,
             ROW_NUMBER() OVER (PARTITION BY buy_source.uid ORDER BY v.ds DESC) AS rk
      FROM cv_visits v JOIN buy_source ON v.user_id = buy_source.user_id
        AND v.ds <= buy_source.ds AND v.ds > buy_source.ds - INTERVAL 7 DAY
    ),
    conversions AS (SELECT ds, COUNT(*) AS buys FROM matched WHERE rk = 1 GROUP BY ds),
    opportunities AS (SELECT ds, COUNT(*) AS visits FROM cv_visits GROUP BY ds)
    SELECT CAST(COALESCE(o.ds, c.ds) AS VARCHAR),
           CAST(c.buys AS DOUBLE) / CAST(NULLIF(o.visits, 0) AS DOUBLE)
    FROM opportunities o FULL OUTER JOIN conversions c ON o.ds = c.ds
    """
    con = duckdb.connect(str(conv_db), read_only=True)
    try:
        expect = sorted((tuple(r) for r in con.execute(sql).fetchall()), key=repr)
    finally:
        con.close()
    got = _rows(
        conv_engine, {"metrics": ["visit_buy_rate_events_7d"], "group_by": ["metric_time:day"]}
    )
    assert [(str(d)[:10], r) for d, r in got] == expect
    assert ("2024-01-03", 2.0) in expect  # user 1's two buys over one visit that day


def _field(name: str, datatype: str) -> dict[str, Any]:
    return {
        "name": name,
        "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": name}]},
        "datatype": datatype,
    }


def test_joined_base_dimension_and_a_filter_metric_base(tmp_path: Path) -> None:
    """A dimension the base events reach through a relationship (users.tier) groups and
    filters the attributed conversions; a D-DERIVE filter metric as the base event (google
    visits only: a row of the base dataset is an event when the filter's CASE WHEN reads it)."""
    db = tmp_path / "conv_users.duckdb"
    convkit.build_conv(db)
    tiers = {1: "a", 2: "b", 3: "a", 4: "b", 5: "a"}
    con = duckdb.connect(str(db))
    try:
        con.execute("CREATE TABLE cv_users (user_id INTEGER, tier VARCHAR)")
        con.executemany("INSERT INTO cv_users VALUES (?, ?)", list(tiers.items()))
    finally:
        con.close()
    doc = convkit.conv_model_dict()
    sm = doc["semantic_model"][0]
    sm["datasets"].append(
        {
            "name": "users",
            "source": "main.cv_users",
            "primary_key": ["user_id"],
            "fields": [_field("user_id", "Integer"), _field("tier", "String")],
        }
    )
    sm["relationships"] = [
        {
            "name": "visits_to_users",
            "from": "visits",
            "to": "users",
            "from_columns": ["user_id"],
            "to_columns": ["user_id"],
        }
    ]
    sm["metrics"] += [
        convkit.metric(
            "google_visits",
            "COUNT(CASE WHEN visits.referrer = 'google' THEN 1 END)",
            {"derive": {"type": "filter", "base": "visits", "where": "visits.referrer = 'google'"}},
        ),
        convkit.metric(
            "buys_after_google",
            "COUNT(buys.buy_id)",
            convkit.conv(
                {
                    "base": "google_visits",
                    "conversion": "buys",
                    "entity": "user_id",
                    "calculation": "conversions",
                }
            ),
        ),
    ]
    engine = dosi.Engine(
        model_text=yaml.safe_dump(doc, sort_keys=False),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )
    got = _rows(
        engine, {"metrics": ["buys_7d", "visit_to_buy_rate_7d"], "group_by": ["users.tier"]}
    )
    expect = []
    for tier in ("a", "b"):
        mine = [(v, b) for v, b in attributed(7) if tiers[v[1]] == tier]
        visitors = len({v[1] for v in convkit.VISITS if tiers[v[1]] == tier})
        expect.append((tier, len(mine), _rate(len({b[1] for _, b in mine}), visitors)))
    assert got == expect
    filtered = _rows(engine, {"metrics": ["buys_7d"], "where_sql": "users.tier = 'a'"})
    assert filtered == [(expect[0][1],)]
    # unbounded, base events = google visits only (user 1's 01-01 visit, user 2's 01-02 visit)
    google = [v for v in convkit.VISITS if v[4] == "google"]
    n = sum(1 for b in convkit.BUYS if any(v[1] == b[1] and v[2] <= b[2] for v in google))
    assert _rows(engine, {"metrics": ["buys_after_google"]}) == [(n,)] == [(3,)]
