"""`dosi import lookml` on Looker's public theLook views (vendored from looker-open-source/
pylookml with its MIT licence; BigQuery SQL) and on a rebuilt shop project: the models load,
what cannot be carried is a named warning, and the answers on DuckDB equal hand-written SQL
over the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from dosi.engine import Engine
from dosi.importers.lookml import import_lookml

DATA = Path(__file__).parent / "data"


def sql_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def keyed(rows: list[dict[str, Any]], key: str, *values: str) -> dict[Any, tuple[Any, ...]]:
    return {
        (r[key][:10] if isinstance(r[key], str) and r[key][:4].isdigit() else r[key]): tuple(
            None if r[v] is None else round(float(r[v]), 6) for v in values
        )
        for r in rows
    }


def hand(rows: list[tuple[Any, ...]]) -> dict[Any, tuple[Any, ...]]:
    return {
        (str(r[0])[:10] if hasattr(r[0], "year") else r[0]): tuple(
            None if v is None else round(float(v), 6) for v in r[1:]
        )
        for r in rows
    }


# -- theLook ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def thelook_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """theLook's tables in a DuckDB file whose catalog is the BigQuery project the views name
    (`looker-private-demo.ecomm.*`)."""
    path = tmp_path_factory.mktemp("lookml") / "looker-private-demo.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA ecomm")
    con.execute(
        "CREATE TABLE ecomm.users AS SELECT * FROM (VALUES "
        "(1, 'ann', 'lee', 34, 'Female', 'a@x', 'Austin', 'Texas', '73301', 'USA', 30.2, -97.7, 'Search', TIMESTAMP '2023-01-05 10:00:00'),"
        "(2, 'bob', 'ray', 19, 'Male', 'b@x', 'Dallas', 'Texas', '75201', 'USA', 32.7, -96.8, 'Email', TIMESTAMP '2023-03-01 09:00:00'),"
        "(3, 'cy', 'ng', 52, 'Male', 'c@x', 'Leeds', 'Yorkshire', 'LS1', 'UK', 53.8, -1.5, 'Search', TIMESTAMP '2023-06-10 12:00:00'),"
        "(4, 'di', 'ox', NULL, 'Female', 'd@x', 'Paris', 'IDF', '75001', 'France', 48.8, 2.3, 'Organic', TIMESTAMP '2023-07-01 08:00:00')"
        ") t(id, first_name, last_name, age, gender, email, city, state, zip, country, latitude, longitude, traffic_source, created_at)"
    )
    con.execute(
        "CREATE TABLE ecomm.distribution_centers AS SELECT * FROM (VALUES "
        "(1, 'Memphis', 35.1, -90.0), (2, 'Chicago', 41.8, -87.6)) t(id, name, latitude, longitude)"
    )
    con.execute(
        "CREATE TABLE ecomm.products AS SELECT * FROM (VALUES "
        "(10, ' Jeans', 'Slim', 'Levis', 60.0, 'Men', 's1', 1),"
        "(11, 'Tops ', 'Tee', 'Gap', 20.0, 'Women', 's2', 2),"
        "(12, 'Jeans', 'Wide', 'Gap', 70.0, 'Women', 's3', 2)"
        ") t(id, category, name, brand, retail_price, department, sku, distribution_center_id)"
    )
    con.execute(
        "CREATE TABLE ecomm.inventory_items AS SELECT * FROM (VALUES "
        "(100, 30.0, TIMESTAMP '2023-01-01 00:00:00', 10, TIMESTAMP '2023-02-01 00:00:00', 1),"
        "(101, 30.0, TIMESTAMP '2023-01-01 00:00:00', 10, NULL, 1),"
        "(102, 8.0, TIMESTAMP '2023-02-01 00:00:00', 11, TIMESTAMP '2023-03-02 00:00:00', 2),"
        "(103, 8.0, TIMESTAMP '2023-02-01 00:00:00', 11, TIMESTAMP '2023-04-02 00:00:00', 2),"
        "(104, 35.0, TIMESTAMP '2023-03-01 00:00:00', 12, TIMESTAMP '2023-05-01 00:00:00', 2),"
        "(105, 35.0, TIMESTAMP '2023-03-01 00:00:00', 12, NULL, 2)"
        ") t(id, cost, created_at, product_id, sold_at, product_distribution_center_id)"
    )
    con.execute(
        "CREATE TABLE ecomm.order_items AS SELECT * FROM (VALUES "
        "(1000, 100, 1, 500, NULL, TIMESTAMP '2023-02-02 00:00:00', TIMESTAMP '2023-02-05 00:00:00', TIMESTAMP '2023-02-01 10:00:00', 'Complete', 59.0),"
        "(1001, 102, 1, 500, TIMESTAMP '2023-03-20 00:00:00', TIMESTAMP '2023-03-03 00:00:00', TIMESTAMP '2023-03-06 00:00:00', TIMESTAMP '2023-03-02 11:00:00', 'Returned', 19.0),"
        "(1002, 103, 2, 501, NULL, NULL, NULL, TIMESTAMP '2023-04-02 12:00:00', 'Processing', 21.0),"
        "(1003, 104, 3, 502, NULL, TIMESTAMP '2023-05-02 00:00:00', TIMESTAMP '2023-05-04 00:00:00', TIMESTAMP '2023-05-01 09:00:00', 'Complete', 68.0),"
        "(1004, 999, 9, 503, TIMESTAMP '2023-06-15 00:00:00', TIMESTAMP '2023-06-02 00:00:00', TIMESTAMP '2023-06-03 00:00:00', TIMESTAMP '2023-06-01 09:00:00', 'Returned', 15.0)"
        ") t(id, inventory_item_id, user_id, order_id, returned_at, shipped_at, delivered_at, created_at, status, sale_price)"
    )
    con.close()
    return path


@pytest.fixture(scope="module")
def thelook() -> Any:
    return import_lookml(DATA / "lookml_thelook", dialect="bigquery")


def test_thelook_loads_and_names_what_it_drops(thelook: Any) -> None:
    assert thelook.check() == []
    by_path = {w.path: w.code for w in thelook.warnings}
    assert by_path["order_items.gross_margin"] == "lookml_cross_view_reference"
    assert by_path["users.location"] == "lookml_location_dimension"
    assert by_path["users.ssn_last_4"] == "lookml_liquid"
    assert by_path["order_items.count_last_28d"] == "lookml_filter_not_carried"
    assert by_path["users.count_percent_of_total"] == "lookml_measure_type"
    assert by_path["explore journey_mapping.join next_order_items"] == "lookml_many_to_many_join"
    assert by_path["explore order_items.join inventory_items"] == "lookml_full_outer_as_left"
    assert all(w.severity == "warning" for w in thelook.warnings)
    doc = thelook.plain()["semantic_model"][0]
    rels = {
        (r["from"], r["to"], tuple(r["from_columns"]), tuple(r["to_columns"]))
        for r in doc["relationships"]
    }
    assert ("order_items", "users", ("user_id",), ("id",)) in rels
    assert ("order_items", "inventory_items", ("inventory_item_id",), ("id",)) in rels
    assert ("inventory_items", "products", ("product_id",), ("id",)) in rels
    # journey_mapping's `from: order_items` join is a role-playing copy with its own name
    assert "next_order_items" in {d["name"] for d in doc["datasets"]}


def test_thelook_answers_by_state_and_category(thelook: Any, thelook_db: Path) -> None:
    engine = Engine(model_text=thelook.yaml())
    got = engine.execute(
        {
            "metrics": ["total_sale_price", "order_items_count", "order_count"],
            "group_by": ["users.state"],
        },
        db_path=thelook_db,
    )["rows"]
    want = sql_rows(
        thelook_db,
        "SELECT u.state, SUM(oi.sale_price), COUNT(oi.id), COUNT(DISTINCT oi.order_id) FROM "
        "ecomm.order_items oi LEFT JOIN ecomm.users u ON oi.user_id = u.id GROUP BY 1",
    )
    assert keyed(got, "state", "total_sale_price", "order_items_count", "order_count") == hand(want)
    got = engine.execute(
        {
            "metrics": ["returned_count", "return_rate", "returned_total_sale_price"],
            "group_by": ["products.category"],
        },
        db_path=thelook_db,
    )["rows"]
    want = sql_rows(
        thelook_db,
        "SELECT TRIM(p.category), COUNT(DISTINCT CASE WHEN oi.returned_at IS NOT NULL THEN oi.id END),"
        " 1.0 * COUNT(DISTINCT CASE WHEN oi.returned_at IS NOT NULL THEN oi.id END) / NULLIF(COUNT(oi.id), 0),"
        " SUM(CASE WHEN oi.returned_at IS NOT NULL THEN oi.sale_price END)"
        " FROM ecomm.order_items oi LEFT JOIN ecomm.inventory_items ii ON oi.inventory_item_id = ii.id"
        " LEFT JOIN ecomm.products p ON ii.product_id = p.id GROUP BY 1",
    )
    assert keyed(
        got, "category", "returned_count", "return_rate", "returned_total_sale_price"
    ) == hand(want)


def test_thelook_filtered_and_ratio_measures(thelook: Any, thelook_db: Path) -> None:
    engine = Engine(model_text=thelook.yaml())
    got = engine.execute(
        {
            "metrics": ["sold_count", "number_on_hand", "sold_percent", "total_cost"],
            "group_by": ["products.brand"],
        },
        db_path=thelook_db,
    )["rows"]
    want = sql_rows(
        thelook_db,
        "SELECT TRIM(p.brand), COUNT(CASE WHEN ii.sold_at IS NOT NULL THEN 1 END), "
        "COUNT(CASE WHEN ii.sold_at IS NULL THEN 1 END), "
        "1.0 * COUNT(CASE WHEN ii.sold_at IS NOT NULL THEN 1 END) / COUNT(*), SUM(ii.cost) "
        "FROM ecomm.inventory_items ii LEFT JOIN ecomm.products p ON ii.product_id = p.id GROUP BY 1",
    )
    assert keyed(
        got, "brand", "sold_count", "number_on_hand", "sold_percent", "total_cost"
    ) == hand(want)


def test_thelook_tier_yesno_and_time(thelook: Any, thelook_db: Path) -> None:
    engine = Engine(model_text=thelook.yaml())
    got = engine.execute(
        {"metrics": ["users_count"], "group_by": ["users.age_tier"]}, db_path=thelook_db
    )["rows"]
    assert {r["age_tier"]: r["users_count"] for r in got} == {
        "30 to 39": 1, "10 to 19": 1, "50 to 59": 1, "Undefined": 1,
    }  # fmt: skip
    got = engine.execute(
        {"metrics": ["users_count", "average_age"], "group_by": ["users.over_21"]},
        db_path=thelook_db,
    )["rows"]
    want = sql_rows(
        thelook_db,
        "SELECT COALESCE(age > 21, false), COUNT(*), AVG(age) FROM ecomm.users GROUP BY 1",
    )
    assert keyed(got, "over_21", "users_count", "average_age") == hand(want)
    got = engine.execute(
        {"metrics": ["total_sale_price"], "group_by": ["order_items.created:month"]},
        db_path=thelook_db,
    )["rows"]
    want = sql_rows(
        thelook_db,
        "SELECT date_trunc('month', created_at), SUM(sale_price) FROM ecomm.order_items GROUP BY 1",
    )
    assert keyed(got, "created__month", "total_sale_price") == hand(want)


# -- the rebuilt shop project ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lookml_shop") / "store.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA shop")
    con.execute(
        "CREATE TABLE shop.customers AS SELECT * FROM (VALUES (1, 'Ann', 'NO'), (2, 'Bo', 'PE'), "
        "(0, 'Test', 'XX')) t(id, name, country)"
    )
    con.execute(
        "CREATE TABLE shop.orders AS SELECT * FROM (VALUES "
        "(1, 1, 'completed', 120.0, DATE '2024-01-03'), (2, 1, 'cancelled', 15.0, DATE '2024-01-20'),"
        "(3, 2, 'completed', 160.0, DATE '2024-02-01'), (4, 2, NULL, 40.0, DATE '2024-02-11'),"
        "(5, 0, 'returned', 20.0, DATE '2024-03-05'), (6, 1, 'completed', 80.0, DATE '2024-03-09')"
        ") t(id, customer_id, status, amount, created_on)"
    )
    con.execute(
        "CREATE TABLE shop.payments AS SELECT * FROM (VALUES "
        "(1, 1, 'card', 100.0), (2, 1, 'voucher', 20.0), (3, 3, 'cash', 160.0), (4, 6, 'card', 80.0)"
        ") t(id, order_id, method, paid)"
    )
    con.close()
    return path


def test_lookml_shop_measures_and_filters(shop_db: Path) -> None:
    converted = import_lookml(DATA / "lookml_shop")
    assert converted.check() == []
    assert {w.code for w in converted.warnings} == {
        "lookml_timeframe", "lookml_running_total_on_time", "lookml_measures_per_view",
    }  # fmt: skip
    engine = Engine(model_text=converted.yaml())
    metrics = [
        "total_amount", "completed_amount", "not_cancelled_count", "big_count", "average_amount",
        "median_amount", "amount_per_order", "orders_count",
    ]  # fmt: skip
    got = engine.execute({"metrics": metrics, "group_by": ["customers.country"]}, db_path=shop_db)[
        "rows"
    ]
    want = sql_rows(
        shop_db,
        "SELECT c.country, SUM(o.amount), SUM(CASE WHEN o.status = 'completed' THEN o.amount END),"
        " COUNT(CASE WHEN o.status <> 'cancelled' OR o.status IS NULL THEN 1 END),"
        " COUNT(CASE WHEN o.amount > 100 AND o.amount >= 150 THEN 1 END), AVG(o.amount),"
        " MEDIAN(o.amount), SUM(o.amount) / COUNT(*), COUNT(*) FROM shop.orders o"
        " LEFT JOIN (SELECT id, name, country FROM shop.customers WHERE id > 0) c"
        " ON o.customer_id = c.id GROUP BY 1",
    )
    assert keyed(got, "country", *metrics) == hand(want)


def test_lookml_shop_tier_time_running_and_cross_view(shop_db: Path) -> None:
    converted = import_lookml(DATA / "lookml_shop")
    engine = Engine(model_text=converted.yaml())
    got = engine.execute(
        {"metrics": ["orders_count"], "group_by": ["orders.amount_tier"]}, db_path=shop_db
    )["rows"]
    assert {r["amount_tier"]: r["orders_count"] for r in got} == {
        "Below 20": 1,
        "20 to 99": 3,
        "100 or Above": 2,
    }
    got = engine.execute(
        {
            "metrics": ["total_amount", "running_amount", "paid_share"],
            "group_by": ["orders.created:month"],
        },
        db_path=shop_db,
    )["rows"]
    want = sql_rows(
        shop_db,
        "WITH a AS (SELECT date_trunc('month', created_on) AS m, SUM(amount) AS s FROM shop.orders "
        "GROUP BY 1), p AS (SELECT date_trunc('month', o.created_on) AS m, SUM(p.paid) AS paid "
        "FROM shop.payments p JOIN shop.orders o ON p.order_id = o.id GROUP BY 1) "
        "SELECT a.m, a.s, SUM(a.s) OVER (ORDER BY a.m), p.paid / a.s FROM a LEFT JOIN p USING (m)",
    )
    assert keyed(got, "created__month", "total_amount", "running_amount", "paid_share") == hand(
        want
    )
    got = engine.execute(
        {"metrics": ["card_payments", "total_paid"], "group_by": ["orders.status"]}, db_path=shop_db
    )["rows"]
    want = sql_rows(
        shop_db,
        "SELECT o.status, COUNT(DISTINCT CASE WHEN p.method IN ('card', 'voucher') THEN p.order_id END),"
        " SUM(p.paid) FROM shop.payments p JOIN shop.orders o ON p.order_id = o.id GROUP BY 1",
    )
    assert keyed(got, "status", "card_payments", "total_paid") == hand(want)
    doc = converted.plain()["semantic_model"][0]
    status = next(
        f
        for d in doc["datasets"]
        if d["name"] == "orders"
        for f in d["fields"]
        if f["name"] == "status"
    )
    assert status["label"] == "Order status"  # the refinement's label
    created = next(
        f
        for d in doc["datasets"]
        if d["name"] == "orders"
        for f in d["fields"]
        if f["name"] == "created"
    )
    assert created["datatype"] == "Date"
    rel = next(r for r in doc["relationships"] if r["from"] == "payments")
    assert '"join_type": "inner"' in rel["custom_extensions"][0]["data"]
