"""The where_sql allow-list (dosi.query.predicate_allowlist): every listed construct and function
filters rows exactly as hand-written SQL on the same table does; anything unlisted is
`unsupported_filter` naming the construct; docs/filters.md lists the same functions."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from enginekit import REPO
from sqlglot import exp

from dosi import Engine
from dosi.errors import QueryError
from dosi.query.predicate_allowlist import ALLOWED_FUNCTIONS, check_predicate

# (where_sql over model names, the same predicate over the raw table `orders`)
ALLOWED_PREDICATES: list[tuple[str, str]] = [
    ("orders.channel = 'web'", "channel = 'web'"),
    ("orders.channel <> 'web' OR orders.channel IS NULL", "channel <> 'web' OR channel IS NULL"),
    ("orders.amount BETWEEN 100 AND 500", "amount BETWEEN 100 AND 500"),
    ("orders.status IN ('completed', 'returned')", "status IN ('completed', 'returned')"),
    ("orders.status NOT IN ('completed')", "status NOT IN ('completed')"),
    ("orders.channel LIKE 'w%'", "channel LIKE 'w%'"),
    ("orders.channel ILIKE 'W%'", "channel ILIKE 'W%'"),
    (
        "orders.channel IS NOT NULL AND NOT orders.amount < 50",
        "channel IS NOT NULL AND NOT amount < 50",
    ),
    ("orders.amount * 2 - orders.discount / 2 + 1 > 300", "amount * 2 - discount / 2 + 1 > 300"),
    ("orders.order_id % 3 = 0", "order_id % 3 = 0"),
    ("CASE WHEN orders.amount > 500 THEN 'big' ELSE 'small' END = 'big'", "amount > 500"),
    ("CAST(orders.amount AS INTEGER) >= 500", "CAST(amount AS INTEGER) >= 500"),
    ("CAST(orders.order_id AS VARCHAR) LIKE '1%'", "CAST(order_id AS VARCHAR) LIKE '1%'"),
    ("orders.order_date >= DATE '2024-06-01' - INTERVAL 1 DAY", "order_date >= DATE '2024-05-31'"),
    (
        "orders.channel || '-' || orders.status = 'web-completed'",
        "channel || '-' || status = 'web-completed'",
    ),
    ("lower(upper(orders.channel)) = 'web'", "channel = 'web'"),
    ("length(trim(orders.status)) = 9", "length(status) = 9"),
    ("substring(orders.status, 1, 4) = 'comp'", "status LIKE 'comp%'"),
    ("concat(orders.channel, '!') = 'web!'", "channel = 'web'"),
    ("replace(orders.status, 'ed', '') = 'complet'", "status = 'completed'"),
    ("left(orders.status, 2) = 'co' AND right(orders.status, 2) = 'ed'", "status LIKE 'co%ed'"),
    ("strpos(orders.status, 'nce') = 3", "status = 'cancelled'"),
    ("starts_with(orders.status, 're')", "status LIKE 're%'"),
    ("abs(orders.amount - 500) < 100", "amount > 400 AND amount < 600"),
    ("ceil(orders.amount) - floor(orders.amount) = 1", "amount <> round(amount, 0)"),
    ("round(orders.amount, 0) = 1000", "round(amount, 0) = 1000"),
    ("sqrt(orders.amount) > 20", "amount > 400"),
    ("ln(orders.amount) > 6", "amount > exp(6)"),
    ("exp(orders.discount) > 1", "discount > 0"),
    ("power(orders.amount, 2) > 250000", "amount > 500"),
    ("sign(orders.discount) = 1", "discount > 0"),
    ("mod(orders.order_id, 5) = 1", "order_id % 5 = 1"),
    (
        "greatest(orders.amount, 500) = 500 AND least(orders.amount, 100) = 100",
        "amount BETWEEN 100 AND 500",
    ),
    ("coalesce(orders.channel, 'unknown') = 'unknown'", "channel IS NULL"),
    ("nullif(orders.channel, 'web') IS NULL", "channel IS NULL OR channel = 'web'"),
    ("IF(orders.amount > 500, 1, 0) = 1", "amount > 500"),
    (
        "year(orders.order_date) = 2024",
        "order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01'",
    ),
    ("quarter(orders.order_date) = 2", "month(order_date) IN (4, 5, 6)"),
    ("month(orders.order_date) = 2", "strftime(order_date, '%m') = '02'"),
    ("week(orders.order_date) = 10", "weekofyear(order_date) = 10"),
    ("day(orders.order_date) = 29", "strftime(order_date, '%d') = '29'"),
    ("dayofweek(orders.order_date) = 0", "strftime(order_date, '%w') = '0'"),
    ("dayofyear(orders.order_date) = 60", "strftime(order_date, '%j') = '060'"),
    (
        "hour(CAST(orders.order_date AS TIMESTAMP)) = 0 AND minute(CAST(orders.order_date AS TIMESTAMP)) = 0 AND second(CAST(orders.order_date AS TIMESTAMP)) = 0",
        "true",
    ),
    ("EXTRACT(YEAR FROM orders.order_date) = 2023", "order_date < DATE '2024-01-01'"),
    (
        "date_trunc('month', orders.order_date) = DATE '2024-03-01'",
        "order_date >= DATE '2024-03-01' AND order_date < DATE '2024-04-01'",
    ),
    ("orders.status LIKE 'c!%%' ESCAPE '!'", "false"),
    ("orders.channel IS DISTINCT FROM 'web'", "channel IS NULL OR channel <> 'web'"),
]


def _expected(shop_db: Path, raw: str) -> Decimal | None:
    con = duckdb.connect(str(shop_db), read_only=True)
    try:
        value = con.execute(f"SELECT SUM(amount) FROM main.orders WHERE {raw}").fetchall()[0][0]
    finally:
        con.close()
    return value  # a DECIMAL sum (or NULL): compared digit for digit


@pytest.mark.parametrize(
    ("where", "raw"), ALLOWED_PREDICATES, ids=[p[0][:40] for p in ALLOWED_PREDICATES]
)
def test_allowed_predicates_filter_like_hand_written_sql(
    shop: Engine, shop_db: Path, where: str, raw: str
) -> None:
    got = shop.execute({"metrics": ["revenue"], "where_sql": where}, db_path=shop_db)["rows"][0]
    want = _expected(shop_db, raw)
    value = got["revenue"]
    assert value == want
    for dialect in ("postgres", "snowflake", "bigquery", "mysql"):
        assert shop.compile({"metrics": ["revenue"], "where_sql": where}, dialect=dialect)["sql"]


def test_every_allowed_function_is_exercised() -> None:
    used = " ".join(w for w, _ in ALLOWED_PREDICATES).lower()
    for name in ALLOWED_FUNCTIONS:
        assert re.search(rf"\b{name}\s*\(", used), name


@pytest.mark.parametrize(
    ("where", "named"),
    [
        ("(SELECT 1) = 1", "subquery"),
        ("orders.amount IN (SELECT 1)", "subquery"),
        ("orders.channel = ?", "placeholder"),
        ("orders.channel = @x", "parameter"),
        ("CAST(orders.amount AS STRUCT(x INT)) IS NULL", "CAST to"),
        ("[1, 2][1] = 1", "`Bracket`"),
        ("{'a': 1} IS NULL", "`Struct`"),
        ("orders.channel->>'x' = 'y'", "json"),
        ("regexp_matches(orders.channel, 'x')", "regexp_matches"),
        ("repeat('x', 1000000000) = 'x'", "repeat"),
        ("lpad(orders.channel, 1000000000, 'x') = 'x'", "pad"),
        ("now() IS NOT NULL", "`now`"),
        ("current_date IS NOT NULL", "current_date"),
        ("read_csv('/etc/passwd') IS NULL", "read_csv"),
        ("orders.channel SIMILAR TO 'w.*'", "SimilarTo"),
        ("orders.channel GLOB 'w*'", "Glob"),
    ],
)
def test_unlisted_constructs_are_named(shop: Engine, where: str, named: str) -> None:
    with pytest.raises(QueryError) as info:
        shop.compile({"metrics": ["revenue"], "where_sql": where})
    assert info.value.code == "unsupported_filter"
    assert named.lower() in info.value.message.lower()


def test_unknown_and_qualified_columns_stay_unknown_field(shop: Engine) -> None:
    for where in ("orders.nope = 1", "main.orders.channel = 'web'"):
        with pytest.raises(QueryError) as info:
            shop.compile({"metrics": ["revenue"], "where_sql": where})
        assert info.value.code == "unknown_field"


def test_check_predicate_takes_any_resolver() -> None:
    """The validator is reusable: a metric-level resolver (HAVING-like conjuncts) plugs in."""
    seen: list[str] = []

    def resolve(col: exp.Column) -> exp.Expression:
        seen.append(col.name)
        return exp.column(f"m_{col.name}")

    tree = exp.maybe_parse("revenue > 10 AND lower(region) = 'x'")
    out = check_predicate(tree, resolve, label="metric filter")
    assert seen == ["revenue", "region"]
    assert out.sql() == "m_revenue > 10 AND LOWER(m_region) = 'x'"
    with pytest.raises(QueryError) as info:
        check_predicate(exp.maybe_parse("sleep(1) = 0"), resolve, label="metric filter")
    assert info.value.message.startswith("metric filter uses function `sleep`")


def test_the_docs_list_the_allowed_functions() -> None:
    page = (REPO / "docs" / "filters.md").read_text(encoding="utf-8")
    section = page.split("## The allow-list", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([a-z_]+)`", section))
    assert set(ALLOWED_FUNCTIONS) <= listed


@pytest.mark.parametrize(
    ("where", "code"),
    [
        ("revenue > 0 AND sleep(1) = 0", "unsupported_filter"),
        ("sleep_ms(revenue) IS NULL", "unsupported_filter"),
        ("current_setting('x') = revenue", "unsupported_filter"),
        ("revenue LIKE 'x%'", "filter_type_mismatch"),
        ("lower(revenue) = 'x'", "filter_type_mismatch"),
    ],
)
def test_metric_level_conjuncts_pass_the_same_allow_list(
    shop: Engine, where: str, code: str
) -> None:
    with pytest.raises(QueryError) as info:
        shop.compile({"metrics": ["revenue"], "group_by": ["orders.channel"], "where_sql": where})
    assert info.value.code == code


def test_metric_level_functions_from_the_list_filter_result_rows(
    shop: Engine, shop_db: Path
) -> None:
    q = {
        "metrics": ["revenue"],
        "group_by": ["orders.channel"],
        "where_sql": "round(revenue, 0) > 500000 AND coalesce(orders.channel, 'none') <> 'web'",
    }
    got = {r["channel"]: r["revenue"] for r in shop.execute(q, db_path=shop_db)["rows"]}
    con = duckdb.connect(str(shop_db), read_only=True)
    want = {
        ch: v
        for ch, v in con.execute(
            "SELECT channel, SUM(amount) FROM main.orders "
            "WHERE coalesce(channel, 'none') <> 'web' GROUP BY channel "
            "HAVING round(SUM(amount), 0) > 500000"
        ).fetchall()
    }
    con.close()
    assert got.keys() == want.keys()
    assert got == want  # DECIMAL sums: exact, digit for digit
