"""`dosi import cube` on Cube's own public examples (tests/importers/data/README.md) and on a
rebuilt shop project: the imported models load, every member that cannot be carried is a
named warning, and the answers on DuckDB equal hand-written SQL over the same rows (or, for
the documentation's self-contained models, the numbers the documentation's data implies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from dosi.engine import Engine
from dosi.importers.cube import import_cube

DATA = Path(__file__).parent / "data"

CUSTOMERS = [(1, "Oslo", 59.9, 10.7), (2, "Lima", -12.0, -77.0), (3, "Oslo", 59.9, 10.8)]
ORDERS = [  # id, customer, status, created_at, amount
    (1, 1, "completed", "2024-01-03 10:00:00", 120.0),
    (2, 1, "cancelled", "2024-01-15 11:00:00", 15.0),
    (3, 2, "completed", "2024-02-01 09:30:00", 40.0),
    (4, 3, "completed", "2024-02-20 16:00:00", 60.0),
    (5, 2, "returned", "2024-03-05 12:00:00", 200.0),
    (6, 9, "completed", "2024-03-30 08:00:00", 10.0),  # unknown customer: the NULL group
    (7, 3, "completed", "2024-04-02 07:00:00", 80.0),
    (8, 1, "completed", "2025-01-10 10:00:00", 30.0),
]
LINES = [  # id, order, product, quantity, price
    (1, 1, "pen", 2, 10.0), (2, 1, "ink", 1, 100.0), (3, 2, "pen", 3, 5.0), (4, 3, "pad", 4, 10.0),
    (5, 4, "pen", 6, 10.0), (6, 5, "ink", 2, 100.0), (7, 6, "pad", 1, 10.0), (8, 7, "pen", 8, 10.0),
    (9, 8, "pad", 3, 10.0),
]  # fmt: skip


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cube") / "store.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA shop")
    con.execute("CREATE TABLE shop.customers (id INT, city VARCHAR, lat DOUBLE, lon DOUBLE)")
    con.execute(
        "CREATE TABLE shop.orders (id INT, customer_id INT, status VARCHAR, created_at TIMESTAMP, "
        "amount DOUBLE)"
    )
    con.execute(
        "CREATE TABLE shop.line_items (id INT, order_id INT, product VARCHAR, quantity INT, "
        "price DOUBLE)"
    )
    con.executemany("INSERT INTO shop.customers VALUES (?, ?, ?, ?)", CUSTOMERS)
    con.executemany("INSERT INTO shop.orders VALUES (?, ?, ?, ?, ?)", ORDERS)
    con.executemany("INSERT INTO shop.line_items VALUES (?, ?, ?, ?, ?)", LINES)
    con.close()
    return path


def sql_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def keyed(rows: list[dict[str, Any]], key: str, *values: str) -> dict[Any, tuple[Any, ...]]:
    out = {}
    for r in rows:
        k = r[key]
        out[k[:7] if isinstance(k, str) and len(k) >= 10 else k] = tuple(
            None if r[v] is None else round(float(r[v]), 6) for v in values
        )
    return out


def hand(rows: list[tuple[Any, ...]]) -> dict[Any, tuple[Any, ...]]:
    return {
        (str(r[0])[:7] if hasattr(r[0], "year") else r[0]): tuple(
            None if v is None else round(float(v), 6) for v in r[1:]
        )
        for r in rows
    }


@pytest.fixture(scope="module")
def shop() -> Any:
    return import_cube(DATA / "cube_shop")


def test_cube_shop_loads_and_names_what_it_drops(shop: Any) -> None:
    assert shop.check() == []
    codes = {(w.code, w.path) for w in shop.warnings}
    assert codes == {
        ("cube_geo_dimension", "customers.location"),
        ("cube_sub_query_dimension", "customers.lifetime_value"),
        ("cube_rolling_window_in_buckets", "orders.amount_rolling_3m"),
        ("cube_approx_made_exact", "orders.median_amount"),
        ("cube_view_not_applied", "sales"),
    }
    assert all(w.severity == "warning" and w.message for w in shop.warnings)
    doc = shop.plain()["semantic_model"][0]
    rels = {
        (r["from"], r["to"], tuple(r["from_columns"]), tuple(r["to_columns"]))
        for r in doc["relationships"]
    }
    # orders -> line_items (one_to_many) and line_items -> orders (many_to_one) are one edge
    assert rels == {
        ("orders", "customers", ("customer_id",), ("id",)),
        ("line_items", "orders", ("order_id",), ("id",)),
    }
    ds = {d["name"]: d for d in doc["datasets"]}
    assert ds["orders"]["primary_key"] == ["id"] and ds["orders"]["source"] == "shop.orders"


def test_cube_shop_aggregates_by_joined_city(shop: Any, shop_db: Path) -> None:
    engine = Engine(model_text=shop.yaml())
    got = engine.execute(
        {
            "metrics": ["total_amount", "orders_count", "completed_count", "customers_reached"],
            "group_by": ["customers.city"],
        },
        db_path=shop_db,
    )["rows"]
    want = sql_rows(
        shop_db,
        "SELECT c.city, SUM(o.amount), COUNT(*), COUNT(CASE WHEN o.status = 'completed' THEN 1 END),"
        " COUNT(DISTINCT o.customer_id) FROM shop.orders o LEFT JOIN shop.customers c "
        "ON o.customer_id = c.id GROUP BY c.city",
    )
    assert keyed(
        got, "city", "total_amount", "orders_count", "completed_count", "customers_reached"
    ) == hand(want)


def test_cube_shop_calculated_case_and_segments(shop: Any, shop_db: Path) -> None:
    engine = Engine(model_text=shop.yaml())
    got = engine.execute(
        {"metrics": ["amount_per_order", "average_amount"], "group_by": ["orders.status"]},
        db_path=shop_db,
    )["rows"]
    want = sql_rows(
        shop_db, "SELECT status, SUM(amount) / COUNT(*), AVG(amount) FROM shop.orders GROUP BY 1"
    )
    assert keyed(got, "status", "amount_per_order", "average_amount") == hand(want)
    got = engine.execute(
        {"metrics": ["orders_count"], "group_by": ["orders.size"]}, db_path=shop_db
    )["rows"]
    want = sql_rows(
        shop_db,
        "SELECT CASE WHEN amount >= 100 THEN 'large' WHEN amount >= 20 THEN 'medium' ELSE 'small' "
        "END, COUNT(*) FROM shop.orders GROUP BY 1",
    )
    assert keyed(got, "size", "orders_count") == hand(want)
    for segment, cond in (("completed", "status = 'completed'"), ("big_orders", "amount > 100")):
        got = engine.execute(
            {"metrics": ["total_amount"], "where_sql": f"orders.{segment} = true"}, db_path=shop_db
        )["rows"]
        (want_total,) = sql_rows(shop_db, f"SELECT SUM(amount) FROM shop.orders WHERE {cond}")[0]
        assert got[0]["total_amount"] == pytest.approx(want_total)


def test_cube_shop_measure_over_two_cubes(shop: Any, shop_db: Path) -> None:
    """`{total_amount} / {line_items.count}`: each side aggregated on its own cube, then divided
    (a compose), never the order amount repeated per line."""
    engine = Engine(model_text=shop.yaml())
    got = engine.execute(
        {
            "metrics": ["amount_per_line", "revenue", "total_quantity"],
            "group_by": ["orders.status"],
        },
        db_path=shop_db,
    )["rows"]
    want = sql_rows(
        shop_db,
        "WITH a AS (SELECT status, SUM(amount) AS amt FROM shop.orders GROUP BY 1), "
        "l AS (SELECT o.status, COUNT(*) AS n, SUM(li.quantity * li.price) AS rev, "
        "SUM(li.quantity) AS q FROM shop.line_items li JOIN shop.orders o ON li.order_id = o.id "
        "GROUP BY 1) SELECT a.status, a.amt / l.n, l.rev, l.q FROM a JOIN l USING (status)",
    )
    assert keyed(got, "status", "amount_per_line", "revenue", "total_quantity") == hand(want)


def test_cube_shop_rolling_windows_and_time_shift(shop: Any, shop_db: Path) -> None:
    engine = Engine(model_text=shop.yaml())
    got = engine.execute(
        {
            "metrics": [
                "total_amount",
                "amount_rolling_3m",
                "average_amount_running",
                "orders_ytd",
                "amount_prior_month",
            ],
            "group_by": ["orders.created_at:month"],
        },
        db_path=shop_db,
    )["rows"]
    # 2024-01 .. 2024-04 have orders every month, then 2025-01: prior month (2024-12) is empty
    want = sql_rows(
        shop_db,
        "WITH m AS (SELECT date_trunc('month', created_at) AS mo, SUM(amount) AS s, COUNT(*) AS n "
        "FROM shop.orders GROUP BY 1) SELECT mo, s, "
        "SUM(s) OVER (ORDER BY mo ROWS 2 PRECEDING), "
        "SUM(s) OVER (ORDER BY mo) / SUM(n) OVER (ORDER BY mo), "
        "SUM(n) OVER (PARTITION BY year(mo) ORDER BY mo), "
        "(SELECT s FROM m p WHERE p.mo = m.mo - INTERVAL 1 MONTH) FROM m",
    )
    cols = (
        "total_amount",
        "amount_rolling_3m",
        "average_amount_running",
        "orders_ytd",
        "amount_prior_month",
    )
    assert keyed(got, "created_at__month", *cols) == hand(want)


def test_cube_view_names_the_members(shop_db: Path) -> None:
    view = import_cube(DATA / "cube_shop", view="sales")
    assert view.check() == []
    doc = view.plain()["semantic_model"][0]
    assert doc["name"] == "sales"
    assert sorted(m["name"] for m in doc["metrics"]) == [
        "orders_count",
        "revenue",
        "total_quantity",
    ]
    engine = Engine(model_text=view.yaml())
    role = {d["name"]: d["is_dimension"] for d in engine.dimensions()}
    for included in ("orders.status", "orders.created_at", "line_items.product", "customers.city"):
        assert role[included] is True
    assert role["orders.amount"] is False  # the view does not include it: no longer offered
    got = engine.execute(
        {"metrics": ["revenue", "orders_count"], "group_by": ["customers.city"]}, db_path=shop_db
    )["rows"]
    want = sql_rows(
        shop_db,
        "WITH r AS (SELECT c.city, SUM(li.quantity * li.price) AS rev FROM shop.line_items li "
        "JOIN shop.orders o ON li.order_id = o.id LEFT JOIN shop.customers c ON o.customer_id = c.id "
        "GROUP BY 1), n AS (SELECT c.city, COUNT(*) AS k FROM shop.orders o LEFT JOIN "
        "shop.customers c ON o.customer_id = c.id GROUP BY 1) "
        "SELECT r.city, r.rev, n.k FROM r JOIN n ON r.city IS NOT DISTINCT FROM n.city",
    )
    assert keyed(got, "city", "revenue", "orders_count") == hand(want)
    city = next(
        f
        for d in doc["datasets"]
        if d["name"] == "customers"
        for f in d["fields"]
        if f["name"] == "city"
    )
    assert "sales.customer_city" in city["ai_context"]["synonyms"]


def test_cube_docs_examples_give_the_documented_numbers() -> None:
    """Cube's documentation models carry their data inline; the answers follow from it."""
    converted = import_cube(DATA / "cube_docs")
    assert converted.check() == []
    assert [(w.code, w.path) for w in converted.warnings] == [
        ("cube_group_by_as_fixed", "percent_of_total.country_revenue")
    ]
    engine = Engine(model_text=converted.yaml())

    def run(metrics: list[str], group_by: list[str]) -> list[dict[str, Any]]:
        return engine.execute({"metrics": metrics, "group_by": group_by})["rows"]

    rows = run(["rolling_count_month"], ["orders.time:month"])
    assert [r["rolling_count_month"] for r in rows] == [4, 7, 11, 12]  # ids by month 4/3/4/1
    rows = run(
        ["period_to_date_revenue_ytd", "revenue_qtd", "revenue_mtd"], ["period_to_date.time:month"]
    )
    assert [r["period_to_date_revenue_ytd"] for r in rows] == [1000 * m for m in range(1, 13)] + [
        1000 * m for m in range(1, 7)
    ]
    assert [r["revenue_qtd"] for r in rows] == [1000 * (i % 3 + 1) for i in range(18)]
    assert {r["revenue_mtd"] for r in rows} == {1000}
    rows = run(["revenue_prior_year", "revenue_prior_year_ytd"], ["prior_date.time:month"])
    by_month = {r["time__month"][:7]: r for r in rows}
    assert by_month["2023-04"]["revenue_prior_year"] is None
    assert by_month["2024-04"]["revenue_prior_year"] == 1000
    # data starts 2023-04: the 2023 YTD one year before 2024-05 is April + May
    assert by_month["2024-05"]["revenue_prior_year_ytd"] == 2000
    assert by_month["2024-12"]["revenue_prior_year_ytd"] == 9000  # 2023-04 .. 2023-12
    assert by_month["2025-01"]["revenue_prior_year_ytd"] == 1000  # the year restarts
    rows = run(["ranking_revenue", "product_rank"], ["ranking.product", "ranking.country"])
    assert {(r["product"], r["country"]): r["product_rank"] for r in rows} == {
        ("A", c): 1 for c in ("USA", "Austria", "Netherlands")
    } | {("B", c): 2 for c in ("USA", "Austria", "Netherlands")}
    rows = run(
        ["country_revenue_percentage"], ["percent_of_total.product", "percent_of_total.country"]
    )
    assert {(r["product"], r["country"]): round(r["country_revenue_percentage"], 4) for r in rows} == {
        ("A", "USA"): round(1 / 3, 4), ("B", "USA"): round(2 / 3, 4),
        ("A", "Austria"): round(3 / 7, 4), ("B", "Austria"): round(4 / 7, 4),
        ("A", "Netherlands"): round(5 / 11, 4), ("B", "Netherlands"): round(6 / 11, 4),
    }  # fmt: skip


def test_cube_ecom_fixture(tmp_path: Path) -> None:
    """cube-js's own schema-compiler fixture: joins through a cube without a key dimension."""
    db = tmp_path / "ecom.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE countries AS SELECT * FROM (VALUES ('no', 'Norway'), ('pe', 'Peru')) t(id, country)"
    )
    con.execute(
        "CREATE TABLE customers AS SELECT * FROM (VALUES (1, 'no'), (2, 'pe'), (3, 'no')) t(id, country_id)"
    )
    con.execute(
        "CREATE TABLE orders AS SELECT * FROM (VALUES (1, 1, 10.0), (2, 2, 5.0), (3, 3, 7.5), "
        "(4, 1, 2.5)) t(id, customer_id, revenue)"
    )
    con.close()
    converted = import_cube(DATA / "cube_ecom")
    assert converted.check() == []
    assert {w.code for w in converted.warnings} == {"cube_view_not_applied"}
    engine = Engine(model_text=converted.yaml())
    got = engine.execute(
        {"metrics": ["total_revenue", "orders_count"], "group_by": ["countries.country"]},
        db_path=db,
    )["rows"]
    want = sql_rows(
        db,
        "SELECT co.country, SUM(o.revenue), COUNT(o.id) FROM orders o LEFT JOIN customers c ON "
        "o.customer_id = c.id LEFT JOIN countries co ON c.country_id = co.id GROUP BY 1",
    )
    assert keyed(got, "country", "total_revenue", "orders_count") == hand(want)
    view = import_cube(DATA / "cube_ecom", view="sp")
    assert view.check() == []
    # `orders` is prefixed, `customers.countries` is not: the view's own member names
    assert sorted(m["name"] for m in view.plain()["semantic_model"][0]["metrics"]) == [
        "count",
        "orders_count",
        "orders_total_revenue",
    ]
