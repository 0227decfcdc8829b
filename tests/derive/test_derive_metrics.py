"""D-DERIVE filter / compose / window.base on the derive mini model: numbers against
hand-written SQL over the same DuckDB tables, error codes, and the catalog metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from derivekit import build_db, metric, model

import dosi
from dosi.errors import ModelError, QueryError

M = metric
DERIVED = [
    M(
        "completed_revenue",
        "SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
        {
            "v": "1.4",
            "derive": {"type": "filter", "base": "revenue", "where": "status = 'completed'"},
        },
    ),
    M(
        "completed_orders",
        "COUNT(CASE WHEN orders.status = 'completed' THEN 1 END)",
        {
            "derive": {
                "type": "filter",
                "base": "order_count",
                "where": "orders.status = 'completed'",
            }
        },
    ),
    M(
        "completed_customers",
        "COUNT(DISTINCT CASE WHEN orders.status = 'completed' THEN orders.customer_id END)",
        {"derive": {"type": "filter", "base": "customers", "where": "status = 'completed'"}},
    ),
    M(
        "net_revenue",
        "COALESCE(SUM(orders.amount), 0) - COALESCE(SUM(refunds.ref_amount), 0)",
        {"derive": {"type": "compose", "expr": "revenue - total_refunds", "fill": 0}},
    ),
    M(
        "net_nofill",
        "SUM(orders.amount) - SUM(refunds.ref_amount)",
        {"derive": {"type": "compose", "expr": "revenue - total_refunds"}},
    ),
    M(
        "aov",
        "SUM(orders.amount) / COUNT(orders.order_id)",
        {"derive": {"type": "compose", "expr": "revenue / order_count"}},
    ),
    M(
        "doubled",
        "SUM(orders.amount) * 2",
        {"derive": {"type": "compose", "expr": "revenue * 2"}},
    ),
    M(
        "quadrupled",
        "SUM(orders.amount) * 2 * 2",
        {"derive": {"type": "compose", "expr": "doubled * 2"}},
    ),
    M(
        "open_revenue",
        "SUM(orders.amount) - SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
        {"derive": {"type": "compose", "expr": "revenue - completed_revenue"}},
    ),
    M(
        "close_rate_rank",
        "SUM(visits.converted) / COUNT(visits.visit_id)",
        {
            "v": "1.9",
            "window": {
                "base": "close_rate",
                "rank": {"function": "rank", "order": {"by": "value", "direction": "desc"}},
            },
        },
    ),
    M(
        "completed_mom",
        "SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
        {
            "window": {
                "base": "completed_revenue",
                "type": "pop",
                "offset": "1 month",
                "calculation": "delta",
            }
        },
    ),
    M(
        "completed_cum",
        "SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
        {"window": {"base": "completed_revenue", "type": "cumulative", "function": "sum"}},
    ),
    M(
        "net_rank",
        "COALESCE(SUM(orders.amount), 0) - COALESCE(SUM(refunds.ref_amount), 0)",
        {
            "v": "1.9",
            "window": {
                "base": "net_revenue",
                "rank": {"function": "rank", "order": {"by": "value", "direction": "desc"}},
            },
        },
    ),
    M(
        "aov_mom",
        "SUM(orders.amount) / COUNT(orders.order_id)",
        {"v": "1.9", "window": {"base": "aov", "type": "pop", "offset": "1 month"}},
    ),
    M(
        "net_mom",
        "COALESCE(SUM(orders.amount), 0) - COALESCE(SUM(refunds.ref_amount), 0)",
        {"v": "1.9", "window": {"base": "net_revenue", "type": "pop", "offset": "1 month"}},
    ),
]

MONTH = {"field": "metric_time", "grain": "month"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("derive") / "derive.duckdb")


@pytest.fixture(scope="module")
def engine(db: Path) -> Iterator[Any]:
    e = dosi.Engine(
        model_text=model(DERIVED), connections={"d": {"type": "duckdb", "uri": str(db)}}
    )
    yield e
    e.close()


@pytest.fixture(scope="module")
def sql(db: Path) -> Iterator[Any]:
    con = duckdb.connect(str(db), read_only=True)

    def run(text: str) -> dict[Any, tuple]:
        return {r[0]: tuple(r[1:]) for r in con.execute(text).fetchall()}

    yield run
    con.close()


def rows(result: dict[str, Any], key: str) -> dict[Any, dict[str, Any]]:
    out = {}
    for r in result["rows"]:
        k = r[key]
        out[str(k)[:10] if k is not None else None] = r
    return out


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))


def test_drv_fil_01_02_03_filter_folds_into_the_aggregate(engine: Any, sql: Any) -> None:
    """DRV-FIL-01/02/03: CASE WHEN inside the aggregate (COUNT folds to THEN 1), never WHERE:
    a month without completed orders stays, NULL for the sum and 0 for the count."""
    got = rows(
        engine.execute(
            {
                "metrics": ["completed_revenue", "completed_orders", "completed_customers"],
                "group_by": [MONTH],
            }
        ),
        "metric_time__month",
    )
    want = sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), "
        "SUM(amount) FILTER (WHERE status = 'completed'), "
        "COUNT(*) FILTER (WHERE status = 'completed'), "
        "COUNT(DISTINCT customer_id) FILTER (WHERE status = 'completed') "
        "FROM orders GROUP BY 1"
    )
    assert set(got) == set(want)
    for k, (rev, cnt, cust) in want.items():
        assert close(got[k]["completed_revenue"], rev)
        assert got[k]["completed_orders"] == cnt
        assert got[k]["completed_customers"] == cust
    compiled = engine.compile({"metrics": ["completed_orders"]})["sql"]
    assert "WHERE" not in compiled.upper() and "THEN 1" in compiled


def test_drv_cmp_04_fill_after_alignment_before_arithmetic(engine: Any, sql: Any) -> None:
    """DRV-CMP-01/04: a month only one fact has reads the other member as 0 with fill, NULL
    without it (cross-fact members merged per month first)."""
    got = rows(
        engine.execute({"metrics": ["net_revenue", "net_nofill"], "group_by": [MONTH]}),
        "metric_time__month",
    )
    want = sql(
        "WITH o AS (SELECT date_trunc('month', order_date) m, SUM(amount) v FROM orders GROUP BY 1),"
        " r AS (SELECT date_trunc('month', refund_date) m, SUM(ref_amount) v FROM refunds "
        "GROUP BY 1) SELECT strftime(COALESCE(o.m, r.m), '%Y-%m-%d'), "
        "COALESCE(o.v, 0) - COALESCE(r.v, 0), o.v - r.v FROM o FULL JOIN r ON o.m = r.m"
    )
    assert set(got) == set(want) and len(want) == 6  # Feb and Jul come from refunds only
    for k, (filled, raw) in want.items():
        assert close(got[k]["net_revenue"], filled)
        assert close(got[k]["net_nofill"], raw)


def test_drv_cmp_nested_and_filter_members(engine: Any, sql: Any) -> None:
    """DRV-NEST-01/05, DRV-CMP-09: nested compose inlined; a filter member composes flat."""
    r = engine.execute({"metrics": ["quadrupled", "open_revenue", "aov"]})["rows"][0]
    ((total, completed, n),) = sql(
        "SELECT 1, SUM(amount), SUM(amount) FILTER (WHERE status = 'completed'), COUNT(order_id) "
        "FROM orders"
    ).values()
    assert close(r["quadrupled"], total * 4)
    assert close(r["open_revenue"], total - completed)
    assert close(r["aov"], total / n)


def test_drv_cmp_06_unconformed_dimension_names_the_member(engine: Any) -> None:
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["net_revenue"], "group_by": ["orders.region"]})
    assert err.value.code == "unconformed_dimension"
    assert "total_refunds" in str(err.value)


def test_drv_meta_01_catalog_fields(engine: Any) -> None:
    """DRV-META-01, DRV-CMP-05/08, DRV-NEST-05, DRV-FIL-06, WIN-BASE-07."""
    net = engine.metric("net_revenue")
    assert net["derive_family"] == "compose"
    assert net["derive_expr"] == "revenue - total_refunds"
    assert net["derive_members"] == [
        {"metric": "revenue", "coefficient": 1.0},
        {"metric": "total_refunds", "coefficient": -1.0},
    ]
    assert [x["coefficient"] for x in net["leaf_measures"]] == [1.0, -1.0]
    assert net["attribution"] == "exact"
    assert net["conformed_dimensions"] == ["metric_time"]
    assert engine.metric("quadrupled")["derive_members"] == [
        {"metric": "revenue", "coefficient": 4.0}
    ]
    aov = engine.metric("aov")
    assert aov["derive_members"] == [{"metric": "revenue"}, {"metric": "order_count"}]
    assert aov["attribution"] == "approximate"
    assert "orders.region" in aov["conformed_dimensions"]
    fil = engine.metric("completed_customers")
    assert fil["derive_family"] == "filter" and fil["subset_of"] == "customers"
    assert fil["attribution"] == "approximate"  # a filtered COUNT(DISTINCT) is never exact
    assert engine.metric("completed_revenue")["attribution"] == "exact"
    win = engine.metric("completed_mom")
    assert win["derive_family"] == "window" and win["derive_base"] == "completed_revenue"
    assert win["subset_of"] == "completed_revenue"
    listed = {m["name"]: m for m in engine.metrics()}
    assert listed["revenue"]["derive_family"] is None


def test_win_base_rank_over_a_ratio_with_ties(engine: Any, sql: Any) -> None:
    """WIN-BASE-02: rank of a ratio base (close rate per month; two months tie)."""
    got = rows(
        engine.execute({"metrics": ["close_rate", "close_rate_rank"], "group_by": [MONTH]}),
        "metric_time__month",
    )
    want = sql(
        "SELECT strftime(m, '%Y-%m-%d'), r, RANK() OVER (ORDER BY r DESC) FROM ("
        "SELECT date_trunc('month', visit_date) m, SUM(converted)::DOUBLE / COUNT(visit_id) r "
        "FROM visits GROUP BY 1)"
    )
    assert {k: got[k]["close_rate_rank"] for k in got} == {k: v[1] for k, v in want.items()}
    assert sorted(v[1] for v in want.values()) == [1, 2, 2, 4]


def test_win_base_08_filter_base_keeps_empty_buckets(engine: Any, sql: Any) -> None:
    """WIN-BASE-08: offset and cumulative over a filter base."""
    got = rows(
        engine.execute(
            {
                "metrics": ["completed_revenue", "completed_mom", "completed_cum"],
                "group_by": [MONTH],
            }
        ),
        "metric_time__month",
    )
    want = sql(
        "WITH b AS (SELECT date_trunc('month', order_date) m, SUM(amount) FILTER (WHERE status = "
        "'completed') v FROM orders GROUP BY 1) SELECT strftime(b.m, '%Y-%m-%d'), b.v - p.v, "
        "SUM(b.v) OVER (ORDER BY b.m) FROM b LEFT JOIN b p ON p.m = b.m - INTERVAL 1 MONTH"
    )
    for k, (delta, cum) in want.items():
        assert close(got[k]["completed_mom"], delta)
        assert close(got[k]["completed_cum"], cum)


def test_win_base_05_cross_fact_compose_base_windows_after_the_merge(engine: Any, sql: Any) -> None:
    got = rows(
        engine.execute({"metrics": ["net_revenue", "net_rank"], "group_by": [MONTH]}),
        "metric_time__month",
    )
    want = sql(
        "WITH o AS (SELECT date_trunc('month', order_date) m, SUM(amount) v FROM orders GROUP BY 1),"
        " r AS (SELECT date_trunc('month', refund_date) m, SUM(ref_amount) v FROM refunds "
        "GROUP BY 1), n AS (SELECT COALESCE(o.m, r.m) m, COALESCE(o.v, 0) - COALESCE(r.v, 0) v "
        "FROM o FULL JOIN r ON o.m = r.m) SELECT strftime(m, '%Y-%m-%d'), "
        "RANK() OVER (ORDER BY v DESC) FROM n"
    )
    assert {k: got[k]["net_rank"] for k in got} == {k: v[0] for k, v in want.items()}


def test_win_base_06_time_axis_family_over_cross_fact_base_is_rejected(engine: Any) -> None:
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["net_mom"], "group_by": [MONTH]})
    assert err.value.code == "no_primary_time_dimension"


def test_win_base_offset_over_a_ratio_with_trim(engine: Any, sql: Any) -> None:
    got = rows(
        engine.execute(
            {
                "metrics": ["aov_mom"],
                "group_by": [MONTH],
                "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
            }
        ),
        "metric_time__month",
    )
    assert set(got) == {"2024-03-01", "2024-04-01", "2024-06-01"}
    # April over March: (200/2) / (100/2) - 1; March and June have no previous month
    assert close(got["2024-04-01"]["aov_mom"], 1.0)
    assert got["2024-03-01"]["aov_mom"] is None and got["2024-06-01"]["aov_mom"] is None


def _compile_error(extra: list[dict[str, Any]]) -> list[str]:
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=model(extra))
    return [d.code for d in err.value.issues]


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        # DRV-TIER-01: the authored expression must equal the expansion
        (
            [
                M(
                    "x",
                    "SUM(orders.amount) + SUM(refunds.ref_amount)",
                    {"derive": {"type": "compose", "expr": "revenue - total_refunds"}},
                )
            ],
            "derive_expression_mismatch",
        ),
        # DRV-NEST-03: a ratio member expands with its CAST
        (
            [
                M(
                    "x",
                    "SUM(visits.converted) / COUNT(visits.visit_id) * 2",
                    {"derive": {"type": "compose", "expr": "close_rate * 2"}},
                )
            ],
            "derive_expression_mismatch",
        ),
        # DRV-FIL-02: a COUNT base folds to THEN 1
        (
            [
                M(
                    "x",
                    "COUNT(CASE WHEN orders.status = 'completed' THEN orders.order_id END)",
                    {
                        "derive": {
                            "type": "filter",
                            "base": "order_count",
                            "where": "status = 'completed'",
                        }
                    },
                )
            ],
            "derive_expression_mismatch",
        ),
        # DRV-CMP-02: unknown / qualified names
        (
            [M("x", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "revenu * 2"}})],
            "invalid_datus_extension",
        ),
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "compose", "expr": "orders.revenue"}},
                )
            ],
            "invalid_datus_extension",
        ),
        # DRV-CMP-03: aggregate calls
        (
            [M("x", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "SUM(revenue)"}})],
            "invalid_datus_extension",
        ),
        # DRV-FIL-04: cross-dataset predicate
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {
                        "derive": {
                            "type": "filter",
                            "base": "revenue",
                            "where": "refunds.region = 'e'",
                        }
                    },
                )
            ],
            "not_implemented",
        ),
        # DRV-FIL-05: the base must be a plain single aggregate
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "filter", "base": "close_rate", "where": "region = 'e'"}},
                )
            ],
            "not_implemented",
        ),
        # derive references are single-hop: a derived base is invalid
        (
            [
                DERIVED[0],
                M(
                    "x",
                    "SUM(CASE WHEN orders.status = 'completed' AND orders.region = 'e' "
                    "THEN orders.amount END)",
                    {
                        "derive": {
                            "type": "filter",
                            "base": "completed_revenue",
                            "where": "orders.region = 'e'",
                        }
                    },
                ),
            ],
            "invalid_datus_extension",
        ),
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "filter", "base": "revenue", "where": "nope = 1"}},
                )
            ],
            "unknown_column",
        ),
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "filter", "base": "revenue", "where": "SUM(amount) > 1"}},
                )
            ],
            "invalid_datus_extension",
        ),
        # ambiguous unqualified predicate column
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "filter", "base": "revenue", "where": "region = 'e'"}},
                )
            ],
            "ambiguous_column",
        ),
        # a D-PARAM bind marker no declared parameter fills
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {
                        "derive": {
                            "type": "filter",
                            "base": "revenue",
                            "where": "orders.amount > :t",
                        }
                    },
                )
            ],
            "invalid_datus_extension",
        ),
        # DRV-GEN-03: reserved family
        (
            [M("x", "SUM(orders.amount)", {"derive": {"type": "reagg", "base": "revenue"}})],
            "not_implemented",
        ),
        ([M("x", "SUM(orders.amount)", {"derive": {"type": "nope"}})], "invalid_datus_extension"),
        (
            [
                M(
                    "x",
                    "SUM(orders.amount)",
                    {"derive": {"type": "compose", "expr": "revenue", "fill": "0"}},
                )
            ],
            "invalid_datus_extension",
        ),
        # WIN-BASE-03: a base naming a window metric directly
        (
            [
                M(
                    "w1",
                    "SUM(orders.amount)",
                    {"window": {"type": "cumulative", "function": "sum"}},
                ),
                M(
                    "w2",
                    "SUM(orders.amount)",
                    {"window": {"base": "w1", "type": "cumulative", "function": "sum"}},
                ),
            ],
            "invalid_datus_extension",
        ),
    ],
)
def test_derive_errors(extra: list[dict[str, Any]], code: str) -> None:
    assert code in _compile_error(extra)


def test_drv_gen_05_cycle_reports_the_full_path() -> None:
    extra = [
        M("a1", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "b1 * 2"}}),
        M("b1", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "c1 + revenue"}}),
        M("c1", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "a1"}}),
    ]
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=model(extra))
    cyc = [d for d in err.value.issues if d.code == "metric_reference_cycle"]
    assert len(cyc) == 1 and "c1 -> a1 -> b1 -> c1" in cyc[0].message


def test_drv_cmp_07_no_conformed_dimension_warns() -> None:
    """DRV-CMP-07: members that share no dimension (no time axis, no relationship) warn."""
    extra = [
        M(
            "x",
            "SUM(orders.amount) + SUM(visits.converted)",
            {"derive": {"type": "compose", "expr": "revenue + conversions"}},
        )
    ]
    text = model(extra).replace("is_time: true", "is_time: false")
    e = dosi.Engine(model_text=text)
    assert "compose_no_conformed_dimensions" in [w["code"] for w in e.warnings]
    assert e.metric("x")["conformed_dimensions"] == []
    shared = dosi.Engine(model_text=model(extra))
    assert "compose_no_conformed_dimensions" not in [w["code"] for w in shared.warnings]


def test_drv_nest_07_lineage_draws_members_as_written(engine: Any) -> None:
    """DRV-NEST-07: member edges as written (quadrupled -> doubled, not the inlined leaf)."""
    g = engine.lineage()
    edges = {(e["source"], e["target"]) for e in g["edges"] if e["kind"] == "derives"}
    assert ("metric:doubled", "metric:quadrupled") in edges
    assert ("metric:revenue", "metric:quadrupled") not in edges
    assert ("metric:revenue", "metric:completed_revenue") in edges
    assert ("metric:close_rate", "metric:close_rate_rank") in edges
    derived = {n["name"] for n in g["nodes"] if n["kind"] == "metric_derived"}
    assert {"net_revenue", "completed_revenue"} <= derived and "revenue" not in derived


def test_drv_tier_02_basic_mode_computes_the_expression(db: Path) -> None:
    """DRV-TIER-02/03: basic mode ignores derive (one warning per metric) and computes the
    flatten-tier expression, with the same numbers."""
    conn = {"d": {"type": "duckdb", "uri": str(db)}}
    basic = dosi.Engine(model_text=model(DERIVED), connections=conn, mode="basic")
    datus = dosi.Engine(model_text=model(DERIVED), connections=conn)
    q = {"metrics": ["net_revenue", "completed_revenue", "aov"], "group_by": [MONTH]}
    a = sorted(map(str, basic.execute(q)["rows"]))
    b = sorted(map(str, datus.execute(q)["rows"]))
    assert a == b
    assert "ignored_vendor_extension" in [w["code"] for w in basic.warnings]
    assert basic.metric("net_revenue")["derive_family"] is None


def test_drv_meta_02_required_dimensions_along_the_chain() -> None:
    """DRV-META-02: a window partition's exclude must be grouped, on the metric and on every
    metric built on it."""
    extra = [
        M(
            "region_rank",
            "SUM(orders.amount)",
            {
                "v": "1.3",
                "window": {
                    "rank": {
                        "function": "rank",
                        "partition": {
                            "mode": "query_dimensions_except",
                            "exclude": ["orders.region"],
                        },
                    }
                },
            },
        ),
        M(
            "twice",
            "SUM(orders.amount)",
            {"derive": {"type": "compose", "expr": "region_rank * 2"}},
        ),
    ]
    e = dosi.Engine(model_text=model(extra))
    assert e.metric("region_rank")["required_dimensions"] == ["orders.region"]
    assert e.metric("twice")["required_dimensions"] == ["orders.region"]
    assert e.metric("revenue")["required_dimensions"] == []


def test_win_base_rank_over_a_cross_fact_ratio_with_gaps(db: Path) -> None:
    """WIN-BASE-05, WIN-19-03: refunds per order by month; months only one fact has give a
    NULL ratio (no fill on the members), ranked first with `nulls: first`."""
    extra = [
        M("refund_count", "COUNT(refunds.refund_id)"),
        M(
            "refund_ratio",
            "COUNT(refunds.refund_id) / COUNT(orders.order_id)",
            {"derive": {"type": "compose", "expr": "refund_count / order_count"}},
        ),
        M(
            "refund_ratio_rank",
            "COUNT(refunds.refund_id)",
            {
                "v": "1.9",
                "window": {
                    "base": "refund_ratio",
                    "rank": {
                        "function": "rank",
                        "order": {"by": "value", "direction": "desc", "nulls": "first"},
                    },
                },
            },
        ),
    ]
    e = dosi.Engine(model_text=model(extra), connections={"d": {"type": "duckdb", "uri": str(db)}})
    got = rows(
        e.execute({"metrics": ["refund_ratio", "refund_ratio_rank"], "group_by": [MONTH]}),
        "metric_time__month",
    )
    con = duckdb.connect(str(db), read_only=True)
    want = {
        r[0]: r[1:]
        for r in con.execute(
            "WITH o AS (SELECT date_trunc('month', order_date) m, COUNT(order_id) n FROM orders "
            "GROUP BY 1), f AS (SELECT date_trunc('month', refund_date) m, COUNT(refund_id) n "
            "FROM refunds GROUP BY 1), j AS (SELECT COALESCE(o.m, f.m) m, f.n::DOUBLE / o.n r "
            "FROM o FULL JOIN f ON o.m = f.m) SELECT strftime(m, '%Y-%m-%d'), r, "
            "RANK() OVER (ORDER BY r DESC NULLS FIRST) FROM j"
        ).fetchall()
    }
    con.close()
    assert set(got) == set(want) and len(want) == 6
    for k, (ratio, rank) in want.items():
        assert close(got[k]["refund_ratio"], ratio)
        assert got[k]["refund_ratio_rank"] == rank
