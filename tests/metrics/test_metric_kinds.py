"""Metric kinds, measures and metric compile errors (issue 2).

Requirement IDs: CORE-MOD-05 (metrics are aggregates, may span datasets), CORE-MEAS-01..03
(measure stems, dedup by signature, measure_name_collision), DSET-03 (count_star_needs_dataset),
CORE-MOD-04 (field expressions are scalar), §18 window_in_metric / nested_aggregate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from enginekit import (
    assert_rows_equal,
    dataset,
    metric,
    mini_doc,
    model_doc,
    rel,
    result_rows,
    to_yaml,
)

from dosi.engine import Engine
from dosi.errors import ModelError


def compile_error(doc: dict[str, Any]) -> ModelError:
    with pytest.raises(ModelError) as info:
        Engine(model_text=to_yaml(doc))
    return info.value


def mini_with(*metrics: dict[str, Any]) -> dict[str, Any]:
    return mini_doc(extra_metrics=metrics)


# ------------------------------------------------------------------------------ kinds


def test_core_mod_05_metric_kinds_aggregate_ratio_expression(mini: Engine) -> None:
    """Issue 2: metric kinds are aggregate (one aggregate), ratio (agg / agg), expression."""
    kinds = {m["name"]: m["kind"] for m in mini.metrics()}
    assert kinds["revenue"] == "aggregate"
    assert kinds["customer_count"] == "aggregate"
    assert kinds["avg_order"] == "ratio"
    assert kinds["net_revenue"] == "expression"


def test_aggregate_metric_value(mini_run: Callable[..., Any], mini_ref: Any) -> None:
    """CORE-MOD-05: an aggregate metric is its aggregate over the dataset."""
    res = mini_run({"metrics": ["revenue", "order_count", "max_order"]})
    assert_rows_equal(
        result_rows(res),
        mini_ref.rows("SELECT SUM(amount), COUNT(order_id), MAX(amount) FROM orders"),
    )


def test_ratio_metric_is_non_integer_division(mini_db: Any, mini_ref: Any) -> None:
    """CORE-FAN-03: ratios divide as DOUBLE (COUNT / COUNT would truncate in integer math)."""
    paid_share = metric(
        "paid_share",
        "COUNT(CASE WHEN orders.status = 'paid' THEN 1 END) / COUNT(orders.order_id)",
    )
    engine = Engine(model_text=to_yaml(mini_with(paid_share)))
    rows = engine.execute({"metrics": ["paid_share"]}, db_path=mini_db)["rows"]
    paid, total = mini_ref.rows(
        "SELECT COUNT(*) FILTER (WHERE status = 'paid'), COUNT(*) FROM orders"
    )[0]
    assert (paid, total) == (6, 7)
    assert rows == [{"paid_share": pytest.approx(paid / total)}]


def test_expression_metric_value(mini_run: Callable[..., Any], mini_ref: Any) -> None:
    """CORE-MOD-05: an expression metric combines its aggregates after aggregation."""
    res = mini_run({"metrics": ["net_revenue"], "group_by": ["orders.status"]})
    assert_rows_equal(
        result_rows(res, ["status", "net_revenue"]),
        mini_ref.rows("SELECT status, SUM(amount) - SUM(discount) FROM orders GROUP BY status"),
    )


def test_metric_on_a_dimension_table_counts_that_table(
    mini_run: Callable[..., Any], mini_ref: Any
) -> None:
    """CORE-MOD-05: COUNT(DISTINCT customers.id) aggregates the customers dataset, so the
    customer who never ordered (5, west) is counted in its region."""
    res = mini_run({"metrics": ["customer_count"], "group_by": ["customers.region"]})
    assert_rows_equal(
        result_rows(res, ["region", "customer_count"]),
        mini_ref.rows("SELECT region, COUNT(DISTINCT id) FROM customers GROUP BY region"),
    )


# ------------------------------------------------------------------------------ measures


def test_core_meas_01_measure_stem_is_dataset_argument_aggregate(mini: Engine) -> None:
    """CORE-MEAS-01 (S-MEASURE-1): measures are named `<dataset>_<column>_<agg>`."""
    assert mini.metric("revenue")["measures"] == ["orders_amount_sum"]
    assert mini.metric("order_count")["measures"] == ["orders_order_id_count"]
    assert mini.metric("customer_count")["measures"] == ["customers_id_count_distinct"]
    assert mini.metric("units")["measures"] == ["order_items_qty_sum"]


def test_core_meas_02_identical_aggregates_share_one_measure(mini: Engine) -> None:
    """CORE-MEAS-02: measures deduplicate by signature; a ratio reuses revenue's measure."""
    assert mini.metric("avg_order")["measures"] == ["orders_amount_sum", "orders_order_id_count"]
    assert mini.metric("net_revenue")["measures"] == ["orders_amount_sum", "orders_discount_sum"]
    sql = mini.compile({"metrics": ["revenue", "avg_order", "net_revenue"]})["sql"]
    assert sql.count("SUM(orders.amount)") == 3  # one per metric in a flat plan ...
    merged = mini.compile({"metrics": ["revenue", "avg_order", "units"]})["sql"]
    assert merged.count("SUM(orders.amount)") == 1  # ... but one column in a branch CTE


def test_core_meas_03_stems_colliding_on_non_ascii_literals_fail() -> None:
    """CORE-MEAS-03: two aggregates whose stems differ only in non-ASCII text collide."""
    err = compile_error(
        mini_with(
            metric("new_goods", "SUM(CASE WHEN orders.status = '新品' THEN orders.amount END)"),
            metric("old_goods", "SUM(CASE WHEN orders.status = '老品' THEN orders.amount END)"),
        )
    )
    assert [(d.code, d.path) for d in err.issues] == [
        ("measure_name_collision", "metrics[old_goods]")
    ]


# ------------------------------------------------------------------------------ errors


def test_window_in_metric_is_rejected() -> None:
    """§18 window_in_metric: raw window SQL in a metric expression is a compile error."""
    err = compile_error(mini_with(metric("w", "SUM(SUM(orders.amount)) OVER ()")))
    assert [(d.code, d.path) for d in err.issues] == [("window_in_metric", "metrics[w]")]


def test_row_number_in_metric_is_rejected() -> None:
    """§18 window_in_metric: any window function, not only windowed aggregates."""
    err = compile_error(mini_with(metric("w", "ROW_NUMBER() OVER (ORDER BY orders.order_id)")))
    assert [d.code for d in err.issues] == ["window_in_metric"]


def test_nested_aggregate_is_rejected() -> None:
    """§18 nested_aggregate: SUM(COUNT(x)) cannot be computed in one aggregation."""
    err = compile_error(mini_with(metric("n", "SUM(COUNT(orders.order_id))")))
    assert [(d.code, d.path) for d in err.issues] == [("nested_aggregate", "metrics[n]")]


def test_metric_without_an_aggregate_is_rejected() -> None:
    """CORE-MOD-05: metrics are aggregate expressions."""
    err = compile_error(mini_with(metric("bare", "orders.amount")))
    assert [d.code for d in err.issues] == ["not_an_aggregate"]


def test_field_read_outside_an_aggregate_is_rejected() -> None:
    """CORE-MOD-05: every field reference of a metric sits inside an aggregate."""
    err = compile_error(mini_with(metric("loose", "SUM(orders.amount) + orders.discount")))
    assert [(d.code, d.path) for d in err.issues] == [("not_an_aggregate", "metrics[loose]")]


def test_unknown_field_in_a_metric_has_candidates() -> None:
    """Issue 2: a metric reading a missing field is `unknown_field` with near names."""
    err = compile_error(mini_with(metric("r", "SUM(orders.amout)")))
    assert [d.code for d in err.issues] == ["unknown_field"]
    assert "orders.amount" in err.issues[0].candidates


def test_aggregate_in_field_expression_is_rejected() -> None:
    """Issue 2 / CORE-MOD-04: field expressions are scalar; an aggregate is
    `aggregate_in_field` (the reference drops the field with a warning instead)."""
    doc = model_doc(
        [
            dataset(
                "orders",
                [
                    "order_id",
                    {
                        "name": "total",
                        "expression": {
                            "dialects": [{"dialect": "ANSI_SQL", "expression": "SUM(amount)"}]
                        },
                    },
                ],
            )
        ],
        metrics=[metric("n", "COUNT(orders.order_id)")],
    )
    err = compile_error(doc)
    assert [(d.code, d.path) for d in err.issues] == [
        ("aggregate_in_field", "datasets[orders].fields[total]")
    ]


def test_dset_03_count_star_in_a_multi_dataset_model_needs_a_dataset() -> None:
    """DSET-03: COUNT(*) with nothing pinning a dataset is `count_star_needs_dataset`."""
    err = compile_error(mini_with(metric("rows", "COUNT(*)")))
    assert [(d.code, d.path) for d in err.issues] == [("count_star_needs_dataset", "metrics[rows]")]
    assert set(err.issues[0].candidates) == {"orders", "customers", "order_items", "refunds"}


def test_count_star_in_a_single_dataset_model_counts_its_rows(mini_db: Any, mini_ref: Any) -> None:
    """DSET-03 scope: with one dataset, COUNT(*) is unambiguous."""
    doc = model_doc([dataset("orders", ["order_id", "amount"])], metrics=[metric("n", "COUNT(*)")])
    res = Engine(model_text=to_yaml(doc)).execute({"metrics": ["n"]}, db_path=mini_db)
    assert res["rows"] == [{"n": mini_ref.scalar("SELECT COUNT(*) FROM orders")}]


def test_count_star_pinned_by_another_aggregate(mini_db: Any, mini_ref: Any) -> None:
    """DSET-03 scope: `SUM(orders.amount) / COUNT(*)` — the SUM pins COUNT(*) to orders."""
    engine = Engine(
        model_text=to_yaml(mini_with(metric("per_row", "SUM(orders.amount) / COUNT(*)")))
    )
    res = engine.execute({"metrics": ["per_row"]}, db_path=mini_db)
    expected = mini_ref.scalar("SELECT CAST(SUM(amount) AS DOUBLE) / COUNT(*) FROM orders")
    assert res["rows"] == [{"per_row": pytest.approx(expected)}]


def test_metric_errors_are_all_reported_in_one_model_error() -> None:
    """Issue 2: every metric problem of the model comes back in one ModelError."""
    err = compile_error(
        mini_with(
            metric("w", "SUM(orders.amount) OVER ()"),
            metric("n", "MAX(SUM(orders.amount))"),
            metric("c", "COUNT(*)"),
            metric("u", "SUM(orders.nope)"),
        )
    )
    assert [(d.code, d.path) for d in err.issues] == [
        ("window_in_metric", "metrics[w]"),
        ("nested_aggregate", "metrics[n]"),
        ("count_star_needs_dataset", "metrics[c]"),
        ("unknown_field", "metrics[u]"),
    ]


def test_metric_reading_a_dataset_with_no_relationship_to_aggregate() -> None:
    """A metric whose single aggregate spans unrelated datasets cannot be owned by one branch."""
    doc = model_doc(
        [dataset("a", ["id", "x"]), dataset("b", ["id", "y"])],
        metrics=[metric("m", "SUM(a.x * b.y)")],
    )
    err = compile_error(doc)
    assert [d.path for d in err.issues] == ["metrics[m]"]


def test_relationships_do_not_change_plain_single_dataset_metrics(
    mini_db: Any, mini_ref: Any
) -> None:
    """A relationship alone never joins: revenue without dimensions reads only orders."""
    doc = model_doc(
        [dataset("orders", ["order_id", "customer_id", "amount"]), dataset("customers", ["id"])],
        [rel("o_c", "orders", "customers", ["customer_id"], ["id"], {"join_type": "inner"})],
        [metric("revenue", "SUM(orders.amount)")],
    )
    engine = Engine(model_text=to_yaml(doc))
    res = engine.execute({"metrics": ["revenue"]}, db_path=mini_db)
    assert "JOIN" not in res["sql"].upper()
    assert_rows_equal(result_rows(res), mini_ref.rows("SELECT SUM(amount) FROM orders"))
