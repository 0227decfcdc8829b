"""Filters as written (issue 21 item 2): a bare Boolean field and NOT of it are predicates at
every level a predicate stands (row-level where_sql, a where_sql conjunct beside a metric
condition, context_filter (CORE-Q-10), a D-DERIVE filter `where` (DRV-FIL-01/02)), and
`metric_time` (CORE-Q-05: each metric's own time axis) may be named in where_sql
(CORE-Q-08/09) and context_filter, bare or at a grain (`metric_time:month`,
`metric_time__month`: the truncated value is compared). Expected values: hand-written SQL on
the same DuckDB tables, and the sums written out by hand."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import MINI_TABLES, dataset, field, make_db, metric, mini_yaml, model_doc, to_yaml

from dosi.engine import Engine
from dosi.errors import OsiError

ROWS = [  # id, day, is_instant, amount
    (1, "2024-01-10", True, 10),
    (2, "2024-02-01", False, 20),
    (3, "2024-02-15", None, 40),
    (4, "2024-03-01", True, 80),
    (5, "2024-03-31", False, 160),
]


@pytest.fixture(scope="module")
def bookings(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("filters_as_written")
    values = ", ".join(
        f"({i}, DATE '{day}', {'NULL' if b is None else b}, {a})" for i, day, b, a in ROWS
    )
    db = make_db(
        d / "b.duckdb",
        [
            "CREATE TABLE bookings (id INTEGER, day DATE, is_instant BOOLEAN, amount INTEGER)",
            f"INSERT INTO bookings VALUES {values}",
        ],
    )
    doc = model_doc(
        [
            dataset(
                "bookings",
                [
                    field("id", datatype="Integer"),
                    field("day", datatype="Date"),
                    field("is_instant", datatype="Boolean"),
                    field("amount", datatype="Integer"),
                ],
                primary_key=["id"],
            )
        ],
        metrics=[
            metric("total", "SUM(bookings.amount)"),
            metric(
                "instant_total",
                "SUM(CASE WHEN bookings.is_instant THEN bookings.amount END)",
                {"derive": {"type": "filter", "base": "total", "where": "bookings.is_instant"}},
            ),
            metric(
                "other_total",
                "SUM(CASE WHEN NOT bookings.is_instant THEN bookings.amount END)",
                {
                    "derive": {
                        "type": "filter",
                        "base": "total",
                        "where": "NOT bookings.is_instant",
                    }
                },
            ),
        ],
    )
    (d / "m.yaml").write_text(to_yaml(doc), encoding="utf-8")
    e = Engine(model_path=d / "m.yaml")
    yield e, db
    e.close()


def _ref(db: Path, sql: str) -> Any:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    ("key", "text", "where", "by_hand"),
    [
        ("where_sql", "bookings.is_instant", "is_instant", 90),
        ("where_sql", "NOT bookings.is_instant", "NOT is_instant", 180),
        ("context_filter", "bookings.is_instant", "is_instant", 90),
        ("context_filter", "NOT bookings.is_instant", "NOT is_instant", 180),
        (
            "context_filter",
            "NOT bookings.is_instant OR bookings.amount > 30",
            "NOT is_instant OR amount > 30",
            20 + 40 + 80 + 160,
        ),
    ],
)
def test_bare_boolean_at_row_and_context_level(
    bookings: Any, key: str, text: str, where: str, by_hand: int
) -> None:
    """CORE-Q-08, CORE-Q-10: a Boolean field alone filters rows (NULL is neither)."""
    e, db = bookings
    res = e.execute({"metrics": ["total"], key: text}, db_path=db)
    assert res["rows"] == [{"total": by_hand}]
    assert _ref(db, f"SELECT SUM(amount) FROM bookings WHERE {where}") == [(by_hand,)]


def test_bare_boolean_beside_a_metric_condition(bookings: Any) -> None:
    """A where_sql with a metric-level conjunct keeps the bare Boolean conjunct at row level."""
    e, db = bookings
    res = e.execute(
        {
            "metrics": ["total"],
            "group_by": ["bookings.day:month"],
            "where_sql": "NOT bookings.is_instant AND total > 50",
            "order_by": ["day__month"],
        },
        db_path=db,
    )
    ref = _ref(
        db,
        "SELECT DATE_TRUNC('month', day)::DATE m, SUM(amount) s FROM bookings "
        "WHERE NOT is_instant GROUP BY 1 HAVING SUM(amount) > 50 ORDER BY 1",
    )
    assert [(r["day__month"], r["total"]) for r in res["rows"]] == [
        (str(m), s) for m, s in ref
    ]
    assert [r["total"] for r in res["rows"]] == [160]


def test_bare_boolean_in_a_derive_filter(bookings: Any) -> None:
    """DRV-FIL-01/02: `where: bookings.is_instant` (and NOT of it) folds into the aggregate."""
    e, db = bookings
    res = e.execute(
        {
            "metrics": ["total", "instant_total", "other_total"],
            "group_by": ["bookings.day:month"],
            "order_by": ["day__month"],
        },
        db_path=db,
    )
    ref = _ref(
        db,
        "SELECT DATE_TRUNC('month', day)::DATE, SUM(amount), "
        "SUM(CASE WHEN is_instant THEN amount END), SUM(CASE WHEN NOT is_instant THEN amount END) "
        "FROM bookings GROUP BY 1 ORDER BY 1",
    )
    got = [
        (r["day__month"], r["total"], r["instant_total"], r["other_total"]) for r in res["rows"]
    ]
    assert got == [(str(m), a, b, c) for m, a, b, c in ref]
    assert got == [
        ("2024-01-01", 10, 10, None),
        ("2024-02-01", 60, None, 20),
        ("2024-03-01", 240, 80, 160),
    ]


# -- metric_time in filters ------------------------------------------------------------------
@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = make_db(tmp_path_factory.mktemp("mt_filter") / "mini.duckdb", MINI_TABLES)
    e = Engine(model_text=mini_yaml())
    yield e, db
    e.close()


@pytest.mark.parametrize(
    ("key", "text", "orders_where", "refunds_where", "revenue", "refunds"),
    [
        # orders 3..7 (70+30+20+40+NULL); refunds 1..3 (70+10+5)
        (
            "where_sql",
            "metric_time >= '2024-02-01'",
            "order_date >= DATE '2024-02-01'",
            "refund_date >= DATE '2024-02-01'",
            "160.00",
            "85.00",
        ),
        # the truncated month equals March: orders 4, 5; no refund in March
        (
            "where_sql",
            "metric_time:month = '2024-03-01'",
            "DATE_TRUNC('month', order_date) = DATE '2024-03-01'",
            "DATE_TRUNC('month', refund_date) = DATE '2024-03-01'",
            "50.00",
            None,
        ),
        # the output-column spelling; a month >= March keeps 2024-03-10 (a raw >= would too)
        # and drops February's orders
        (
            "context_filter",
            "metric_time__month >= '2024-03-01' AND metric_time < '2024-05-01'",
            "DATE_TRUNC('month', order_date) >= DATE '2024-03-01' "
            "AND order_date < DATE '2024-05-01'",
            "DATE_TRUNC('month', refund_date) >= DATE '2024-03-01' "
            "AND refund_date < DATE '2024-05-01'",
            "90.00",
            None,
        ),
        # a grain compares the bucket: 2024-01-31 is in January, whose start is < 01-15
        (
            "where_sql",
            "metric_time:month < '2024-01-15'",
            "DATE_TRUNC('month', order_date) < DATE '2024-01-15'",
            "DATE_TRUNC('month', refund_date) < DATE '2024-01-15'",
            "150.00",
            None,
        ),
        (
            "where_sql",
            "metric_time:quarter BETWEEN '2024-04-01' AND '2024-06-30'",
            "DATE_TRUNC('quarter', order_date) BETWEEN DATE '2024-04-01' AND DATE '2024-06-30'",
            "DATE_TRUNC('quarter', refund_date) BETWEEN DATE '2024-04-01' AND DATE '2024-06-30'",
            "40.00",
            "15.00",
        ),
    ],
)
def test_metric_time_filters_each_metrics_own_axis(
    mini: Any,
    key: str,
    text: str,
    orders_where: str,
    refunds_where: str,
    revenue: str | None,
    refunds: str | None,
) -> None:
    """CORE-Q-05/07: metric_time in a filter is each metric's own time axis (orders by
    order_date, refunds by refund_date), at a grain the bucket's value."""
    e, db = mini
    res = e.execute({"metrics": ["revenue", "refund_total"], key: text}, db_path=db)
    want = {
        "revenue": None if revenue is None else Decimal(revenue),
        "refund_total": None if refunds is None else Decimal(refunds),
    }
    assert res["rows"] == [want]
    assert _ref(db, f"SELECT SUM(amount) FROM orders WHERE {orders_where}") == [
        (want["revenue"],)
    ]
    assert _ref(db, f"SELECT SUM(refund_amount) FROM refunds WHERE {refunds_where}") == [
        (want["refund_total"],)
    ]


def test_metric_time_filter_beside_a_grouped_metric_time(mini: Any) -> None:
    e, db = mini
    res = e.execute(
        {
            "metrics": ["revenue", "refund_total"],
            "group_by": ["metric_time:month"],
            "where_sql": "metric_time:month >= '2024-03-01'",
        },
        db_path=db,
    )
    assert [tuple(r.values()) for r in res["rows"]] == [
        ("2024-03-01", Decimal("50.00"), None),
        ("2024-04-01", Decimal("40.00"), None),
        ("2024-05-01", None, Decimal("15.00")),
    ]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"metrics": ["revenue"], "where_sql": "metric_time > 5"}, "filter_type_mismatch"),
        ({"metrics": ["revenue"], "context_filter": "metric_time:month LIKE 'x'"}, None),
        ({"metrics": ["revenue"], "where_sql": "metric_time"}, "unsupported_filter"),
        ({"metrics": ["revenue"], "where_sql": "NOT metric_time"}, "unsupported_filter"),
        ({"metrics": ["revenue"], "where_sql": "metric_time:fortnight > '2024'"}, "unknown_grain"),
        (
            {"metrics": ["revenue"], "where_sql": "metric_time:day_of_week = 1"},
            "unsupported_filter",
        ),
        (
            {"group_by": ["orders.channel"], "where_sql": "metric_time > '2024-01-01'"},
            "metric_time_needs_metric",
        ),
        (
            {"metrics": ["revenue"], "where_sql": "revenue > 1 OR metric_time > '2024-01-01'"},
            "unsupported_filter",
        ),
    ],
)
def test_metric_time_filter_rejections(mini: Any, query: dict[str, Any], code: str | None) -> None:
    """The allow-list and the type check cover metric_time: structured errors, never SQL
    that fails on the warehouse."""
    e, _ = mini
    with pytest.raises(OsiError) as info:
        e.compile(query)
    if code is None:
        assert info.value.code in ("filter_type_mismatch", "unsupported_filter")
    else:
        assert info.value.code == code, info.value


def test_computed_boolean_field_in_a_derive_filter(tmp_path: Path) -> None:
    """DRV-FIL-01/02, DRV-TIER-01: a D-DERIVE filter `where` naming a computed Boolean field
    alone (`is_web` defined as `channel = 'web'`) folds that field's expression, so the
    authored aggregate (written with the field or with its expression) passes the gate and
    counts the web rows only (the whole-predicate column was never replaced before)."""
    db = make_db(
        tmp_path / "c.duckdb",
        [
            "CREATE TABLE bookings (id INTEGER, channel VARCHAR, amount INTEGER)",
            "INSERT INTO bookings VALUES (1, 'web', 10), (2, 'app', 20), (3, 'web', 40), "
            "(4, NULL, 80)",
        ],
    )
    by_hand = _ref(db, "SELECT SUM(amount) FROM bookings WHERE channel = 'web'")[0][0]
    assert by_hand == 50
    for authored in (
        "SUM(CASE WHEN bookings.is_web THEN bookings.amount END)",
        "SUM(CASE WHEN bookings.channel = 'web' THEN bookings.amount END)",
    ):
        doc = model_doc(
            [
                dataset(
                    "bookings",
                    [
                        field("id", datatype="Integer"),
                        field("channel"),
                        field("amount", datatype="Integer"),
                        field("is_web", "channel = 'web'", datatype="Boolean"),
                    ],
                    primary_key=["id"],
                )
            ],
            metrics=[
                metric("total", "SUM(bookings.amount)"),
                metric(
                    "web_total",
                    authored,
                    {"derive": {"type": "filter", "base": "total", "where": "bookings.is_web"}},
                ),
            ],
        )
        (tmp_path / "m.yaml").write_text(to_yaml(doc), encoding="utf-8")
        e = Engine(model_path=tmp_path / "m.yaml")
        try:
            res = e.execute({"metrics": ["web_total", "total"]}, db_path=db)
        finally:
            e.close()
        assert res["rows"] == [{"web_total": by_hand, "total": 150}]
