"""D-DERIVE stage tier (compose with window members) and nested windows (WIN-19-06..09) on the
derive mini model; expected values from hand-written SQL over the same DuckDB tables."""

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
P = {"mode": "query_dimensions"}


def W(name: str, expr: str, window: dict[str, Any]) -> dict[str, Any]:
    return M(name, expr, {"v": "1.9", "window": window})


STAGE = [
    W("revenue_cum", "SUM(orders.amount)", {"type": "cumulative", "function": "sum"}),
    W("orders_cum", "COUNT(orders.order_id)", {"type": "cumulative", "function": "sum"}),
    W(
        "revenue_mom",
        "SUM(orders.amount)",
        {"type": "pop", "offset": "1 month", "calculation": "delta"},
    ),
    W("visits_cum", "COUNT(visits.visit_id)", {"type": "cumulative", "function": "sum"}),
    M(
        "cum_aov",
        "SUM(orders.amount) / COUNT(orders.order_id)",
        {"derive": {"type": "compose", "expr": "revenue_cum / orders_cum"}},
    ),
    M(
        "cum_share",
        "SUM(orders.amount)",
        {"derive": {"type": "compose", "expr": "revenue / revenue_cum"}},
    ),
    M(
        "mom_filled",
        "SUM(orders.amount)",
        {"derive": {"type": "compose", "expr": "revenue_mom * 2", "fill": 0}},
    ),
    M(
        "cum_aov_x",
        "SUM(orders.amount)",
        {"derive": {"type": "compose", "expr": "cum_aov / revenue"}},
    ),
    M(
        "xfact",
        "SUM(orders.amount)",
        {"derive": {"type": "compose", "expr": "revenue_cum / visits_cum"}},
    ),
    # level 2: a 2-bucket moving average of the cumulative AOV; level 3: the rank of its gap
    W(
        "l2",
        "SUM(orders.amount)",
        {"base": "cum_aov", "frame": {"function": "avg", "preceding": 1, "partition": P}},
    ),
    M("c2", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "l2 - cum_aov"}}),
    W(
        "l3",
        "SUM(orders.amount)",
        {
            "base": "c2",
            "rank": {
                "function": "rank",
                "order": {"by": "value", "direction": "desc"},
                "partition": {"mode": "none"},
            },
        },
    ),
]
MONTH = {"field": "metric_time", "grain": "month"}

# per month: cumulative revenue / cumulative order count (SUM ignores the NULL amount)
_SERIES = """
WITH b AS (SELECT date_trunc('month', order_date) m, SUM(amount) rev, COUNT(order_id) n
           FROM orders {where} GROUP BY 1),
c AS (SELECT m, rev, SUM(rev) OVER (ORDER BY m) rc, SUM(n) OVER (ORDER BY m) nc,
             rev - LAG(rev) OVER (ORDER BY m) d,
             (SELECT b2.rev FROM b b2 WHERE b2.m = b.m - INTERVAL 1 MONTH) prev FROM b),
a AS (SELECT m, rev, rc, nc, rc::DOUBLE / nc aov, rev - prev mom FROM c),
l AS (SELECT *, AVG(aov) OVER (ORDER BY m ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) l2 FROM a)
SELECT strftime(m, '%Y-%m-%d'), rc, nc, aov, rev::DOUBLE / rc, COALESCE(mom, 0) * 2, aov / rev,
       l2, l2 - aov, RANK() OVER (ORDER BY l2 - aov DESC) FROM l
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("stage") / "stage.duckdb")


@pytest.fixture(scope="module")
def engine(db: Path) -> Iterator[Any]:
    e = dosi.Engine(model_text=model(STAGE), connections={"d": {"type": "duckdb", "uri": str(db)}})
    yield e
    e.close()


@pytest.fixture(scope="module")
def want(db: Path) -> Iterator[Any]:
    con = duckdb.connect(str(db), read_only=True)

    def run(where: str = "") -> dict[str, tuple]:
        return {r[0]: tuple(r[1:]) for r in con.execute(_SERIES.format(where=where)).fetchall()}

    yield run
    con.close()


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))


def by_month(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(r["metric_time__month"])[:10]: r for r in result["rows"]}


def test_drv_cmp_10_arithmetic_over_window_outputs(engine: Any, want: Any) -> None:
    """DRV-CMP-10: cumulative AOV = revenue_cum / orders_cum (accumulated, then divided);
    window and leaf members mixed; fill replaces a NULL window output (DRV-CMP-04)."""
    got = by_month(
        engine.execute(
            {"metrics": ["cum_aov", "cum_share", "mom_filled", "cum_aov_x"], "group_by": [MONTH]}
        )
    )
    exp_rows = want()
    assert set(got) == set(exp_rows)
    for k, (_, _, aov, share, mom2, aov_x, *_) in exp_rows.items():
        assert close(got[k]["cum_aov"], aov)
        assert close(got[k]["cum_share"], share)
        assert close(got[k]["mom_filled"], mom2)
        assert close(got[k]["cum_aov_x"], aov_x)  # DRV-NEST-08: a stage compose member


def test_drv_cmp_12_stage_metadata(engine: Any) -> None:
    m = engine.metric("cum_aov")
    assert m["derive_family"] == "compose"
    assert m["derive_members"] == [{"metric": "revenue_cum"}, {"metric": "orders_cum"}]
    assert m["leaf_measures"] == [] and m["attribution"] == "approximate"
    nested = engine.metric("cum_aov_x")
    assert nested["derive_members"] == [{"metric": "cum_aov"}, {"metric": "revenue"}]


def test_drv_cmp_11_cross_fact_window_members_rejected(engine: Any) -> None:
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["xfact"], "group_by": [MONTH]})
    assert err.value.code == "not_implemented"


def test_win_19_06_nested_windows_three_levels(engine: Any, want: Any) -> None:
    """WIN-19-06: level 2 (moving average over the cumulative AOV compose) and level 3 (rank
    of a compose over level 2), each one more stage; ties share a rank."""
    got = by_month(engine.execute({"metrics": ["cum_aov", "l2", "c2", "l3"], "group_by": [MONTH]}))
    for k, row in want().items():
        l2, c2, l3 = row[6], row[7], row[8]
        assert close(got[k]["l2"], l2)
        assert close(got[k]["c2"], c2)
        assert got[k]["l3"] == l3
    assert sorted(got[k]["l3"] for k in got) == [1, 2, 2, 4]


def test_win_19_08_trim_after_the_outermost_level(engine: Any, want: Any) -> None:
    """WIN-19-08: the cumulative restarts at the range start (frames read in-range buckets)
    and the trim runs once, after the last stage."""
    got = by_month(
        engine.execute(
            {
                "metrics": ["cum_aov", "l2"],
                "group_by": [MONTH],
                "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
            }
        )
    )
    exp_rows = want("WHERE order_date >= DATE '2024-03-01' AND order_date < DATE '2024-07-01'")
    assert set(got) == set(exp_rows) == {"2024-03-01", "2024-04-01", "2024-06-01"}
    for k, row in exp_rows.items():
        assert close(got[k]["cum_aov"], row[2])
        assert close(got[k]["l2"], row[6])


def test_win_19_09_global_and_expanding_never_share_a_query(engine: Any) -> None:
    """WIN-19-09: a partition-global metric at level 3 beside a scan-expanding offset."""
    with pytest.raises(QueryError) as err:
        engine.execute(
            {
                "metrics": ["l3", "revenue_mom"],
                "group_by": [MONTH],
                "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
            }
        )
    assert err.value.code == "not_implemented"


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        # WIN-19-07: partition explicit from level 2
        (
            [
                W(
                    "bad",
                    "SUM(orders.amount)",
                    {"base": "cum_aov", "frame": {"function": "avg", "preceding": 1}},
                )
            ],
            "invalid_datus_extension",
        ),
        # WIN-19-06: at most 3 levels
        (
            [
                M("c3", "SUM(orders.amount)", {"derive": {"type": "compose", "expr": "l3 * 1"}}),
                W(
                    "l4",
                    "SUM(orders.amount)",
                    {"base": "c3", "rank": {"function": "rank", "partition": {"mode": "none"}}},
                ),
            ],
            "not_implemented",
        ),
    ],
)
def test_nested_window_errors(extra: list[dict[str, Any]], code: str) -> None:
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=model([*STAGE, *extra]))
    assert code in [d.code for d in err.value.issues]


def test_drv_cmp_12_stage_tier_is_not_attributable(engine: Any) -> None:
    flags = {m["name"]: m["attributable"] for m in engine.metrics()}
    assert not flags["cum_aov"] and not flags["l2"] and not flags["c2"]
    assert flags["revenue"]
