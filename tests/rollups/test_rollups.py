"""Issue 28 items 1-3 and 5: declared rollups on the shop example. Every query answers the
same with rollups built as without them (the fact table is the oracle: an engine without
rollups on the same DuckDB file), window metrics, composes and merges included; explain says
which rollup serves each branch and why the others did not; a rollup whose data changed is
stale and never read until refreshed; a refresh swaps the store whole, so a query running
beside it reads the old rollups or the new ones, never a half-written file."""

from __future__ import annotations

import decimal
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import SHOP_MODEL

from dosi import Engine
from dosi.compiler.rollup import RollupError
from dosi.errors import ArgumentError

ROLLUPS: dict[str, Any] = {
    "version": 1,
    "rollups": [
        {
            "name": "orders_daily",
            "dataset": "orders",
            "time": "order_date",
            "grain": "day",
            "dimensions": ["channel", "status"],
            "measures": [
                "revenue",
                "order_count",
                "avg_order_value",
                "net_revenue",
                "completed_revenue",
                "first_order_date",
                "customer_count",
            ],
        },
        {
            "name": "orders_monthly",
            "dataset": "orders",
            "time": "order_date",
            "grain": "month",
            "dimensions": ["channel"],
            "measures": ["revenue", "order_count"],
        },
        {
            "name": "refunds_monthly",
            "dataset": "refunds",
            "time": "refund_date",
            "grain": "month",
            "measures": ["refund_total", "refund_count"],
        },
    ],
}

M = "metric_time"
QUERIES: list[dict[str, Any]] = [
    {"metrics": ["revenue"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{M}:day"]},
    {"metrics": ["revenue", "order_count"], "group_by": [f"{M}:week"]},
    {"metrics": ["revenue", "avg_order_value"], "group_by": [f"{M}:month", "orders.channel"]},
    {"metrics": ["net_revenue", "completed_revenue"], "group_by": [f"{M}:quarter"]},
    {"metrics": ["revenue", "first_order_date"], "group_by": ["orders.status"]},
    {"metrics": ["revenue", "refund_total"], "group_by": [f"{M}:year"]},
    {"metrics": ["revenue_net_of_refunds"], "group_by": [f"{M}:month"]},
    {"metrics": ["refund_total", "refund_count"], "group_by": [f"{M}:quarter"]},
    {"metrics": ["revenue_mom", "revenue_yoy"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_rolling_3m", "revenue_ytd"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_running", "revenue_rank"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue_next_month", "first_month_revenue"], "group_by": [f"{M}:month"]},
    {
        "metrics": ["revenue_mom", "revenue"],
        "group_by": [f"{M}:month", "orders.channel"],
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
    },
    {
        "metrics": ["revenue", "order_count"],
        "group_by": [f"{M}:month"],
        "where_sql": "orders.channel = 'web' AND orders.status <> 'cancelled'",
    },
    {
        "metrics": ["revenue"],
        "group_by": [f"{M}:day"],
        "time_range": {"start": "2024-03-15", "end": "2024-04-10"},
    },
    {
        "metrics": ["revenue"],
        "group_by": [f"{M}:month"],
        "time_range": {"start": "2024-03-15", "end": "2024-06-01"},
    },
    {"metrics": ["revenue", "refund_total"], "group_by": [f"{M}:month"], "densify": "time"},
    {"metrics": ["revenue"], "group_by": ["customers.segment"]},
    {"metrics": ["customer_count"], "group_by": [f"{M}:month"]},
    {"metrics": ["revenue"], "group_by": [f"{M}:month"], "where_sql": "revenue > 100000"},
    {"metrics": ["revenue"], "group_by": [f"{M}:month"], "order_by": ["-revenue"], "limit": 5},
    {"metrics": ["revenue_moving_avg"], "group_by": [f"{M}:month"], "params": {"n": 3}},
]


def _norm(v: Any) -> Any:
    if isinstance(v, (float, decimal.Decimal)):
        return round(float(v), 6)
    return v


def _reads(engine: Engine, query: dict[str, Any], db: Path) -> bool:
    """The query's SQL on `db` reads the rollup store."""
    return "dosi_rollups" in engine.execute(query, db_path=db, cache=False)["sql"]


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return [tuple(_norm(r[c]) for c in result["columns"]) for r in result["rows"]]


@pytest.fixture(scope="module")
def shop_copy(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("rollups") / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    return db


@pytest.fixture(scope="module")
def served(shop_copy: Path) -> Any:
    engine = Engine(
        SHOP_MODEL,
        rollups=ROLLUPS,
        rollup_store=shop_copy.parent / "store.duckdb",
        result_cache=False,
    )
    engine.rollups_build(db_path=shop_copy)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def fact() -> Any:
    engine = Engine(SHOP_MODEL, result_cache=False)
    yield engine
    engine.close()


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
def test_issue28_5_rollups_answer_as_the_fact_table(
    served: Engine, fact: Engine, shop_copy: Path, query: dict[str, Any]
) -> None:
    a = served.execute(query, db_path=shop_copy)
    b = fact.execute(query, db_path=shop_copy)
    assert a["columns"] == b["columns"]
    assert _rows(a) == _rows(b)
    assert a.arrow.schema.types == b.arrow.schema.types  # same types too (counts stay BIGINT)


def test_issue28_2_served_share_and_explain(served: Engine, shop_copy: Path) -> None:
    reads = [_reads(served, q, shop_copy) for q in QUERIES]
    assert sum(reads) >= 15, reads
    # COUNT DISTINCT is served from the stored key (issue 28 item 2 of session 6)
    assert reads[QUERIES.index({"metrics": ["customer_count"], "group_by": [f"{M}:month"]})]
    text = served.explain(
        {"metrics": ["revenue", "refund_total"], "group_by": [f"{M}:year"]}, db_path=shop_copy
    )
    assert "m0 over orders: rollup orders_monthly" in text  # the smaller rollup wins
    assert "m1 over refunds: rollup refunds_monthly" in text
    text = served.explain(
        {
            "metrics": ["revenue"],
            "group_by": [f"{M}:month"],
            "time_range": {"start": "2024-03-15", "end": "2024-06-01"},
        },
        db_path=shop_copy,
    )
    assert "m0 over orders: rollup orders_daily" in text
    assert "not orders_monthly: the time bound 2024-03-15 splits a month bucket" in text
    text = served.explain(
        {"metrics": ["revenue"], "group_by": ["customers.segment"]}, db_path=shop_copy
    )
    assert "m0 over orders: fact table" in text and "joins customers" in text
    text = served.explain({"metrics": ["revenue"], "group_by": [f"{M}:day"]}, db_path=shop_copy)
    assert "not orders_monthly: grain day is not derivable from the rollup's month" in text


def test_issue28_3_stale_rollups_are_not_read_until_refreshed(
    shop_db: Path, tmp_path: Path
) -> None:
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    engine = Engine(SHOP_MODEL, rollups=ROLLUPS, rollup_store=tmp_path / "store.duckdb")
    fact = Engine(SHOP_MODEL, result_cache=False)
    q = {"metrics": ["revenue", "refund_total"], "group_by": [f"{M}:quarter"]}
    try:
        engine.rollups_build(db_path=db)
        assert _reads(engine, q, db)
        before = _rows(engine.execute(q, db_path=db))
        work = tmp_path / "next.duckdb"
        shutil.copyfile(db, work)
        con = duckdb.connect(str(work))
        con.execute("UPDATE main.orders SET amount = amount + 1")
        con.close()
        os.replace(work, db)
        status = {r["name"]: r for r in engine.rollups_status(db_path=db)["rollups"]}
        assert status["orders_daily"]["state"] == "stale"
        assert "data changed" in status["orders_daily"]["reason"]
        assert not _reads(engine, q, db)  # stale: the fact table
        after = _rows(engine.execute(q, db_path=db))
        assert after == _rows(fact.execute(q, db_path=db)) != before
        refreshed = engine.rollups_refresh(db_path=db)
        assert set(refreshed["built"]) == {"orders_daily", "orders_monthly", "refunds_monthly"}
        assert _reads(engine, q, db)
        assert _rows(engine.execute(q, db_path=db)) == after
        assert engine.rollups_refresh(db_path=db)["built"] == []  # all fresh: nothing to do
        dropped = engine.rollups_drop(["orders_monthly"], db_path=db)
        state = {r["name"]: r["state"] for r in dropped["rollups"]}
        assert state == {
            "orders_daily": "fresh",
            "orders_monthly": "missing",
            "refunds_monthly": "fresh",
        }
    finally:
        engine.close()
        fact.close()


def test_issue28_5_refresh_race_never_mixes(shop_db: Path, tmp_path: Path) -> None:
    """Queries run while another thread drops and rebuilds the store over and over: every
    answer is the fact table's (from the old store, the new one, or the fact table)."""
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    store = tmp_path / "store.duckdb"
    builder = Engine(SHOP_MODEL, rollups=ROLLUPS, rollup_store=store)
    reader = Engine(SHOP_MODEL, rollups=ROLLUPS, rollup_store=store, result_cache=False)
    fact = Engine(SHOP_MODEL, result_cache=False)
    q = {"metrics": ["revenue", "refund_total", "revenue_mom"], "group_by": [f"{M}:month"]}
    expected = _rows(fact.execute(q, db_path=db))
    builder.rollups_build(db_path=db)
    stop = threading.Event()
    errors: list[BaseException] = []

    def rebuild() -> None:
        try:
            for i in range(6):
                if i % 2:
                    builder.rollups_build(db_path=db)
                else:
                    builder.rollups_drop(["orders_daily", "refunds_monthly"], db_path=db)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            stop.set()

    t = threading.Thread(target=rebuild)
    t.start()
    answers = served = 0
    try:
        while not stop.is_set() or answers < 5:
            result = reader.execute(q, db_path=db)
            served += "dosi_rollups" in result["sql"]
            assert _rows(result) == expected
            answers += 1
    finally:
        t.join()
        for e in (builder, reader, fact):
            e.close()
    assert not errors, errors
    assert served >= 1


def test_issue28_1_declaration_errors(tmp_path: Path) -> None:
    def bad(item: dict[str, Any]) -> RollupError:
        with pytest.raises(RollupError) as err:
            Engine(SHOP_MODEL, rollups={"rollups": [item]}, rollup_store=tmp_path / "s.duckdb")
        assert err.value.code == "invalid_rollup"
        return err.value

    base = {"name": "r", "dataset": "orders", "measures": ["revenue"]}
    assert "orders" in bad({**base, "dataset": "order"}).candidates
    assert "channel" in bad({**base, "dimensions": ["chanel"]}).candidates
    text = (
        Path(SHOP_MODEL)
        .read_text()
        .replace(
            "    metrics:\n",
            "    metrics:\n      - name: avg_amount\n        expression: {dialects: [{dialect: "
            "ANSI_SQL, expression: AVG(orders.amount)}]}\n",
            1,
        )
    )
    with pytest.raises(RollupError) as err:
        Engine(
            model_text=text,
            rollups={"rollups": [{**base, "measures": ["avg_amount"]}]},
            rollup_store=tmp_path / "s.duckdb",
        )
    assert "does not roll up" in err.value.message
    assert "partitions" in bad({**base, "refresh": {"partitions": 0}}).message
    assert "duration" in bad({**base, "refresh": {"every": "soon"}}).message
    assert "every" in bad({**base, "refresh": {"evry": 1}}).candidates
    assert "another dataset" in bad({**base, "measures": ["refund_total"]}).message
    assert "grain" in bad({**base, "time": "order_date", "grain": "fortnight"}).message
    assert "extra" in bad({**base, "extra": 1}).message
    with pytest.raises(RollupError):
        Engine(SHOP_MODEL, rollups={"rollups": [base, base]}, rollup_store=tmp_path / "s.duckdb")


def test_issue28_3_staleness_budget_serves_the_last_build(shop_db: Path, tmp_path: Path) -> None:
    """A rollup declared with `staleness_budget` keeps serving its last build for that long
    after the data changed (the declared trade), and refresh rebuilds it."""
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    decl = {"rollups": [{**ROLLUPS["rollups"][1], "staleness_budget": 3600}]}
    engine = Engine(
        SHOP_MODEL, rollups=decl, rollup_store=tmp_path / "s.duckdb", result_cache=False
    )
    q = {"metrics": ["revenue"], "group_by": [f"{M}:year"]}
    try:
        engine.rollups_build(db_path=db)
        before = _rows(engine.execute(q, db_path=db))
        work = tmp_path / "next.duckdb"
        shutil.copyfile(db, work)
        con = duckdb.connect(str(work))
        con.execute("UPDATE main.orders SET amount = amount + 1")
        con.close()
        os.replace(work, db)
        (row,) = engine.rollups_status(db_path=db)["rollups"]
        assert (row["state"], row["serving"]) == ("stale", True)
        assert _reads(engine, q, db) and _rows(engine.execute(q, db_path=db)) == before
        assert engine.rollups_refresh(db_path=db)["built"] == ["orders_monthly"]
        assert _rows(engine.execute(q, db_path=db)) != before
        (row,) = engine.rollups_status(db_path=db)["rollups"]
        assert (row["state"], row["serving"]) == ("fresh", True)
    finally:
        engine.close()


def test_issue28_3_incremental_refresh_recomputes_buckets_from_since(
    shop_db: Path, tmp_path: Path
) -> None:
    """`rollups_refresh(since=...)` recomputes the time buckets from `since` on and keeps the
    older stored rows as they were: the new buckets answer as the fact table, the older ones
    as at the last build (the caller asserted they did not change)."""
    db = tmp_path / "shop.duckdb"
    shutil.copyfile(shop_db, db)
    decl = {"rollups": [ROLLUPS["rollups"][1]]}  # orders_monthly
    engine = Engine(
        SHOP_MODEL, rollups=decl, rollup_store=tmp_path / "s.duckdb", result_cache=False
    )
    fact = Engine(SHOP_MODEL, result_cache=False)
    q = {"metrics": ["revenue", "order_count"], "group_by": [f"{M}:month", "orders.channel"]}
    try:
        engine.rollups_build(db_path=db)
        before = {r[:2]: r for r in _rows(engine.execute(q, db_path=db))}
        work = tmp_path / "next.duckdb"
        shutil.copyfile(db, work)
        con = duckdb.connect(str(work))
        con.execute("UPDATE main.orders SET amount = amount + 1 WHERE order_date >= '2025-06-01'")
        con.execute("UPDATE main.orders SET amount = amount + 100 WHERE order_date < '2024-01-01'")
        con.close()
        os.replace(work, db)
        with pytest.raises(ArgumentError) as err:
            engine.rollups_refresh(db_path=db, since="2025-06-15")
        assert "month bucket" in err.value.message
        out = engine.rollups_refresh(db_path=db, since="2025-06-01")
        assert out["built"] == ["orders_monthly"] and out["rollups"][0]["state"] == "fresh"
        now = _rows(engine.execute(q, db_path=db))
        assert _reads(engine, q, db)
        truth = {r[:2]: r for r in _rows(fact.execute(q, db_path=db))}
        for row in now:
            month = str(row[0])
            if month >= "2025-06-01":
                assert row == truth[row[:2]] != before[row[:2]]
            elif month < "2024-01-01":
                assert row == before[row[:2]] != truth[row[:2]]  # kept as built
            else:
                assert row == truth[row[:2]] == before[row[:2]]
        assert len(now) == len(before)
    finally:
        engine.close()
        fact.close()
