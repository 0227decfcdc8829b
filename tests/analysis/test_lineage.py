"""Lineage (`Engine.lineage`, `dosi lineage`): tables -> datasets -> measures -> metrics, joins
(SURF-CLI-05)."""

from __future__ import annotations

from typing import Any

import pytest

from dosi.errors import QueryError


def test_model_graph_has_every_table_dataset_metric_and_join(shop: Any) -> None:
    g = shop.lineage()
    assert {g["version"], g["model"], g["mode"]} == {2, "shop", "datus"}
    ids = {n["id"] for n in g["nodes"]}
    for ds in shop.datasets():
        assert f"dataset:{ds['name']}" in ids
        assert f"table:{ds['source']}" in ids
    for m in shop.metrics():
        assert f"metric:{m['name']}" in ids
    joins = {e["name"] for e in g["edges"] if e["kind"] == "join"}
    assert joins == {
        r
        for d in shop.datasets()
        for r in [x["name"] for x in shop.dataset(d["name"])["relationships"]]
    }
    derived = {n["name"] for n in g["nodes"] if n["kind"] == "metric_derived"}
    assert "revenue_mom" in derived and "revenue" not in derived


def test_metric_tree_names_measures_datasets_and_joins(shop: Any) -> None:
    g = shop.lineage("avg_order_value")
    t = g["tree"]
    assert [m["name"] for m in t["measures"]] == shop.metric("avg_order_value")["measures"]
    assert {m["agg"] for m in t["measures"]} == {"sum", "count"}
    assert t["datasets"][0]["name"] == "orders"
    assert {(j["from"], j["to"]) for j in t["joins"]} == {
        ("orders", "customers"),
        ("customers", "regions"),
    }
    assert {n["id"] for n in g["nodes"] if n["kind"].startswith("metric")} == {
        "metric:avg_order_value"
    }
    text = shop.lineage_text("avg_order_value")
    assert text.startswith("avg_order_value  (ratio)")
    assert "orders -> customers" in text and "measure orders_amount_sum" in text


def test_unknown_metric_has_candidates(shop: Any) -> None:
    with pytest.raises(QueryError) as err:
        shop.lineage("revenu")
    assert err.value.code == "unknown_metric" and "revenue" in err.value.candidates
