"""D-LOD metrics across conformed facts (datus-extensions §3 D-LOD "cross-fact alignment",
D-CONFORM; CHECKLIST LOD-XF-02): with orders and refunds paired on (channel_id, date), either
spelling of the channel is the same view dimension -- a fixed key or an excluded dimension
written on orders matches a group-by on refunds' spelling, and the facts are never joined.
Expected values from hand-written SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import lodmetrickit
import pytest
import yaml

import dosi


@pytest.fixture(scope="module")
def conformed(lod_db: Path) -> dosi.Engine:
    doc = lodmetrickit.model_dict()
    sm = doc["semantic_model"][0]
    sm["relationships"].append(
        {
            "name": "orders_refunds_conformed",
            "from": "orders",
            "to": "refunds",
            "from_columns": ["channel_id", "event_date"],
            "to_columns": ["channel_id", "refund_date"],
            "custom_extensions": lodmetrickit.ext(
                {"v": "1.8", "requires": ["cardinality"], "cardinality": "many_to_many"}
            ),
        }
    )
    return dosi.Engine(
        model_text=yaml.safe_dump(doc, sort_keys=False),
        connections={"db": {"type": "duckdb", "uri": str(lod_db)}},
    )


def _rows(engine: dosi.Engine, query: dict[str, Any]) -> list[tuple[Any, ...]]:
    res = engine.execute(query)
    return sorted((tuple(r.values()) for r in res["rows"]), key=repr)


def _sql(db: Path, text: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted((tuple(r) for r in con.execute(text).fetchall()), key=repr)
    finally:
        con.close()


REFUNDS_BY_CHANNEL = "(SELECT channel_id, SUM(refund_amount) r FROM lod_refund GROUP BY 1)"


@pytest.mark.parametrize("spelling", ["orders.channel_id", "refunds.channel_id"])
def test_fixed_key_matches_either_spelling(conformed, lod_db, spelling: str) -> None:
    got = _rows(
        conformed, {"metrics": ["revenue_fixed_by_channel", "refunds"], "group_by": [spelling]}
    )
    want = _sql(
        lod_db,
        "SELECT COALESCE(o.channel_id, f.channel_id), o.v, f.r FROM (SELECT channel_id, "
        f"SUM(amount) v FROM lod_order GROUP BY 1) o FULL JOIN {REFUNDS_BY_CHANNEL} f "
        "USING (channel_id)",
    )
    assert got == want


def test_exclude_drops_the_other_spelling(conformed, lod_db) -> None:
    q = {
        "metrics": ["revenue_excl_channel", "refunds"],
        "group_by": ["refunds.channel_id", "metric_time:month"],
    }
    got = [(c, str(m), v, r) for c, m, v, r in _rows(conformed, q)]
    want = _sql(
        lod_db,
        "WITH k AS (SELECT channel_id, CAST(DATE_TRUNC('month', event_date) AS DATE) m FROM "
        "lod_order UNION SELECT channel_id, CAST(DATE_TRUNC('month', refund_date) AS DATE) FROM "
        "lod_refund) SELECT k.channel_id, CAST(k.m AS VARCHAR), t.v, r.r FROM k JOIN (SELECT "
        "CAST(DATE_TRUNC('month', event_date) AS DATE) m, SUM(amount) v FROM lod_order GROUP "
        "BY 1) t USING (m) LEFT JOIN (SELECT channel_id, CAST(DATE_TRUNC('month', refund_date) "
        "AS DATE) m, SUM(refund_amount) r FROM lod_refund GROUP BY 1, 2) r USING (channel_id, m)",
    )
    assert sorted(got, key=repr) == want


def test_include_under_the_other_spelling(conformed, lod_db) -> None:
    got = _rows(
        conformed, {"metrics": ["revenue_per_user", "refunds"], "group_by": ["refunds.channel_id"]}
    )
    want = _sql(
        lod_db,
        "SELECT i.channel_id, i.v, f.r FROM (SELECT channel_id, AVG(s) v FROM (SELECT "
        "channel_id, user_id, SUM(amount) s FROM lod_order GROUP BY 1, 2) GROUP BY 1) i "
        f"FULL JOIN {REFUNDS_BY_CHANNEL} f USING (channel_id)",
    )
    assert got == want
