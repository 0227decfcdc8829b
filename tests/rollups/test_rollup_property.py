"""Issue 28 item 5: a hypothesis property over random rollup declarations and random queries
on the shop example: with the declared rollups built, every query answers exactly what the
fact table answers (or fails with the same error code). The measures include COUNT DISTINCT
(issue 28 session 6, item 2: its key is stored, so coarser grains count exactly), and the
dimensions a joined dataset (customers.segment, item 3)."""

from __future__ import annotations

import decimal
import itertools
import shutil
from pathlib import Path
from typing import Any

import pytest
from enginekit import SHOP_MODEL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dosi import Engine
from dosi.errors import OsiError

ORDER_MEASURES = [
    "revenue",
    "order_count",
    "net_revenue",
    "completed_revenue",
    "first_order_date",
    "customer_count",
]
GRAINS = ["day", "week", "month", "quarter", "year"]
_COUNTER = itertools.count()


@st.composite
def declarations(draw: st.DrawFn) -> dict[str, Any]:
    items = []
    for i in range(draw(st.integers(1, 2))):
        items.append(
            {
                "name": f"orders_r{i}",
                "dataset": "orders",
                "time": "order_date",
                "grain": draw(st.sampled_from(GRAINS)),
                "dimensions": draw(
                    st.lists(
                        st.sampled_from(["channel", "status", "customers.segment"]), unique=True
                    )
                ),
                "measures": draw(
                    st.lists(st.sampled_from(ORDER_MEASURES), min_size=1, max_size=4, unique=True)
                ),
            }
        )
    if draw(st.booleans()):
        items.append(
            {
                "name": "refunds_r",
                "dataset": "refunds",
                "time": "refund_date",
                "grain": draw(st.sampled_from(GRAINS)),
                "measures": ["refund_total"],
            }
        )
    return {"rollups": items}


@st.composite
def queries(draw: st.DrawFn) -> dict[str, Any]:
    grain = draw(st.sampled_from([None, *GRAINS]))
    pool = [
        "revenue",
        "order_count",
        "net_revenue",
        "avg_order_value",
        "completed_revenue",
        "refund_total",
        "first_order_date",
        "revenue_net_of_refunds",
        "customer_count",
    ]
    if grain == "month":
        pool += ["revenue_mom", "revenue_ytd", "revenue_rolling_3m"]
    q: dict[str, Any] = {
        "metrics": draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))
    }
    groups = [f"metric_time:{grain}"] if grain else []
    groups += draw(
        st.lists(
            st.sampled_from(["orders.channel", "orders.status", "customers.segment"]),
            max_size=2,
            unique=True,
        )
    )
    if groups:
        q["group_by"] = groups
    where = draw(st.sampled_from([None, "orders.channel = 'web'", "orders.status = 'completed'"]))
    if where:
        q["where_sql"] = where
    start = draw(st.sampled_from([None, "2024-01-01", "2024-04-01", "2024-03-15", "2024-02-05"]))
    if start:
        q["time_range"] = {"start": start, "end": "2025-01-01"}
    if grain and draw(st.booleans()):
        q["densify"] = "time"
    if draw(st.booleans()):
        q["order_by"] = [f"-{q['metrics'][0]}"]
        q["limit"] = draw(st.integers(1, 5))
    return q


def _answer(engine: Engine, q: dict[str, Any], db: Path) -> Any:
    try:
        r = engine.execute(q, db_path=db)
    except OsiError as err:
        return ("error", err.code)
    norm = [
        tuple(
            round(float(v), 6) if isinstance(v, (float, decimal.Decimal)) else v
            for v in row.values()
        )
        for row in r["rows"]
    ]
    return r["columns"], norm, "dosi_rollups" in r["sql"]


@pytest.fixture(scope="module")
def db(shop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rollup_property") / "shop.duckdb"
    shutil.copyfile(shop_db, path)
    return path


@pytest.fixture(scope="module")
def fact() -> Any:
    engine = Engine(SHOP_MODEL, result_cache=False)
    yield engine
    engine.close()


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(decl=declarations(), qs=st.lists(queries(), min_size=3, max_size=3))
def test_issue28_5_random_rollups_answer_as_the_fact_table(
    decl: dict[str, Any], qs: list[dict[str, Any]], db: Path, fact: Engine
) -> None:
    store = db.parent / f"store{next(_COUNTER)}.duckdb"
    engine = Engine(SHOP_MODEL, rollups=decl, rollup_store=store, result_cache=False)
    try:
        engine.rollups_build(db_path=db)
        first = decl["rollups"][0]
        own = {  # the first rollup's own shape: it must be served
            "metrics": first["measures"][:1],
            "group_by": [f"metric_time:{first['grain']}"]
            + [d if "." in d else f"orders.{d}" for d in first["dimensions"]],
        }
        got, want = _answer(engine, own, db), _answer(fact, own, db)
        assert got[:2] == want[:2] and got[2], own
        for q in qs:
            got, want = _answer(engine, q, db), _answer(fact, q, db)
            if want[0] == "error":
                assert got == want, q
            else:
                assert got[:2] == want[:2], q
    finally:
        engine.close()
        store.unlink(missing_ok=True)
