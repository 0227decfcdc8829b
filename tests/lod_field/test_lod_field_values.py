"""D-LOD fixed fields: numbers against hand-written SQL, plan shapes and filter placement
(datus-extensions §3 D-LOD; CHECKLIST LOD-FLD-03/06/11/13, LOD-PLAN-01..11, LOD-FLT-01..10,
CORE-Q-10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lodfieldkit import hand, rows_of

import dosi

JAN = {"start": "2025-01-01", "end": "2025-02-01"}

# per-user active days over all history, and over January only (the context layer)
ACTIVE_ALL = (
    "SELECT user_id, COUNT(DISTINCT event_date) AS active_day FROM lod_session GROUP BY user_id"
)
ACTIVE_JAN = (
    "SELECT user_id, COUNT(DISTINCT event_date) AS active_day FROM lod_session "
    "WHERE event_date >= DATE '2025-01-01' AND event_date < DATE '2025-02-01' GROUP BY user_id"
)
DAU = (
    "SELECT event_date, COUNT(DISTINCT user_id) AS daily_users FROM lod_session GROUP BY event_date"
)
FIRST = "SELECT user_id, MIN(event_date) AS first_day FROM lod_session GROUP BY user_id"

CASES: list[tuple[str, dict[str, Any], list[str], str, str]] = [
    (
        "LOD-PLAN-01 two-stage: users per active-day count",
        {"metrics": ["user_num"], "group_by": ["sessions.active_day"]},
        ["active_day", "user_num"],
        f"SELECT active_day, COUNT(DISTINCT user_id) FROM ({ACTIVE_ALL}) f GROUP BY 1",
        "LodRollup",
    ),
    (
        "spec example: channel 2 in January, where_sql is a dimension filter (LOD-FLT-04)",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.channel_id = 2",
            "time_range": JAN,
        },
        ["active_day", "user_num"],
        f"SELECT f.active_day, COUNT(DISTINCT s.user_id) FROM lod_session s JOIN ({ACTIVE_JAN}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id WHERE s.channel_id = 2"
        " AND s.event_date >= DATE '2025-01-01' AND s.event_date < DATE '2025-02-01' GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "CORE-Q-10 / LOD-FLT-02: context_filter counts channel 2 days only",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "context_filter": "sessions.channel_id = 2",
            "time_range": JAN,
        },
        ["active_day", "user_num"],
        "SELECT active_day, COUNT(DISTINCT user_id) FROM (SELECT user_id,"
        " COUNT(DISTINCT event_date) AS active_day FROM lod_session WHERE channel_id = 2"
        " AND event_date >= DATE '2025-01-01' AND event_date < DATE '2025-02-01'"
        " GROUP BY user_id) f GROUP BY 1",
        "LodRollup",
    ),
    (
        "LOD-FLT-05: a where on the rollup's own key filters its output (two-stage)",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.user_id <> 'A'",
        },
        ["active_day", "user_num"],
        f"SELECT active_day, COUNT(DISTINCT user_id) FROM ({ACTIVE_ALL}) f"
        " WHERE user_id <> 'A' GROUP BY 1",
        "LodRollup",
    ),
    (
        "LOD-PLAN-06: AVG of a pinned value counts each date once per channel (3.0, not 3.5)",
        {"metrics": ["avg_daily_users"], "group_by": ["sessions.channel_id"]},
        ["channel_id", "avg_daily_users"],
        f"SELECT g.channel_id, AVG(f.daily_users) FROM (SELECT channel_id, event_date FROM"
        f" lod_session GROUP BY 1, 2) g JOIN ({DAU}) f ON g.event_date = f.event_date GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-PLAN-07: a row-level field over fixed values only is weighted once per key",
        {"metrics": ["multi_day_users"], "group_by": ["sessions.channel_id"]},
        ["channel_id", "multi_day_users"],
        f"SELECT g.channel_id, SUM(CASE WHEN f.active_day > 1 THEN 1 ELSE 0 END) FROM (SELECT"
        f" channel_id, user_id FROM lod_session GROUP BY 1, 2) g JOIN ({ACTIVE_ALL}) f"
        " ON g.user_id IS NOT DISTINCT FROM f.user_id GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-PLAN-05: COUNT of fact rows by a fixed value is a broadcast (rows, not users)",
        {"metrics": ["session_count"], "group_by": ["sessions.active_day"]},
        ["active_day", "session_count"],
        f"SELECT f.active_day, COUNT(s.event_date) FROM lod_session s JOIN ({ACTIVE_ALL}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-PLAN-10: a NULL key meets its own rollup row (AVG over all users, two-stage)",
        {"metrics": ["avg_active_day"]},
        ["avg_active_day"],
        f"SELECT AVG(active_day) FROM ({ACTIVE_ALL}) f",
        "LodRollup",
    ),
    (
        "LOD-FLD-11: a row-level field reading a fixed field groups new vs returning",
        {"metrics": ["session_count"], "group_by": ["sessions.visit_kind"]},
        ["visit_kind", "session_count"],
        "SELECT CASE WHEN s.event_date = f.first_day THEN 'new' ELSE 'returning' END,"
        f" COUNT(s.event_date) FROM lod_session s JOIN ({FIRST}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-FLT-07: a cohort filter on a fixed value, the rollup over the whole history",
        {
            "metrics": ["session_count"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.first_day = DATE '2025-01-01'",
        },
        ["active_day", "session_count"],
        f"SELECT a.active_day, COUNT(s.event_date) FROM lod_session s JOIN ({ACTIVE_ALL}) a"
        f" ON s.user_id IS NOT DISTINCT FROM a.user_id JOIN ({FIRST}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id WHERE f.first_day = DATE '2025-01-01'"
        " GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-FLT-07: a filter on another key family's value keeps active_day at all dates",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.daily_users >= 4",
        },
        ["active_day", "user_num"],
        f"SELECT a.active_day, COUNT(DISTINCT s.user_id) FROM lod_session s JOIN ({ACTIVE_ALL}) a"
        f" ON s.user_id IS NOT DISTINCT FROM a.user_id JOIN ({DAU}) d"
        " ON s.event_date = d.event_date WHERE d.daily_users >= 4 GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-FLT-08: an inner-joined view dimension leaves the fixed value unchanged",
        {"metrics": ["session_count"], "group_by": ["promo_day.promo_name", "sessions.active_day"]},
        ["promo_name", "active_day", "session_count"],
        f"SELECT p.promo_name, a.active_day, COUNT(s.event_date) FROM lod_session s JOIN"
        f" lod_promo p ON s.event_date = p.event_date JOIN ({ACTIVE_ALL}) a"
        " ON s.user_id IS NOT DISTINCT FROM a.user_id GROUP BY 1, 2",
        "LodBroadcast",
    ),
    (
        "LOD-PLAN-08: a dimension of a joined dataset; the fixed value over all the history",
        {"metrics": ["session_count"], "group_by": ["acct.acct_name", "sessions.active_day"]},
        ["acct_name", "active_day", "session_count"],
        f"SELECT a.acct_name, f.active_day, COUNT(s.event_date) FROM lod_session s LEFT JOIN"
        f" lod_acct a ON s.user_id = a.user_id JOIN ({ACTIVE_ALL}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id GROUP BY 1, 2",
        "LodBroadcast",
    ),
    (
        "LOD-FLT-09: a join named in the context layer brings its dropped rows into the rollup",
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "context_filter": "promo_day.promo_name = 'launch'",
        },
        ["active_day", "user_num"],
        "SELECT active_day, COUNT(DISTINCT user_id) FROM (SELECT s.user_id,"
        " COUNT(DISTINCT s.event_date) AS active_day FROM lod_session s JOIN lod_promo p"
        " ON s.event_date = p.event_date WHERE p.promo_name = 'launch' GROUP BY 1) f GROUP BY 1",
        "LodRollup",
    ),
    (
        "LOD-FLD-13: a keyless fixed value is broadcast to every row (a where on it)",
        {
            "metrics": ["session_count"],
            "group_by": ["sessions.channel_id"],
            "where_sql": "sessions.all_sessions > 10",
        },
        ["channel_id", "session_count"],
        "SELECT channel_id, COUNT(event_date) FROM lod_session"
        " WHERE (SELECT COUNT(event_date) FROM lod_session) > 10 GROUP BY 1",
        "LodBroadcast",
    ),
    (
        "LOD-FLT-10: a predicate spanning both layers is evaluated after the broadcast",
        {"metrics": ["user_num"], "where_sql": "sessions.event_date = sessions.first_day"},
        ["user_num"],
        f"SELECT COUNT(DISTINCT s.user_id) FROM lod_session s JOIN ({FIRST}) f"
        " ON s.user_id IS NOT DISTINCT FROM f.user_id WHERE s.event_date = f.first_day",
        "LodBroadcast",
    ),
    (
        "LOD-FLD-06: a monthly series of the average pinned value (the key buckets outside)",
        {"metrics": ["avg_daily_users"], "group_by": ["metric_time:month"]},
        ["metric_time__month", "avg_daily_users"],
        f"SELECT CAST(DATE_TRUNC('month', g.event_date)::DATE AS VARCHAR), AVG(f.daily_users) FROM (SELECT"
        f" event_date FROM lod_session GROUP BY 1) g JOIN ({DAU}) f"
        " ON g.event_date = f.event_date GROUP BY 1",
        "LodRollup",
    ),
]


@pytest.mark.parametrize(
    ("why", "query", "cols", "sql", "shape"), CASES, ids=[c[0][:40] for c in CASES]
)
def test_lod_field_values_match_hand_sql(
    lodf: dosi.Engine,
    lodf_db: Path,
    why: str,
    query: dict[str, Any],
    cols: list[str],
    sql: str,
    shape: str,
) -> None:
    got = rows_of(lodf.execute(query), cols)
    assert got == hand(lodf_db, sql), why
    plan = lodf.explain(query)
    assert shape in plan, plan
    if shape == "LodRollup":
        assert "LodBroadcast" not in plan, plan


def test_spec_channel_2_weighting_is_3_not_3_5(lodf: dosi.Engine) -> None:
    """LOD-PLAN-06 worked example: channel 2 sits on three dates carrying 4, 4, 1."""
    rows = lodf.execute({"metrics": ["avg_daily_users"], "group_by": ["sessions.channel_id"]})
    by = {r["channel_id"]: r["avg_daily_users"] for r in rows["rows"]}
    assert by[2] == pytest.approx(3.0)


def test_context_filter_versus_where_on_channel_2(lodf: dosi.Engine) -> None:
    """LOD-FLT-02/04 worked example: user C, active on both channels in January, counts 2
    days under the where_sql dimension filter and 1 under the context filter."""
    base = {"metrics": ["user_num"], "group_by": ["sessions.active_day"], "time_range": JAN}
    where = lodf.execute({**base, "where_sql": "sessions.channel_id = 2"})["rows"]
    context = lodf.execute({**base, "context_filter": "sessions.channel_id = 2"})["rows"]
    assert {r["active_day"]: r["user_num"] for r in where} == {2: 4}
    assert {r["active_day"]: r["user_num"] for r in context} == {1: 2, 2: 2}


def test_sum_of_pinned_field_equals_sum_of_row_field_over_values(lodf: dosi.Engine) -> None:
    """LOD-PLAN-07: SUM over a field reading only fixed values equals the per-key sum."""
    q = {"group_by": ["sessions.channel_id"]}
    multi = lodf.execute({"metrics": ["multi_day_users"], **q})["rows"]
    assert {r["channel_id"]: r["multi_day_users"] for r in multi} == {1: 3, 2: 4}


def test_explain_shows_where_each_filter_landed(lodf: dosi.Engine) -> None:
    """LOD-PLAN-11: the shape and the placement of every filter are in explain."""
    plan = lodf.explain(
        {
            "metrics": ["session_count"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.channel_id = 2 AND sessions.daily_users >= 4",
            "context_filter": "promo_day.promo_name = 'launch'",
            "time_range": JAN,
        }
    )
    assert "LodBroadcast onto detail rows" in plan
    assert "dimension filter on the detail rows: sessions.channel_id = 2" in plan
    assert "on the rollup values, after the broadcast join: sessions.daily_users >= 4" in plan
    assert "context filter promo_day.promo_name = 'launch'" in plan
    assert "context join INNER JOIN promo_day" in plan
    assert "context time sessions.event_date in [2025-01-01, 2025-02-01)" in plan
    two = lodf.explain(
        {
            "metrics": ["user_num"],
            "group_by": ["sessions.active_day"],
            "where_sql": "sessions.user_id <> 'A'",
        }
    )
    assert "dimension filter on the rollup output: sessions.user_id <> 'A'" in two


def test_broadcast_sql_joins_null_safely(lodf: dosi.Engine) -> None:
    """LOD-PLAN-10: the broadcast join is IS NOT DISTINCT FROM (or the dialect's form)."""
    sql = lodf.compile({"metrics": ["session_count"], "group_by": ["sessions.active_day"]})["sql"]
    assert "IS NOT DISTINCT FROM" in sql
    pg = lodf.compile(
        {"metrics": ["session_count"], "group_by": ["sessions.active_day"]}, dialect="postgres"
    )["sql"]
    assert "IS NOT DISTINCT FROM" in pg


def test_queries_without_lod_fields_compile_unchanged(lodf: dosi.Engine) -> None:
    """LOD-PLAN-12: a query reading no fixed field plans exactly as before (no rollup)."""
    sql = lodf.compile({"metrics": ["session_count"], "group_by": ["sessions.channel_id"]})["sql"]
    assert sql.count("SELECT") == 1


def test_select_broadcasts_fixed_fields(lodf: dosi.Engine, lodf_db: Path) -> None:
    """Detail rows read a fixed field like a column (the reference engine broadcasts it); the
    context filter feeds the rollup, where_sql only the rows."""
    got = lodf.select(
        {
            "from": "sessions",
            "fields": ["sessions.user_id", "sessions.active_day"],
            "where_sql": "sessions.user_id = 'C'",
            "context_filter": "sessions.channel_id = 2",
        }
    )
    assert [(r["user_id"], r["active_day"]) for r in got["rows"]] == [("C", 1)]
    got = lodf.select(
        {
            "from": "sessions",
            "fields": ["sessions.user_id", "sessions.active_day"],
            "where_sql": "sessions.user_id = 'C'",
        }
    )
    assert [(r["user_id"], r["active_day"]) for r in got["rows"]] == [("C", 2), ("C", 2)]


def test_select_explain_shows_the_broadcast(lodf: dosi.Engine) -> None:
    plan = lodf.explain_select(
        {"from": "sessions", "fields": ["sessions.user_id", "sessions.active_day"]}
    )
    assert "LodBroadcast[LodRollup f over sessions keys=[user_id] values=[active_day]]" in plan


def test_catalog_lists_fixed_fields(lodf: dosi.Engine) -> None:
    """`dosi list dimensions` names the mode, keys and base of a fixed field (as the reference
    engine does); `dataset()` shows its lod expression."""
    dims = {d["name"]: d for d in lodf.dimensions()}
    assert dims["sessions.active_day"]["lod_mode"] == "fixed"
    assert dims["sessions.active_day"]["lod_dims"] == ["sessions.user_id"]
    assert dims["sessions.active_day"]["lod_base"] == "active_days"
    assert dims["sessions.all_sessions"]["lod_dims"] == []
    assert dims["sessions.channel_id"]["lod_mode"] is None
    fields = {f["name"]: f for f in lodf.dataset("sessions")["fields"]}
    assert fields["active_day"]["lod"] == "fixed(active_days, sessions.user_id)"
