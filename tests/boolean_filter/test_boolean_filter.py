"""Filters as written (issue 21 item 2): a Boolean field alone, or under NOT, is a predicate in
where_sql (metric queries, detail rows, dimension-only queries); any other field alone is
still `unsupported_filter`. Expected values: hand-written SQL on the same DuckDB table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from enginekit import dataset, field, make_db, metric, model_doc, to_yaml

from dosi.engine import Engine
from dosi.errors import QueryError

ROWS = [  # id, is_instant, is_lux (no datatype declared), amount, status
    (1, True, True, 10, "ok"),
    (2, False, False, 20, "ok"),
    (3, None, True, 40, "ok"),
    (4, True, False, 80, "void"),
    (5, False, None, 160, "void"),
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Any:
    d = tmp_path_factory.mktemp("boolean_filter")
    values = ", ".join(
        f"({i}, {'NULL' if b is None else b}, {'NULL' if x is None else x}, {a}, '{s}')"
        for i, b, x, a, s in ROWS
    )
    db = make_db(
        d / "b.duckdb",
        [
            "CREATE TABLE bookings (id INTEGER, is_instant BOOLEAN, is_lux BOOLEAN, "
            "amount INTEGER, status VARCHAR)",
            f"INSERT INTO bookings VALUES {values}",
        ],
    )
    fields = [
        field("id", datatype="Integer"),
        field("is_instant", datatype="Boolean"),
        field("is_lux"),
        field("amount", datatype="Integer"),
        field("status", datatype="String"),
    ]
    doc = model_doc(
        [dataset("bookings", fields, primary_key=["id"])],
        metrics=[metric("total", "SUM(bookings.amount)")],
    )
    (d / "m.yaml").write_text(to_yaml(doc), encoding="utf-8")
    e = Engine(model_path=d / "m.yaml")
    yield e, db
    e.close()


def _ref(db: Path, where: str) -> Any:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT SUM(amount) FROM bookings WHERE {where}").fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize(
    ("where_sql", "ref", "by_hand"),
    [
        ("bookings.is_instant", "is_instant", 10 + 80),
        ("NOT bookings.is_instant", "NOT is_instant", 20 + 160),  # NULL is neither
        ("(bookings.is_instant)", "is_instant", 90),
        (
            "NOT bookings.is_instant AND bookings.status = 'ok'",
            "NOT is_instant AND status = 'ok'",
            20,
        ),
        ("bookings.is_instant OR bookings.status = 'void'", "is_instant OR status = 'void'", 250),
    ],
)
def test_bare_boolean_field_filters_rows(
    setup: Any, where_sql: str, ref: str, by_hand: int
) -> None:
    e, db = setup
    res = e.execute({"metrics": ["total"], "where_sql": where_sql}, db_path=db)
    assert res["rows"] == [{"total": by_hand}]
    assert _ref(db, ref) == by_hand


def test_detail_and_dimension_only_queries_take_it_too(setup: Any) -> None:
    e, db = setup
    sel = e.select(
        {
            "from": "bookings",
            "fields": ["bookings.id"],
            "where_sql": "NOT bookings.is_instant",
            "order_by": ["id"],
        },
        db_path=db,
    )
    assert [r["id"] for r in sel["rows"]] == [2, 5]
    dims = e.execute(
        {
            "group_by": ["bookings.status"],
            "where_sql": "bookings.is_instant",
            "order_by": ["status"],
        },
        db_path=db,
    )
    assert dims["rows"] == [{"status": "ok"}, {"status": "void"}]


@pytest.mark.parametrize(
    "where_sql",
    [
        "bookings.amount",
        "NOT bookings.status",
        "bookings.is_lux",
        "bookings.amount OR bookings.is_instant",
    ],
)
def test_other_fields_alone_are_not_predicates(setup: Any, where_sql: str) -> None:
    """A number, a string, or a field without a declared datatype is no condition."""
    e, _ = setup
    with pytest.raises(QueryError) as info:
        e.compile({"metrics": ["total"], "where_sql": where_sql})
    assert info.value.code in ("unsupported_filter", "filter_type_mismatch"), info.value
