"""Issue 20 point 1 (DRV-TIER-01, DRV-TIER-02, PARAM-INST-02): the D-DERIVE / D-PARAM
equivalence gate compares literals by value and compares what each side computes (each
measure's aggregate and owning dataset), and a flatten-tier metric computes from its
declaration. Expected values: hand SQL over the shop fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from rightkit import FIX, assert_rows, rows, truth

import dosi
from dosi.errors import ModelError


def with_metric(name: str, sql: str, ext: dict) -> str:
    doc = yaml.safe_load((FIX / "shop.yaml").read_text())
    doc["semantic_model"][0]["metrics"].append(
        {
            "name": name,
            "expression": {"dialects": [{"dialect": "ANSI_SQL", "expression": sql}]},
            "custom_extensions": [{"vendor_name": "DATUS", "data": json.dumps(ext)}],
        }
    )
    return yaml.safe_dump(doc, sort_keys=False)


def param_filter(authored: str, ptype: str, default: float) -> str:
    return with_metric(
        "big",
        f"SUM(CASE WHEN orders.amount > {authored} THEN orders.amount END)",
        {
            "v": "1.5",
            "params": [{"name": "t", "type": ptype, "default": default, "min": 0, "max": 1000}],
            "derive": {"type": "filter", "base": "revenue", "where": "orders.amount > :t"},
        },
    )


@pytest.mark.parametrize(
    ("authored", "ptype", "default"),
    [
        ("100", "float", 100.0),  # the issue's case: `> 10` authored, a float default 10.0
        ("1e2", "float", 100.0),
        ("100.0", "int", 100),
    ],
)
def test_drv_tier_01_literals_equal_in_value_load(
    worlds: dict[str, Path], authored: str, ptype: str, default: float
) -> None:
    """DRV-TIER-01 / PARAM-INST-02: a literal equal in value to the default instantiation is
    the same expression; the model loads and computes the declared filter."""
    eng = dosi.Engine(model_text=param_filter(authored, ptype, default))
    want = truth(
        worlds["shop"], "SELECT SUM(CASE WHEN amount > 100 THEN amount END) FROM main.orders"
    )
    assert_rows(rows(eng.execute({"metrics": ["big"]}, db_path=worlds["shop"])), want)
    bound = eng.execute({"metrics": ["big"], "params": {"t": 150}}, db_path=worlds["shop"])
    assert "150.0" not in bound["sql"]  # bound values render in their natural form
    assert_rows(
        rows(bound),
        truth(
            worlds["shop"], "SELECT SUM(CASE WHEN amount > 150 THEN amount END) FROM main.orders"
        ),
    )


@pytest.mark.parametrize(
    ("authored", "where"),
    [("-0", "orders.amount >= 0"), ("0", "orders.amount >= -0"), ("-0.0", "orders.amount >= 0")],
)
def test_drv_tier_01_minus_zero_is_zero(worlds: dict[str, Path], authored: str, where: str) -> None:
    """DRV-TIER-01 (issue 20): `-0`, `-0.0` and `0` compare by value in the expression gate:
    the model loads and the filter keeps the non-negative amounts."""
    text = with_metric(
        "nonneg",
        f"SUM(CASE WHEN orders.amount >= {authored} THEN orders.amount END)",
        {"v": "1.4", "derive": {"type": "filter", "base": "revenue", "where": where}},
    )
    eng = dosi.Engine(model_text=text)
    want = truth(
        worlds["shop"], "SELECT SUM(CASE WHEN amount >= 0 THEN amount END) FROM main.orders"
    )
    assert_rows(rows(eng.execute({"metrics": ["nonneg"]}, db_path=worlds["shop"])), want)


def test_drv_tier_01_a_different_value_is_still_a_mismatch() -> None:
    text = with_metric(
        "big",
        "SUM(CASE WHEN orders.amount > 101 THEN orders.amount END)",
        {
            "v": "1.4",
            "derive": {"type": "filter", "base": "revenue", "where": "orders.amount > 100"},
        },
    )
    with pytest.raises(ModelError) as err:
        dosi.Engine(model_text=text)
    assert [i.code for i in err.value.issues] == ["derive_expression_mismatch"]


@pytest.mark.parametrize(
    ("sql", "hand"),
    [
        (
            "SUM(orders.amount) + COUNT(*)",
            "SELECT (SELECT SUM(amount) FROM main.orders) + (SELECT COUNT(*) FROM main.visits)",
        ),
        (
            "CAST(SUM(orders.amount) AS DOUBLE) / COUNT(*)",
            "SELECT CAST((SELECT SUM(amount) FROM main.orders) AS DOUBLE) "
            "/ (SELECT COUNT(*) FROM main.visits)",
        ),
    ],
)
def test_drv_tier_01_count_star_takes_the_members_dataset(
    sql: str, hand: str, worlds: dict[str, Path]
) -> None:
    """DRV-TIER-01 with issue 21 item 4: the authored COUNT(*) stands for the member
    visit_count, whose D-DATASET pins it to visits, so it counts visits (the declaration's
    number), never the orders rows the text beside SUM(orders.amount) would suggest."""
    op = "+" if "+" in sql else "/"
    text = with_metric(
        "x", sql, {"v": "1.4", "derive": {"type": "compose", "expr": f"revenue {op} visit_count"}}
    )
    eng = dosi.Engine(model_text=text)
    assert_rows(
        rows(eng.execute({"metrics": ["x"]}, db_path=worlds["shop"])),
        truth(worlds["shop"], hand),
    )


def test_drv_tier_02_same_dataset_count_star_is_equivalent(worlds: dict[str, Path]) -> None:
    eng = dosi.Engine(
        model_text=with_metric(
            "x",
            "SUM(orders.amount) + COUNT(*)",
            {"v": "1.4", "derive": {"type": "compose", "expr": "revenue + order_rows"}},
        )
    )
    assert_rows(
        rows(eng.execute({"metrics": ["x"]}, db_path=worlds["shop"])),
        truth(worlds["shop"], "SELECT SUM(amount) + COUNT(*) FROM main.orders"),
    )
