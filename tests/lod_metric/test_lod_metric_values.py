"""D-LOD metrics on DuckDB: include / exclude / fixed values against hand-written SQL over the
worked-example data (datus-extensions §3 D-LOD; CHECKLIST LOD-REL-01..12, LOD-FXM-01..08).

Every expected value is computed independently: a hand-written query over the same tables, or
the worked example's own numbers (12.5 / 20.5 versus 17.5 / 23; channel 2 revenue 35 versus
fixed 82).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

import dosi


def _sql(db: Path, text: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute(text).fetchall()]
    finally:
        con.close()


def _rows(engine: dosi.Engine, query: dict[str, Any]) -> list[tuple[Any, ...]]:
    res = engine.execute(query)
    cols = list(res["columns"])
    return [tuple(r[c] for c in cols) for r in res["rows"]]


def _close(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(sorted(got, key=repr), sorted(want, key=repr), strict=True):
        assert len(g) == len(w)
        for a, b in zip(g, w, strict=True):
            if isinstance(b, float) or isinstance(a, float):
                assert a == pytest.approx(b), (got, want)
            else:
                assert a == b, (got, want)


CH = {"field": "orders.channel_id"}
USER = {"field": "orders.user_id"}


def test_include_is_the_per_user_average_within_the_channel(lod_engine, lod_db) -> None:
    """LOD-REL-02: avg(include(revenue, user_id)) by channel is pc 12.5 / mobile 20.5 (the
    spec's worked example), the average of per-(channel, user) sums."""
    got = _rows(lod_engine, {"metrics": ["revenue_per_user"], "group_by": [CH]})
    assert dict(got) == {1: pytest.approx(12.5), 2: pytest.approx(20.5)}
    want = _sql(
        lod_db,
        "SELECT channel_id, AVG(s) FROM (SELECT channel_id, user_id, SUM(amount) s "
        "FROM lod_order GROUP BY 1, 2) GROUP BY 1",
    )
    _close(got, want)


def test_include_differs_from_each_users_whole_history(lod_engine, lod_db) -> None:
    """The other reading of "per-user revenue by channel" (each user's whole history, counted
    once per channel he ordered in: a plain metric over a fixed field) is 17.5 / 23: the data
    really separates the two, and the engine answers both as declared."""
    got = _rows(lod_engine, {"metrics": ["avg_user_revenue"], "group_by": [CH]})
    assert dict(got) == {1: pytest.approx(17.5), 2: pytest.approx(23.0)}
    want = _sql(
        lod_db,
        "SELECT g.channel_id, AVG(t.total) FROM (SELECT DISTINCT channel_id, user_id FROM "
        "lod_order) g JOIN (SELECT user_id, SUM(amount) total FROM lod_order GROUP BY 1) t "
        "USING (user_id) GROUP BY 1 ORDER BY 1",
    )
    assert want == [(1, pytest.approx(17.5)), (2, pytest.approx(23.0))]


def test_include_filters_and_time_range_feed_the_inner_grouping(lod_engine, lod_db) -> None:
    """LOD-REL-05: where_sql and time_range filter the rows the inner grouping sums."""
    q = {
        "metrics": ["revenue_per_user", "max_user_revenue"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'B'",
        "time_range": {"start": "2025-01-01", "end": "2025-02-01"},
    }
    want = _sql(
        lod_db,
        "SELECT channel_id, AVG(s), MAX(s) FROM (SELECT channel_id, user_id, SUM(amount) s "
        "FROM lod_order WHERE user_id <> 'B' AND event_date >= DATE '2025-01-01' "
        "AND event_date < DATE '2025-02-01' GROUP BY 1, 2) GROUP BY 1",
    )
    _close(_rows(lod_engine, q), want)


def test_include_grain_sits_inside(lod_engine, lod_db) -> None:
    """LOD-REL-06: by metric_time:month the inner grouping is month x user."""
    q = {"metrics": ["revenue_per_user"], "group_by": ["metric_time:month"]}
    want = _sql(
        lod_db,
        "SELECT m, AVG(s) FROM (SELECT DATE_TRUNC('month', event_date) m, user_id, "
        "SUM(amount) s FROM lod_order GROUP BY 1, 2) GROUP BY 1",
    )
    got = _rows(lod_engine, q)
    _close([(str(a), b) for a, b in got], [(str(a.date()), b) for a, b in want])


def test_include_without_group_by_folds_every_user(lod_engine, lod_db) -> None:
    want = _sql(
        lod_db, "SELECT AVG(s) FROM (SELECT user_id, SUM(amount) s FROM lod_order GROUP BY 1)"
    )
    _close(_rows(lod_engine, {"metrics": ["revenue_per_user"]}), want)


def test_include_beside_another_datasets_metric(lod_engine, lod_db) -> None:
    """An include stage replaces only its own dataset's branch: a metric of another fact
    dataset merges beside it on the view dims (as the reference engine does)."""
    q = {"metrics": ["revenue_per_user", "refunds"], "group_by": [{"field": "channel.channel_id"}]}
    want = _sql(
        lod_db,
        "SELECT a.channel_id, a.v, b.r FROM (SELECT channel_id, AVG(s) v FROM (SELECT "
        "channel_id, user_id, SUM(amount) s FROM lod_order GROUP BY 1, 2) GROUP BY 1) a "
        "FULL JOIN (SELECT channel_id, SUM(refund_amount) r FROM lod_refund GROUP BY 1) b "
        "USING (channel_id)",
    )
    _close(_rows(lod_engine, q), want)


def test_include_metric_filter_applies_to_the_folded_value(lod_engine) -> None:
    q = {
        "metrics": ["revenue_per_user"],
        "group_by": [CH],
        "where_sql": "revenue_per_user > 13",
    }
    assert _rows(lod_engine, q) == [(2, pytest.approx(20.5))]


def test_fixed_is_computed_before_dimension_filters(lod_engine, lod_db) -> None:
    """LOD-FXM-04/05: the spec's example -- channel 2 revenue 35 versus fixed 82; channel 1
    25 and 25: the filter only leaves the numerator."""
    q = {
        "metrics": ["revenue", "revenue_fixed_by_channel", "revenue_fixed_all"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'A'",
    }
    got = _rows(lod_engine, q)
    assert got == [(1, 25.0, 25.0, 107.0), (2, 35.0, 82.0, 107.0)]
    want = _sql(
        lod_db,
        "SELECT v.channel_id, v.r, f.r, (SELECT SUM(amount) FROM lod_order) FROM "
        "(SELECT channel_id, SUM(amount) r FROM lod_order WHERE user_id <> 'A' GROUP BY 1) v "
        "LEFT JOIN (SELECT channel_id, SUM(amount) r FROM lod_order GROUP BY 1) f "
        "ON v.channel_id IS NOT DISTINCT FROM f.channel_id",
    )
    _close(got, want)


def test_exclude_is_filtered_like_the_view(lod_engine, lod_db) -> None:
    """LOD-FXM-04 / LOD-REL-08: exclude(revenue) is the total of the filtered rows, attached
    to every view row (CROSS JOIN); fixed(revenue) ignores the dimension filter."""
    q = {
        "metrics": ["revenue", "revenue_grand", "revenue_fixed_all"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'A'",
    }
    want = _sql(
        lod_db,
        "SELECT channel_id, SUM(amount), (SELECT SUM(amount) FROM lod_order WHERE user_id <> "
        "'A'), (SELECT SUM(amount) FROM lod_order) FROM lod_order WHERE user_id <> 'A' "
        "GROUP BY 1",
    )
    got = _rows(lod_engine, q)
    _close(got, want)
    assert got == [(1, 25.0, 60.0, 107.0), (2, 35.0, 60.0, 107.0)]


def test_exclude_a_dimension_attaches_on_the_shared_ones(lod_engine, lod_db) -> None:
    """LOD-REL-08: exclude(revenue, channel_id) by (channel, user) is each user's revenue over
    all channels, LEFT JOINed on user_id; a recomputed side, so COUNT(DISTINCT) is exact
    (LOD-REL-09)."""
    q = {
        "metrics": ["revenue", "revenue_excl_channel", "buyers_excl_channel"],
        "group_by": [CH, USER],
    }
    want = _sql(
        lod_db,
        "SELECT v.channel_id, v.user_id, v.r, s.r, s.b FROM (SELECT channel_id, user_id, "
        "SUM(amount) r FROM lod_order GROUP BY 1, 2) v LEFT JOIN (SELECT user_id, SUM(amount) "
        "r, COUNT(DISTINCT user_id) b FROM lod_order GROUP BY 1) s USING (user_id)",
    )
    _close(_rows(lod_engine, q), want)


def test_exclude_count_distinct_is_recomputed_not_summed(lod_engine, lod_db) -> None:
    """LOD-REL-09: buyers excluding channel, by month x channel, is the month's distinct
    buyers -- not the sum of each channel's (user B buys on both channels in January)."""
    q = {
        "metrics": ["buyers", "buyers_excl_channel"],
        "group_by": ["metric_time:month", CH],
    }
    got = {(str(m), c): (b, x) for m, c, b, x in _rows(lod_engine, q)}
    want = _sql(
        lod_db,
        "SELECT v.m, v.channel_id, v.b, s.b FROM (SELECT CAST(DATE_TRUNC('month', event_date) "
        "AS DATE) m, channel_id, COUNT(DISTINCT user_id) b FROM lod_order GROUP BY 1, 2) v "
        "JOIN (SELECT CAST(DATE_TRUNC('month', event_date) AS DATE) m, COUNT(DISTINCT "
        "user_id) b FROM lod_order GROUP BY 1) s USING (m)",
    )
    assert got == {(str(m), c): (b, x) for m, c, b, x in want}
    # January: B on channel 1; A, B, D overall -- summing channels would give 1 + 3 = 4
    assert got[("2025-01-01", 1)] == (1, 3)


def test_exclude_without_group_by_is_the_base(lod_engine, lod_db) -> None:
    """LOD-REL-11: with no group-by there is nothing to exclude."""
    got = _rows(lod_engine, {"metrics": ["revenue_grand"], "where_sql": "orders.user_id <> 'A'"})
    assert got == _sql(lod_db, "SELECT SUM(amount) FROM lod_order WHERE user_id <> 'A'")


def test_keyless_fixed_without_group_by_skips_the_filter(lod_engine) -> None:
    """LOD-FXM-08: a keyless fixed metric with no group-by still ignores dimension filters."""
    q = {"metrics": ["revenue", "revenue_fixed_all"], "where_sql": "orders.user_id <> 'A'"}
    assert _rows(lod_engine, q) == [(60.0, 107.0)]


def test_fixed_sees_the_time_range(lod_engine, lod_db) -> None:
    """LOD-FLT-01: time_range is the context layer; it feeds the fixed side too."""
    q = {
        "metrics": ["revenue", "revenue_fixed_by_channel", "revenue_fixed_all"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'D'",
        "time_range": {"start": "2025-01-01", "end": "2025-02-01"},
    }
    want = _sql(
        lod_db,
        "WITH jan AS (SELECT * FROM lod_order WHERE event_date >= DATE '2025-01-01' AND "
        "event_date < DATE '2025-02-01') SELECT v.channel_id, v.r, f.r, (SELECT SUM(amount) "
        "FROM jan) FROM (SELECT channel_id, SUM(amount) r FROM jan WHERE user_id <> 'D' "
        "GROUP BY 1) v LEFT JOIN (SELECT channel_id, SUM(amount) r FROM jan GROUP BY 1) f "
        "USING (channel_id)",
    )
    _close(_rows(lod_engine, q), want)


def test_fixed_keys_may_be_a_subset_of_the_view(lod_engine, lod_db) -> None:
    """LOD-FXM-03: fixed by channel, viewed by (channel, user): one side row per view row."""
    q = {"metrics": ["revenue_fixed_by_channel"], "group_by": [CH, USER]}
    want = _sql(
        lod_db,
        "SELECT DISTINCT o.channel_id, o.user_id, f.r FROM lod_order o JOIN (SELECT "
        "channel_id, SUM(amount) r FROM lod_order GROUP BY 1) f USING (channel_id)",
    )
    _close(_rows(lod_engine, q), want)


def test_lod_metric_in_a_metric_filter_and_order(lod_engine) -> None:
    """A LOD metric is a result column: where_sql conjuncts naming it filter result rows and
    order_by sorts by it."""
    q = {
        "metrics": ["revenue", "revenue_fixed_by_channel"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'A' AND revenue_fixed_by_channel > 30",
        "order_by": [{"key": "revenue_fixed_by_channel", "desc": True}],
    }
    assert _rows(lod_engine, q) == [(2, 35.0, 82.0)]


def test_null_keys_attach_null_safely(tmp_path: Path) -> None:
    """LOD-FXM-03 / LOD-PLAN-10: a NULL channel is a group of its own and meets its own side
    row (a plain equality would leave it NULL)."""
    import lodmetrickit

    db = tmp_path / "n.duckdb"
    lodmetrickit.build_db(db, with_null_channel=True)
    eng = dosi.Engine(
        model_text=lodmetrickit.model_text(),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )
    q = {
        "metrics": ["revenue", "revenue_fixed_by_channel", "revenue_excl_channel"],
        "group_by": [CH, USER],
    }
    got = {(c, u): (r, f, x) for c, u, r, f, x in _rows(eng, q)}
    assert got[(None, "F")] == (5.0, 5.0, 5.0)


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite", "clickhouse", "spark"])
def test_lod_metrics_compile_for_other_dialects(lod_engine, dialect: str) -> None:
    """The stages render on every dialect (NULL-safe joins in each one's spelling)."""
    for q in (
        {"metrics": ["revenue", "revenue_fixed_by_channel", "revenue_grand"], "group_by": [CH]},
        {"metrics": ["revenue_per_user", "refunds"], "group_by": [{"field": "channel.channel_id"}]},
    ):
        sql = lod_engine.compile(q, dialect=dialect)["sql"]
        assert "lod_" in sql


def test_share_of_total_versus_share_of_all(lod_engine, lod_db) -> None:
    """The spec's three-metric example (LOD-FXM-04, LOD-REL-10): revenue / exclude(revenue)
    divides by the filtered total, revenue / fixed(revenue) by the unfiltered one; the
    compose looks through to the declaration, so no share is 1."""
    q = {
        "metrics": ["revenue", "revenue_share_of_all", "revenue_share"],
        "group_by": [CH],
        "where_sql": "orders.user_id <> 'A'",
    }
    got = _rows(lod_engine, q)
    assert got == [
        (1, 25.0, pytest.approx(25 / 107), pytest.approx(25 / 60)),
        (2, 35.0, pytest.approx(35 / 107), pytest.approx(35 / 60)),
    ]
    want = _sql(
        lod_db,
        "WITH v AS (SELECT channel_id, SUM(amount) r FROM lod_order WHERE user_id <> 'A' "
        "GROUP BY 1) SELECT channel_id, r, r / (SELECT SUM(amount) FROM lod_order), "
        "r / (SELECT SUM(r) FROM v) FROM v",
    )
    _close(got, want)


def test_share_of_the_users_total(lod_engine, lod_db) -> None:
    """revenue / exclude(revenue, channel_id) by (channel, user): each channel's share of the
    user's own total (a keyed attach, LEFT JOIN on user_id)."""
    q = {"metrics": ["channel_share_of_user"], "group_by": [CH, USER]}
    want = _sql(
        lod_db,
        "SELECT o.channel_id, o.user_id, SUM(o.amount) / ANY_VALUE(t.total) FROM lod_order o "
        "JOIN (SELECT user_id, SUM(amount) total FROM lod_order GROUP BY 1) t USING (user_id) "
        "GROUP BY 1, 2",
    )
    _close(_rows(lod_engine, q), want)


def test_share_without_its_members_in_the_query(lod_engine) -> None:
    """A compose's members are computed hidden: only the share is output."""
    res = lod_engine.execute({"metrics": ["revenue_share"], "group_by": [CH]})
    assert list(res["columns"]) == ["channel_id", "revenue_share"]
    assert [r["revenue_share"] for r in res["rows"]] == [
        pytest.approx(25 / 107),
        pytest.approx(82 / 107),
    ]


@pytest.mark.parametrize(
    "time_dim", ["metric_time:month", "orders.event_date:month", "orders.event_date"]
)
def test_excluding_a_time_field_drops_it_at_any_grain(lod_engine, lod_db, time_dim) -> None:
    """exclude(revenue, orders.event_date) removes the time dim however it is grouped
    (a grain, or metric_time on that axis): each row carries its channel's total."""
    q = {"metrics": ["revenue_excl_date"], "group_by": [time_dim, CH]}
    got = _rows(lod_engine, q)
    totals = dict(_sql(lod_db, "SELECT channel_id, SUM(amount) FROM lod_order GROUP BY 1"))
    assert got and all(v == totals[c] for _, c, v in got)
    assert len(got) == len(
        _sql(
            lod_db,
            "SELECT DISTINCT "
            + ("event_date" if ":" not in time_dim else "DATE_TRUNC('month', event_date)")
            + ", channel_id FROM lod_order",
        )
    )


def test_compose_over_a_compose_over_lod(lod_db) -> None:
    """A compose naming a LOD compose is a LOD metric too: its formula reaches the leaves."""
    import lodmetrickit

    pct = lodmetrickit.compose(
        "revenue_share_pct",
        "SUM(orders.amount) / SUM(SUM(orders.amount)) * 100",
        "revenue_share * 100",
    )
    eng = dosi.Engine(
        model_text=lodmetrickit.model_text(
            [*lodmetrickit.PLAIN, *lodmetrickit.LOD, *lodmetrickit.SHARES, pct]
        ),
        connections={"db": {"type": "duckdb", "uri": str(lod_db)}},
    )
    got = _rows(eng, {"metrics": ["revenue_share_pct"], "group_by": [CH]})
    want = _sql(
        lod_db,
        "SELECT channel_id, SUM(amount) / (SELECT SUM(amount) FROM lod_order) * 100 "
        "FROM lod_order GROUP BY 1",
    )
    _close(got, want)


def test_include_by_a_joined_attribute(lod_engine, lod_db) -> None:
    """The view dim comes through a join (acct.acct_name): the inner grouping joins it too."""
    q = {"metrics": ["revenue_per_user"], "group_by": ["acct.acct_name"]}
    want = _sql(
        lod_db,
        "SELECT a.acct_name, AVG(s) FROM (SELECT user_id, SUM(amount) s FROM lod_order "
        "GROUP BY 1) o JOIN lod_acct a USING (user_id) GROUP BY 1",
    )
    _close(_rows(lod_engine, q), want)


@pytest.fixture(scope="module")
def one_sided(tmp_path_factory: pytest.TempPathFactory) -> tuple[dosi.Engine, Path]:
    import lodmetrickit

    db = tmp_path_factory.mktemp("onesided") / "o.duckdb"
    lodmetrickit.build_db(db, one_sided=True)
    eng = dosi.Engine(
        model_text=lodmetrickit.model_text(),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )
    return eng, db


def test_attach_beside_another_dataset_keeps_both_datasets_groups(one_sided) -> None:
    """The view is the union of the LOD base's groups and the other dataset's (channel 3 has
    only a refund, channel 4 only an order); every row meets the grand total, and the pure
    count reads 0 where only the orders have the group (S-FAN-6)."""
    eng, db = one_sided
    q = {
        "metrics": ["revenue_grand", "refunds", "refund_count"],
        "group_by": [{"field": "channel.channel_id"}],
    }
    want = _sql(
        db,
        "WITH k AS (SELECT channel_id FROM lod_order UNION SELECT channel_id FROM lod_refund) "
        "SELECT k.channel_id, (SELECT SUM(amount) FROM lod_order), r.s, COALESCE(r.n, 0) "
        "FROM k LEFT JOIN (SELECT channel_id, SUM(refund_amount) s, COUNT(refund_id) n "
        "FROM lod_refund GROUP BY 1) r USING (channel_id)",
    )
    _close(_rows(eng, q), want)


def test_include_beside_another_dataset_fills_its_counts(one_sided) -> None:
    eng, db = one_sided
    q = {
        "metrics": ["revenue_per_user", "refund_count"],
        "group_by": [{"field": "channel.channel_id"}],
    }
    want = _sql(
        db,
        "WITH i AS (SELECT channel_id, AVG(s) v FROM (SELECT channel_id, user_id, SUM(amount) s "
        "FROM lod_order GROUP BY 1, 2) GROUP BY 1), r AS (SELECT channel_id, COUNT(*) n FROM "
        "lod_refund GROUP BY 1) SELECT COALESCE(i.channel_id, r.channel_id), i.v, "
        "COALESCE(r.n, 0) FROM i FULL JOIN r USING (channel_id)",
    )
    _close(_rows(eng, q), want)


def test_context_filter_feeds_every_side_where_sql_only_the_view(lod_engine, lod_db) -> None:
    """CORE-Q-10 / LOD-FLT-01 / LOD-FXM-04: context_filter is the context layer -- the fixed
    sides see it; where_sql is a dimension filter -- they do not; exclude sees both."""
    q = {
        "metrics": ["revenue", "revenue_grand", "revenue_fixed_all", "revenue_fixed_by_channel"],
        "group_by": [CH],
        "context_filter": "orders.user_id <> 'B'",
        "where_sql": "orders.user_id <> 'A'",
    }
    want = _sql(
        lod_db,
        "WITH ctx AS (SELECT * FROM lod_order WHERE user_id <> 'B'), "
        "dim AS (SELECT * FROM ctx WHERE user_id <> 'A') "
        "SELECT v.channel_id, v.r, (SELECT SUM(amount) FROM dim), (SELECT SUM(amount) FROM "
        "ctx), f.r FROM (SELECT channel_id, SUM(amount) r FROM dim GROUP BY 1) v JOIN "
        "(SELECT channel_id, SUM(amount) r FROM ctx GROUP BY 1) f USING (channel_id)",
    )
    _close(_rows(lod_engine, q), want)


def test_context_filter_through_a_join_reaches_the_fixed_side(lod_engine, lod_db) -> None:
    """LOD-FLT-09: a context condition on the far side of a join brings the join, and the
    rows it drops, into the fixed side."""
    q = {
        "metrics": ["revenue_fixed_all"],
        "group_by": [CH],
        "context_filter": "channel.channel_name = 'mobile'",
    }
    want = _sql(
        lod_db,
        "SELECT 2, SUM(o.amount) FROM lod_order o JOIN lod_channel c USING (channel_id) "
        "WHERE c.channel_name = 'mobile'",
    )
    _close(_rows(lod_engine, q), want)
