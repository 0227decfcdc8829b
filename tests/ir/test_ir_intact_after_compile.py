"""A compile never edits the model's expression trees (issue 10 items 1 and 8).

The SQL tree of a query is built from clones of the IR's sqlglot trees and rendered without
sqlglot's defensive deep copy (dialect generators may rewrite the tree in place): this pins
that every piece reaching that tree was cloned. Every dialect renders the query shapes that
exercise each builder (flat, joins, pre-aggregation, merges on both merge strategies, window
stages of every family, streaming windows, metric filters, order and limit); afterwards the
model's trees are unchanged, and compiling everything again gives the same text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from enginekit import SHOP_MODEL
from sqlglot import exp

from dosi.engine import Engine
from dosi.errors import OsiError
from dosi.ir.model import ModelIr
from dosi.pipeline import compile_query
from dosi.sql.dialects import DIALECTS

MONTH = "metric_time:month"
QUERIES: list[dict[str, Any]] = [
    {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
    {"metrics": ["revenue"], "group_by": [MONTH, "customers.segment"], "limit": 3},
    {"metrics": ["revenue", "refund_total"], "group_by": [MONTH]},
    {"metrics": ["customer_count", "refund_count"], "group_by": ["regions.region_name"]},
    {
        "metrics": ["revenue", "revenue_mom", "revenue_rolling_3m", "refund_total"],
        "group_by": [MONTH],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    },
    {
        "metrics": ["revenue_yoy", "revenue_ytd", "revenue_next_month"],
        "group_by": [MONTH, "orders.channel"],
        "time_range": {"start": "2024-03-01"},
    },
    {"metrics": ["revenue_running", "revenue_rank", "first_month_revenue"], "group_by": [MONTH]},
    {
        "metrics": ["revenue"],
        "group_by": ["orders.channel"],
        "where_sql": "revenue > 5 AND orders.channel <> 'web'",
        "order_by": ["revenue"],
    },
    {"metrics": ["event_count"], "group_by": ["metric_time:tumble(1 hour)"]},
    # D-LOD: a two-stage rollup, a broadcast with a predicate on the fixed value
    {"metrics": ["customer_count"], "group_by": ["orders.cohort_month"]},
    {
        "metrics": ["revenue"],
        "group_by": ["orders.order_kind", MONTH],
        "where_sql": "orders.first_order_day < DATE '2024-01-01'",
        "context_filter": "orders.channel = 'web'",
    },
    {
        "metrics": ["event_count"],
        "group_by": ["events.event_type", "metric_time:session(5 minutes)"],
    },
]


def _trees(value: Any, seen: set[int]) -> Iterator[exp.Expression]:
    """Every sqlglot tree reachable from the model's dataclasses, mappings and tuples."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, exp.Expression):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _trees(getattr(value, f.name), seen)
    elif hasattr(value, "items"):
        for k, v in value.items():
            yield from _trees(k, seen)
            yield from _trees(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _trees(v, seen)


def _fingerprint(model: ModelIr) -> list[tuple[str, int]]:
    """Each tree's structure and meta, and its parent: a tree placed into a query's SQL
    uncloned would be re-parented there (and open to the generator's in-place rewrites)."""
    return [
        (repr(t) + repr([n._meta for n in t.walk()]), id(t.parent)) for t in _trees(model, set())
    ]


def _compile_all(engine: Engine) -> dict[tuple[int, str], str]:
    out: dict[tuple[int, str], str] = {}
    for i, q in enumerate(QUERIES):
        for name in DIALECTS:
            try:
                out[(i, name)] = compile_query(engine.model, engine.graph, q, name).sql
            except OsiError as err:  # a dialect gate (streaming, a window function)
                out[(i, name)] = f"error {err.code}"
    return out


@pytest.fixture(scope="module")
def shop() -> Engine:
    return Engine(model_path=SHOP_MODEL)


def test_compiling_leaves_the_model_trees_unchanged(shop: Engine) -> None:
    before = _fingerprint(shop.model)
    assert len(before) > 50  # the walk reaches the model's trees
    first = _compile_all(shop)
    assert sum(not sql.startswith("error") for sql in first.values()) > len(first) // 2
    assert _fingerprint(shop.model) == before
    assert _compile_all(shop) == first


def test_model_trees_carry_no_parser_positions(shop: Engine) -> None:
    """Positions are dropped at load (each query clones these trees); dosi's tags stay."""
    metas = [n._meta for t in _trees(shop.model, set()) for n in t.walk() if n._meta]
    assert not any({"line", "col", "start", "end"} & set(m) for m in metas)
    assert any("dosi_field" in m for m in metas)
