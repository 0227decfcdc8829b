"""dosi 1.15 `empty_buckets: "drop"` (issue 23 bed: MetricFlow's filtered-metric buckets): a
bucket where no row passes a filtered metric's predicate is no row, where the D-DERIVE filter
keeps it (NULL / 0). Values from hand-written SQL over the derive mini tables (months without a
completed order, a month with only cancelled ones), and the structured errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from derivekit import TABLES, build_db, metric, model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dosi
from dosi.errors import ModelError
from dosi.ext.registry import capabilities

DROP = {"v": "1.15", "empty_buckets": "drop"}


def _filter(base: str, where: str) -> dict[str, Any]:
    return {"type": "filter", "base": base, "where": where}


EXTRA = [
    metric(
        "completed_revenue",
        "SUM(CASE WHEN orders.status = 'completed' THEN orders.amount END)",
        {**DROP, "derive": _filter("revenue", "status = 'completed'")},
    ),
    metric(
        "pending_revenue",
        "SUM(CASE WHEN orders.status = 'pending' THEN orders.amount END)",
        {**DROP, "derive": _filter("revenue", "status = 'pending'")},
    ),
    metric(
        "pending_revenue_kept",
        "SUM(CASE WHEN orders.status = 'pending' THEN orders.amount END)",
        {"v": "1.4", "derive": _filter("revenue", "status = 'pending'")},
    ),
    metric(
        "cancelled_orders",
        "COUNT(CASE WHEN orders.status = 'cancelled' THEN 1 END)",
        {**DROP, "derive": _filter("order_count", "status = 'cancelled'")},
    ),
    metric(
        "east_visits",  # a hand-written CASE aggregate, no derive declaration
        "COUNT(CASE WHEN visits.region = 'east' THEN visits.visit_id END)",
        DROP,
    ),
    metric("revenue_dropping", "SUM(orders.amount)", DROP),  # no filter: every row counts
]
MONTH = {"field": "metric_time", "grain": "month"}
M = "metric_time__month"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_db(tmp_path_factory.mktemp("empty_buckets") / "d.duckdb")


@pytest.fixture(scope="module")
def engine(db: Path) -> Iterator[Any]:
    e = dosi.Engine(model_text=model(EXTRA), connections={"d": {"type": "duckdb", "uri": str(db)}})
    yield e
    e.close()


@pytest.fixture(scope="module")
def sql(db: Path) -> Iterator[Any]:
    con = duckdb.connect(str(db), read_only=True)

    def run(text: str) -> set[tuple[Any, ...]]:
        return {tuple(r) for r in con.execute(text).fetchall()}

    yield run
    con.close()


def got(engine: Any, metrics: list[str]) -> set[tuple[Any, ...]]:
    res = engine.execute({"metrics": metrics, "group_by": [MONTH]})
    return {(str(r[M])[:10], *(r[m] for m in metrics)) for r in res["rows"]}


def test_drop_keeps_only_the_months_a_pending_order_has(engine: Any, sql: Any) -> None:
    """Orders fall in January, March, April and June; only March has a pending one: the other
    months vanish (MetricFlow's WHERE), where the D-DERIVE default keeps them as NULL."""
    want = sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), SUM(amount) "
        "FROM orders WHERE status = 'pending' GROUP BY 1"
    )
    assert got(engine, ["pending_revenue"]) == want and len(want) == 1
    kept = got(engine, ["pending_revenue_kept"])
    assert kept == sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), "
        "SUM(amount) FILTER (WHERE status = 'pending') FROM orders GROUP BY 1"
    )
    assert len(kept) == 4
    assert got(engine, ["completed_revenue"]) == sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), SUM(amount) "
        "FROM orders WHERE status = 'completed' GROUP BY 1"
    )


def test_a_count_drops_instead_of_reading_zero(engine: Any, sql: Any) -> None:
    want = sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), COUNT(*) "
        "FROM orders WHERE status = 'cancelled' GROUP BY 1"
    )
    assert got(engine, ["cancelled_orders"]) == want
    assert all(r[1] > 0 for r in want)


def test_two_filters_on_one_branch_keep_a_month_either_has(engine: Any, sql: Any) -> None:
    """One branch, two predicates: a month stays when either metric has a row (the OR), and
    the other reads NULL / 0 there, as MetricFlow's FULL OUTER merge of the two."""
    want = sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), "
        "SUM(amount) FILTER (WHERE status = 'completed'), "
        "COUNT(*) FILTER (WHERE status = 'cancelled') "
        "FROM orders WHERE status IN ('completed', 'cancelled') GROUP BY 1"
    )
    assert got(engine, ["pending_revenue", "cancelled_orders"]) == sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), "
        "SUM(amount) FILTER (WHERE status = 'pending'), "
        "COUNT(*) FILTER (WHERE status = 'cancelled') "
        "FROM orders WHERE status IN ('pending', 'cancelled') GROUP BY 1"
    )
    assert got(engine, ["completed_revenue", "cancelled_orders"]) == want


def test_an_unfiltered_metric_beside_it_keeps_every_month(engine: Any, sql: Any) -> None:
    want = sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), "
        "SUM(amount) FILTER (WHERE status = 'pending'), SUM(amount) FROM orders GROUP BY 1"
    )
    assert got(engine, ["pending_revenue", "revenue"]) == want
    assert got(engine, ["revenue_dropping"]) == sql(
        "SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d'), SUM(amount) "
        "FROM orders GROUP BY 1"
    )


def test_a_hand_written_case_aggregate_drops_too(engine: Any, sql: Any) -> None:
    want = sql(
        "SELECT strftime(date_trunc('month', visit_date), '%Y-%m-%d'), COUNT(visit_id) "
        "FROM visits WHERE region = 'east' GROUP BY 1"
    )
    assert got(engine, ["east_visits"]) == want


def test_across_facts_the_other_branch_still_has_its_months(engine: Any, sql: Any) -> None:
    """Branches merge FULL OUTER: a month only visits have appears with NULL revenue."""
    res = got(engine, ["pending_revenue", "visit_count"])
    want = sql(
        "SELECT COALESCE(o.m, v.m), o.rev, v.n FROM "
        "(SELECT strftime(date_trunc('month', order_date), '%Y-%m-%d') m, SUM(amount) rev "
        " FROM orders WHERE status = 'pending' GROUP BY 1) o FULL OUTER JOIN "
        "(SELECT strftime(date_trunc('month', visit_date), '%Y-%m-%d') m, COUNT(visit_id) n "
        " FROM visits GROUP BY 1) v ON o.m = v.m"
    )
    assert res == want


def _load(ext: dict[str, Any]) -> None:
    dosi.Engine(model_text=model([metric("x", "SUM(orders.amount)", ext)])).close()


def test_a_bad_value_is_invalid_datus_extension() -> None:
    with pytest.raises(ModelError) as err:
        _load({"v": "1.15", "empty_buckets": "never"})
    assert any(d["code"] == "invalid_datus_extension" for d in err.value.compile_errors)


def test_the_key_is_gated_at_1_15() -> None:
    """An envelope older than the key is honored with the gate's warning (datus-extensions
    §2.1), so an engine that predates 1.15 is told what it does not know."""
    e = dosi.Engine(model_text=model([metric("x", "SUM(orders.amount)", {**DROP, "v": "1.14"})]))
    codes = {w.code for w in e.model.warnings}
    e.close()
    assert "datus_ext_key_newer_than_declared" in codes


def test_capability_row() -> None:
    row = next(k for k in capabilities()["keys"] if k["key"] == "empty_buckets")
    assert row["since"] == "1.15" and row["impact"] == "documented" and row["implemented"]


ROW = st.tuples(
    st.integers(1, 4),  # month
    st.sampled_from(["pending", "completed", "cancelled"]),
    st.one_of(st.none(), st.integers(0, 50)),  # amount, NULL too
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=12))
def test_drop_is_keep_restricted_to_buckets_with_a_matching_row(
    engine: Any, tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, str, int | None]]
) -> None:
    """Property (plain Python as the oracle): the dropping metric answers exactly the months
    holding a pending row, each with the keeping metric's value there (NULL when the pending
    amounts are all NULL: a matching row keeps its bucket)."""
    db = tmp_path_factory.mktemp("prop") / "p.duckdb"
    con = duckdb.connect(str(db))
    cols, _ = TABLES["orders"]
    con.execute(f"CREATE TABLE orders ({cols})")
    for name, (c, _) in TABLES.items():
        if name != "orders":
            con.execute(f"CREATE TABLE {name} ({c})")
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, 'east', ?, ?, 1)",
        [(i, f"2024-0{m}-10", s, a) for i, (m, s, a) in enumerate(rows)],
    )
    con.close()

    def run(metric: str) -> dict[str, Any]:
        res = engine.execute({"metrics": [metric], "group_by": [MONTH]}, db_path=db)
        return {str(r[M])[:7]: r[metric] for r in res["rows"]}

    kept, dropped = run("pending_revenue_kept"), run("pending_revenue")
    months = {f"2024-0{m}" for m, s, _ in rows if s == "pending"}
    assert set(dropped) == months
    assert all(dropped[k] == kept[k] for k in months)
    want = {
        k: (
            None
            if all(a is None for m, s, a in rows if f"2024-0{m}" == k and s == "pending")
            else sum(a or 0 for m, s, a in rows if f"2024-0{m}" == k and s == "pending")
        )
        for k in months
    }
    assert {k: (None if v is None else float(v)) for k, v in dropped.items()} == want
