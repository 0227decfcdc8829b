"""context_filter is a context filter (issue 20 item 5; D-LOD filter placement, LOD-FLT-01):
metrics whose rows cannot read it are computed without it and named in one `context_skipped`
notice (the reference engine's code), beside plain, D-LOD field and D-LOD metric parts alike;
when no part can read it the query is `context_unreadable`, decided before any D-LOD rollup
resolves its own join paths (it was `no_join_path`). Expected rows from hand SQL over the lod
world."""

from __future__ import annotations

from pathlib import Path

import pytest
from rightkit import assert_rows, rows, truth

import dosi
from dosi.errors import QueryError

MONTH = {"field": "metric_time", "grain": "month"}


def _notice(res: dict) -> list[str]:
    found = [w for w in res["warnings"] if w["code"] == "context_skipped"]
    assert len(found) == 1, res["warnings"]
    return found[0]["candidates"]


def test_a_d_lod_field_metric_reads_it_and_a_plain_one_is_named(
    lod: dosi.Engine, worlds: dict[str, Path]
) -> None:
    db = worlds["lod"]
    res = lod.execute(
        {
            "metrics": ["avg_active_day", "revenue"],
            "group_by": [MONTH],
            "context_filter": "sessions.minutes > 6",
        },
        db_path=db,
    )
    # the fixed value (distinct days per user, over the filtered sessions) counts once per
    # user and month; revenue is computed over every order
    want = truth(
        db,
        "WITH s AS (SELECT * FROM sessions WHERE minutes > 6), "
        "f AS (SELECT user_id, COUNT(DISTINCT event_date) AS ad FROM s GROUP BY 1), "
        "a AS (SELECT m, AVG(ad) AS v FROM (SELECT DISTINCT CAST(date_trunc('month', "
        "s.event_date) AS DATE) AS m, s.user_id, f.ad FROM s JOIN f ON s.user_id = f.user_id) "
        "GROUP BY 1), "
        "r AS (SELECT CAST(date_trunc('month', event_date) AS DATE) AS m, SUM(amount) AS v "
        "FROM orders GROUP BY 1) "
        "SELECT COALESCE(a.m, r.m), a.v, r.v FROM a FULL JOIN r ON a.m = r.m",
    )
    assert_rows(rows(res), want)
    assert _notice(res) == ["revenue"]


@pytest.mark.parametrize(
    ("metrics", "skipped"),
    [
        (["revenue", "session_count"], ["session_count"]),
        (["avg_active_day", "revenue"], ["avg_active_day"]),
        (["revenue_per_user", "session_count"], ["session_count"]),
    ],
)
def test_parts_that_cannot_read_it_are_named(
    lod: dosi.Engine, worlds: dict[str, Path], metrics: list[str], skipped: list[str]
) -> None:
    res = lod.execute(
        {"metrics": metrics, "group_by": [MONTH], "context_filter": "orders.amount > 10"},
        db_path=worlds["lod"],
    )
    assert _notice(res) == skipped


def test_a_filter_every_part_reads_gives_no_notice(
    lod: dosi.Engine, worlds: dict[str, Path]
) -> None:
    res = lod.execute(
        {"metrics": ["revenue"], "group_by": [MONTH], "context_filter": "orders.amount > 10"},
        db_path=worlds["lod"],
    )
    assert not [w for w in res["warnings"] if w["code"] == "context_skipped"]


@pytest.mark.parametrize("metric", ["avg_active_day", "avg_daily_users", "session_count"])
def test_no_part_reads_it(lod: dosi.Engine, metric: str) -> None:
    with pytest.raises(QueryError) as info:
        lod.compile(
            {"metrics": [metric], "group_by": [MONTH], "context_filter": "orders.amount > 10"}
        )
    assert info.value.code == "context_unreadable"
