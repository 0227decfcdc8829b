"""Plan snapshots (issue 10): `explain` of representative queries on the shop example, kept
as text under tests/plan/snapshots/ so a plan change shows in review. Values are asserted by
the execution tests; these pin the shape (which nodes, in which order). MODEL_CASES plan the
node kinds the shop model alone does not (D-FORMAT, a D-DERIVE stage, D-LOD fields and
metrics, D-SEMI, D-CONVERSION) on the models of tests/kit/snapshotkit.py; together the cases
plan every node kind, listed per case in snapshots/node_kinds.json (tests/architecture checks
it against the node classes).

Regenerate after a deliberate plan change: DOSI_UPDATE_SNAPSHOTS=1 pytest tests/plan
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import snapshotkit

from dosi.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "snapshots"
MONTH = ["metric_time:month"]

CASES: dict[str, dict[str, Any]] = {
    "flat": {"metrics": ["revenue", "order_count"], "group_by": ["orders.channel"]},
    "pre_aggregate": {"metrics": ["revenue"], "group_by": MONTH},
    "join": {"metrics": ["revenue"], "group_by": ["customers.segment"], "limit": 5},
    "merge": {"metrics": ["revenue", "refund_total"], "group_by": MONTH},
    "merge_no_dims": {"metrics": ["revenue", "refund_total"]},
    "filter_result": {
        "metrics": ["revenue"],
        "group_by": ["orders.channel"],
        "where_sql": "revenue > 5 AND orders.channel <> 'web'",
    },
    "window": {
        "metrics": ["revenue", "revenue_mom", "revenue_rolling_3m"],
        "group_by": MONTH,
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    },
    "window_over_merge": {
        "metrics": ["revenue", "revenue_mom", "refund_total"],
        "group_by": MONTH,
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
    },
    "window_over_merge_filtered": {
        "metrics": ["revenue_rank", "refund_total"],
        "group_by": MONTH,
        "where_sql": "refund_total > 4000",
    },
    # the query key `densify`: a time spine under the result, and under a window's series
    "densify": {
        "metrics": ["revenue", "order_count"],
        "group_by": MONTH,
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        "densify": "time",
    },
    "densify_window": {
        "metrics": ["revenue", "revenue_mom", "revenue_rolling_3m"],
        "group_by": [*MONTH, "orders.channel"],
        "time_range": {"start": "2024-03-01", "end": "2024-07-01"},
        "densify": "all",
    },
    "stream_tumble": {"metrics": ["event_count"], "group_by": ["metric_time:tumble(1 hour)"]},
    "stream_session": {
        "metrics": ["event_count"],
        "group_by": ["events.event_type", "metric_time:session(5 minutes)"],
    },
}


# name -> (snapshotkit model, query)
MODEL_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "decode_time": ("fmt", snapshotkit.SQL_QUERIES["time_format_group"][1]),
    "derive_compute": ("shop_plus", snapshotkit.SQL_QUERIES["derive_stage_compose"][1]),
    "lod_rollup": ("shop", snapshotkit.SQL_QUERIES["lod_field_cohort"][1]),
    "lod_broadcast": ("shop", snapshotkit.SQL_QUERIES["lod_field_row_level"][1]),
    "lod_include": ("shop_lod", snapshotkit.SQL_QUERIES["lod_metric_include"][1]),
    "lod_attach": ("shop_lod", snapshotkit.SQL_QUERIES["lod_metric_exclude"][1]),
    "conform_merge": ("netbar", snapshotkit.SQL_QUERIES["conform_two_facts"][1]),
    "semi_additive_join": ("semi", snapshotkit.SQL_QUERIES["semi_additive_last"][1]),
    "conversion_join": ("conv", snapshotkit.SQL_QUERIES["conversion_rate"][1]),
    "window_share": ("shop_plus", snapshotkit.SQL_QUERIES["window_share"][1]),
    "window_streak": ("shop_plus", snapshotkit.SQL_QUERIES["window_streak"][1]),
    "period_sample": (
        "shop_plus",
        {"metrics": ["revenue_running_month_end"], "group_by": ["metric_time:month"]},
    ),
}
KINDS = SNAPSHOTS / "node_kinds.json"


@pytest.fixture(scope="module")
def shop() -> Engine:
    return Engine(model_path=ROOT / "examples" / "shop" / "model.yaml")


@pytest.mark.parametrize("name", list(CASES))
def test_plan_snapshot(shop: Engine, name: str) -> None:
    text = shop.explain(CASES[name]) + "\n"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("DOSI_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with DOSI_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_plan_snapshot_of_other_models(name: str) -> None:
    model, query = MODEL_CASES[name]
    text = snapshotkit.engine(model).explain(query) + "\n"
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("DOSI_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with DOSI_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8")


def test_every_snapshot_has_a_case() -> None:
    assert {p.stem for p in SNAPSHOTS.glob("*.txt")} == set(CASES) | set(MODEL_CASES)


def _kinds(node: dict[str, Any], into: set[str]) -> set[str]:
    into.add(node["kind"])
    for p in node.get("parents", []):
        _kinds(p, into)
    return into


def test_node_kinds_manifest_lists_each_case_plan(shop: Engine) -> None:
    """snapshots/node_kinds.json: the node kinds each snapshot's plan holds (what
    tests/architecture reads to check that every kind has a snapshot)."""
    kinds = {name: sorted(_kinds(shop.plan_tree(q), set())) for name, q in CASES.items()}
    for name, (model, q) in MODEL_CASES.items():
        kinds[name] = sorted(_kinds(snapshotkit.engine(model).plan_tree(q), set()))
    text = json.dumps(kinds, indent=2, sort_keys=True) + "\n"
    if os.environ.get("DOSI_UPDATE_SNAPSHOTS"):
        KINDS.write_text(text, encoding="utf-8")
    assert text == KINDS.read_text(encoding="utf-8")


def test_json_explain_is_the_same_tree(shop: Engine) -> None:
    """format="json" gives the tree for tools: the same nodes as the text, root first."""
    q = CASES["window_over_merge"]
    tree = json.loads(shop.explain(q, format="json"))
    assert tree == shop.plan_tree(q)
    kinds: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        kinds.append(node["kind"])
        for p in node.get("parents", []):
            walk(p)

    walk(tree)
    assert kinds[:4] == ["order_limit", "trim", "window", "compute_metrics"]
    assert kinds.count("aggregate") == 2 and kinds.count("scan") == 2 and "merge" in kinds
    text = shop.explain(q)
    assert tree["describe"] in text


def test_explain_rejects_an_unknown_format(shop: Engine) -> None:
    from dosi.errors import QueryError

    with pytest.raises(QueryError) as err:
        shop.explain(CASES["flat"], format="yaml")  # type: ignore[arg-type]
    assert err.value.code == "invalid_query" and err.value.candidates == ["text", "json"]
