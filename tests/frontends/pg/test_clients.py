"""Real PostgreSQL clients against the wire server, each answer compared value by value with
the Python API: psycopg 3 (extended protocol, binary results, a server-side cursor), asyncpg
(binary format, prepared statements), SQLAlchemy 2 (`inspect()`, what Superset runs on
connect) with pandas.read_sql, and ADBC's libpq driver (Arrow results through COPY)."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from pgcases import CASES, Case, assert_same, expected_rows

from conftest import Running
from dosi import Engine

psycopg = pytest.importorskip("psycopg")


def _psycopg_sql(case: Case) -> str:
    """`$n` placeholders in psycopg's spelling."""
    sql = case.sql
    for i in range(len(case.params), 0, -1):
        sql = sql.replace(f"${i}", "%s")
    return sql


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.sql[:50])
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_extended_protocol(pg: Running, api: Engine, case: Case, binary: bool) -> None:
    with psycopg.connect(pg.dsn()) as conn:
        cur = conn.cursor(binary=binary)
        cur.execute(_psycopg_sql(case), list(case.params), prepare=True)
        rows = cur.fetchall()
        if case.names:
            assert [d.name for d in cur.description] == list(case.names)
    assert_same(rows, expected_rows(api, case), case.ordered)


def test_psycopg_server_side_cursor(pg: Running, api: Engine) -> None:
    """DECLARE ... CURSOR and FETCH in batches (psycopg's named cursor)."""
    sql = (
        "SELECT orders__order_date, MEASURE(revenue), MEASURE(order_count) FROM shop "
        "WHERE metric_time >= %s AND metric_time < %s GROUP BY 1 ORDER BY 1"
    )
    with psycopg.connect(pg.dsn()) as conn, conn.cursor(name="days") as cur:
        cur.itersize = 50
        cur.execute(sql, ["2024-01-01", "2024-07-01"])
        first = cur.fetchmany(7)
        rest = list(cur)
        names = [d.name for d in cur.description]
    ref = api.execute(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.order_date"],
            "time_range": {"start": "2024-01-01", "end": "2024-07-01"},
            "order_by": [{"key": "orders.order_date"}],
        }
    )["rows"]
    assert names == ["orders__order_date", "measure", "measure"]
    assert len(first) == 7 and len(first) + len(rest) == len(ref) > 100
    assert_same(
        first + rest, [(r["order_date"], r["revenue"], r["order_count"]) for r in ref], ordered=True
    )


def test_psycopg_scrollable_cursor(pg: Running) -> None:
    with psycopg.connect(pg.dsn()) as conn, conn.cursor(name="s", scrollable=True) as cur:
        cur.execute(
            "SELECT products__category, MEASURE(items_sold) FROM shop GROUP BY 1 ORDER BY 1"
        )
        everything = cur.fetchall()
        cur.scroll(1, mode="absolute")
        assert cur.fetchone() == everything[1]
    assert len(everything) == 5


def test_psycopg_session_commands(pg: Running) -> None:
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        for stmt in (
            "SET application_name = 'superset'",
            "SET statement_timeout = 0",
            "BEGIN",
            "COMMIT",
            "DISCARD ALL",
            "SET TIME ZONE 'UTC'",
            "RESET ALL",
        ):
            conn.execute(stmt)
        assert conn.execute("SHOW server_version").fetchone()[0].startswith("15")
        assert conn.execute("SHOW standard_conforming_strings").fetchone() == ("on",)
        assert conn.execute("SELECT version()").fetchone()[0].startswith("PostgreSQL 15")
        assert conn.execute("SELECT current_schema()").fetchone() == ("public",)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("CREATE TABLE x (a int)")


def test_psycopg_errors_carry_the_dosi_code(pg: Running) -> None:
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn) as info:
            conn.execute("SELECT orders__chanel, revenue FROM shop")
        diag = info.value.diag
        assert diag.sqlstate == "42703"
        assert "[sql_unknown_column]" in (diag.message_primary or "")
        assert "orders__channel" in (diag.message_primary or "")
        assert diag.message_hint
        with pytest.raises(psycopg.errors.GroupingError) as agg:
            conn.execute("SELECT AVG(revenue) FROM shop")
        assert "MEASURE(revenue)" in str(agg.value)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as dims:
            conn.execute("SELECT DISTINCT orders__channel FROM shop")
        assert "[not_implemented]" in str(dims.value)
        # the connection is still usable after each refusal
        assert conn.execute("SELECT MEASURE(order_count) FROM shop").fetchone()[0] > 0


def test_psycopg_transaction_after_error(pg: Running) -> None:
    with psycopg.connect(pg.dsn()) as conn:
        with pytest.raises(psycopg.errors.UndefinedColumn):
            conn.execute("SELECT nope FROM shop")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT MEASURE(revenue) FROM shop")
        conn.rollback()
        assert conn.execute("SELECT MEASURE(revenue) FROM shop").fetchone()[0] > 0


asyncpg = pytest.importorskip("asyncpg")


async def _asyncpg_rows(dsn: str, case: Case) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(dsn)
    try:
        stmt = await conn.prepare(case.sql)
        return [tuple(r) for r in await stmt.fetch(*case.params)]
    finally:
        await conn.close()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.sql[:50])
def test_asyncpg_binary(pg: Running, api: Engine, case: Case) -> None:
    rows = asyncio.run(_asyncpg_rows(pg.dsn(), case))
    assert_same(rows, expected_rows(api, case), case.ordered)


def test_asyncpg_typed_parameters(pg: Running, api: Engine) -> None:
    """Binary parameters (a date, an int) bound into a time range and a LIMIT."""

    async def go() -> list[tuple[Any, ...]]:
        conn = await asyncpg.connect(pg.dsn())
        try:
            rows = await conn.fetch(
                "SELECT metric_time__month, MEASURE(revenue) FROM shop WHERE metric_time >= $1 "
                "AND metric_time < $2 ORDER BY 1 LIMIT $3",
                dt.date(2024, 1, 1),
                dt.date(2025, 1, 1),
                5,
            )
            return [tuple(r) for r in rows]
        finally:
            await conn.close()

    ref = api.execute(
        {
            "metrics": ["revenue"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
            "order_by": [{"key": "metric_time:month"}],
            "limit": 5,
        }
    )["rows"]
    assert_same(asyncio.run(go()), [(r["metric_time__month"], r["revenue"]) for r in ref], True)


sqlalchemy = pytest.importorskip("sqlalchemy")
pd = pytest.importorskip("pandas")


def test_sqlalchemy_inspect_and_pandas(pg: Running, api: Engine) -> None:
    """What Superset runs when a database is added: table names, columns, types, comments;
    then a chart's query through pandas.read_sql."""
    engine = sqlalchemy.create_engine(pg.dsn().replace("postgresql://", "postgresql+psycopg://"))
    try:
        insp = sqlalchemy.inspect(engine)
        assert insp.get_table_names() == ["shop"]
        assert "public" in insp.get_schema_names()
        cols = {c["name"]: c for c in insp.get_columns("shop")}
        assert list(cols) == api.sql_table().names
        assert isinstance(cols["revenue"]["type"], sqlalchemy.Numeric)
        assert isinstance(cols["order_count"]["type"], sqlalchemy.BigInteger)
        assert isinstance(cols["orders__channel"]["type"], sqlalchemy.Text)
        assert isinstance(cols["orders__order_date__month"]["type"], sqlalchemy.Date)
        assert isinstance(cols["events__event_ts"]["type"], sqlalchemy.DateTime)
        assert cols["revenue"]["comment"] == api.metric("revenue")["description"]
        assert insp.get_pk_constraint("shop")["constrained_columns"] == []
        assert insp.get_foreign_keys("shop") == []
        assert insp.get_indexes("shop") == []
        assert insp.get_table_comment("shop")["text"] is not None
        with engine.connect() as conn:
            df = pd.read_sql(
                sqlalchemy.text(
                    "SELECT orders__channel AS orders__channel, SUM(revenue) AS "
                    '"SUM(revenue)" FROM shop WHERE orders__status = :s GROUP BY '
                    'orders__channel ORDER BY "SUM(revenue)" DESC LIMIT 10000'
                ),
                conn,
                params={"s": "completed"},
            )
    finally:
        engine.dispose()
    ref = api.execute(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.status = 'completed'",
            "order_by": [{"key": "revenue", "desc": True}],
        }
    )["rows"]
    got = [
        (None if isinstance(c, float) else c, v)
        for c, v in zip(df["orders__channel"], df["SUM(revenue)"], strict=True)
    ]
    assert_same(got, [(r["channel"], r["revenue"]) for r in ref], ordered=True)


adbc = pytest.importorskip("adbc_driver_postgresql.dbapi")


def test_adbc_arrow_results(pg: Running, api: Engine) -> None:
    with adbc.connect(pg.dsn()) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT orders__channel, MEASURE(order_count), MEASURE(avg_order_value), "
            "MEASURE(customer_count) FROM shop GROUP BY 1 ORDER BY 1"
        )
        table = cur.fetch_arrow_table()
    assert table.column_names == ["orders__channel", "measure", "measure", "measure"]
    assert str(table.schema.field(1).type) == "int64"
    assert str(table.schema.field(2).type) == "double"
    ref = api.execute(
        {
            "metrics": ["order_count", "avg_order_value", "customer_count"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "orders.channel"}],
        }
    )["rows"]
    got = list(zip(*(c.to_pylist() for c in table.columns), strict=True))
    assert_same(
        got,
        [(r["channel"], r["order_count"], r["avg_order_value"], r["customer_count"]) for r in ref],
        ordered=True,
    )


def test_select_star_limit_0_types_match_the_catalog(pg: Running) -> None:
    """Tools read a table's columns with `SELECT * ... LIMIT 0`: the same types as the
    catalog announces."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        cur = conn.execute("SELECT * FROM shop LIMIT 0")
        star = {d.name: d.type_code for d in cur.description}
        catalog = dict(
            conn.execute(
                "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = 'shop'::regclass "
                "AND attnum > 0"
            ).fetchall()
        )
    assert star == catalog
