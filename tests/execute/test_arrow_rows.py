"""Result rows built from Arrow a column at a time (issue 10, item 7 "Arrow all the way").

The vectorised builder (dosi.execute.rows.arrow_rows) must give exactly the values and Python
types the per-value conversion gives (`to_python`, the one definition: dates 'YYYY-MM-DD',
timestamps 'YYYY-MM-DD HH:MM:SS[.ffffff]', decimals int when they have no fraction digits else
the exact `decimal.Decimal`); `execute_arrow` answers the engine's table without building rows at all.
Requirement IDs: SURF-PY-04 (Python results are dicts), SURF-ARROW-01 (Arrow results).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dosi.engine
import dosi.execute.rows
from dosi.engine import Engine
from dosi.execute.rows import arrow_rows
from dosi.execute.values import to_python


def per_value_rows(table: pa.Table) -> list[dict[str, Any]]:
    """The former per-row builder, kept here as the reference the new one must equal."""
    cols = table.column_names
    data = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [{c: to_python(data[j][i]) for j, c in enumerate(cols)} for i in range(table.num_rows)]


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def assert_identical(table: pa.Table) -> None:
    got, want = arrow_rows(table), per_value_rows(table)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        for k in w:
            assert _same(g[k], w[k]), (k, g[k], w[k], table.schema.field(k).type)


#: Exact decimal arithmetic: the default context (28 digits) would round 38-digit values.
_EXACT = decimal.Context(prec=100)
_DATETIMES = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31))
_TIMES = st.times()


def _decimal_column(precision: int, scale: int) -> st.SearchStrategy[list[Any]]:
    limit = 10 ** (precision) - 1
    return st.lists(
        st.one_of(st.none(), st.integers(-limit, limit)),
        min_size=0,
        max_size=8,
    ).map(lambda xs: [None if x is None else decimal.Decimal(x).scaleb(-scale, _EXACT) for x in xs])


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    """A table with one column of every type a query result can carry."""
    n = draw(st.integers(0, 8))

    def col(strategy: st.SearchStrategy[Any]) -> list[Any]:
        return draw(st.lists(st.one_of(st.none(), strategy), min_size=n, max_size=n))

    p = draw(st.integers(1, 38))
    s = draw(st.integers(0, p))
    dec = draw(_decimal_column(p, s))
    dec = (dec + [None] * n)[:n]
    neg_scale = [
        None if v is None else decimal.Decimal(v).scaleb(2, _EXACT)
        for v in col(st.integers(-999, 999))
    ]
    arrays = {
        "b": pa.array(col(st.booleans()), pa.bool_()),
        "i8": pa.array(col(st.integers(-128, 127)), pa.int8()),
        "i64": pa.array(col(st.integers(-(2**63), 2**63 - 1)), pa.int64()),
        "u64": pa.array(col(st.integers(0, 2**64 - 1)), pa.uint64()),
        "f32": pa.array(col(st.floats(width=32, allow_nan=False)), pa.float32()),
        "f64": pa.array(col(st.floats(allow_nan=True)), pa.float64()),
        "s": pa.array(col(st.text(max_size=5)), pa.string()),
        "ls": pa.array(col(st.text(max_size=5)), pa.large_string()),
        "bin": pa.array(col(st.binary(max_size=4)), pa.binary()),
        "d32": pa.array(col(st.dates()), pa.date32()),
        "d64": pa.array(col(st.dates()), pa.date64()),
        "ts_s": pa.array(
            [None if v is None else v.replace(microsecond=0) for v in col(_DATETIMES)],
            pa.timestamp("s"),
        ),
        "ts_ms": pa.array(
            [
                None if v is None else v.replace(microsecond=v.microsecond // 1000 * 1000)
                for v in col(_DATETIMES)
            ],
            pa.timestamp("ms"),
        ),
        "ts_us": pa.array(col(_DATETIMES), pa.timestamp("us")),
        "ts_tz": pa.array(col(_DATETIMES), pa.timestamp("us", tz="UTC")),
        "t64": pa.array(col(_TIMES), pa.time64("us")),
        "dur": pa.array(
            col(st.timedeltas(min_value=dt.timedelta(days=-999), max_value=dt.timedelta(days=999))),
            pa.duration("us"),
        ),
        "dec": pa.array(dec, pa.decimal128(p, s)),
        "dec_neg": pa.array(neg_scale, pa.decimal128(5, -2)),
        "dec256": pa.array(dec, pa.decimal256(p, s)),
        "list": pa.array(col(st.lists(st.integers(-5, 5), max_size=3)), pa.list_(pa.int32())),
    }
    return pa.table(arrays)


@settings(max_examples=400, deadline=None)
@given(tables())
def test_vectorised_rows_equal_per_value_rows(table: pa.Table) -> None:
    """SURF-PY-04: every column type converts to the same value and Python type as before."""
    assert_identical(table)


def test_known_values_and_types() -> None:
    """The documented forms, independently of to_python: ISO dates/timestamps, int / exact
    Decimal."""
    table = pa.table(
        {
            "d": pa.array([dt.date(2024, 3, 5)]),
            "ts": pa.array([dt.datetime(2024, 3, 5, 6, 7, 8)], pa.timestamp("us")),
            "ts_frac": pa.array([dt.datetime(2024, 3, 5, 6, 7, 8, 90)], pa.timestamp("us")),
            "int_dec": pa.array([decimal.Decimal("12")], pa.decimal128(10, 0)),
            "frac_dec": pa.array([decimal.Decimal("2.50")], pa.decimal128(10, 2)),
            "whole_frac_dec": pa.array([decimal.Decimal("2.00")], pa.decimal128(10, 2)),
            "big_int_dec": pa.array([decimal.Decimal(10**30)], pa.decimal128(38, 0)),
        }
    )
    (row,) = arrow_rows(table)
    assert row == {
        "d": "2024-03-05",
        "ts": "2024-03-05 06:07:08",
        "ts_frac": "2024-03-05 06:07:08.000090",
        "int_dec": 12,
        "frac_dec": decimal.Decimal("2.50"),
        "whole_frac_dec": decimal.Decimal("2.00"),
        "big_int_dec": 10**30,
    }
    assert type(row["int_dec"]) is int and type(row["whole_frac_dec"]) is decimal.Decimal
    assert str(row["frac_dec"]) == "2.50"  # the column's scale, digit for digit
    assert type(row["big_int_dec"]) is int


def test_duckdb_result_types_match() -> None:
    """The types DuckDB itself answers (HUGEINT sums, DECIMAL averages, DATE, TIMESTAMP)."""
    con = duckdb.connect()
    table = con.sql(
        "SELECT DATE '2024-01-31' AS d, TIMESTAMP '2024-01-31 10:00:00.5' AS ts, "
        "SUM(x)::HUGEINT AS h, SUM(x * 1.25) AS dsum, AVG(x) AS a, 1.10::DECIMAL(4,2) AS dec, "
        "TIME '12:34:56' AS t, INTERVAL 3 DAY AS iv, 'x' AS s, NULL AS n "
        "FROM range(10) r(x)"
    ).to_arrow_table()
    assert_identical(table)


def test_execute_arrow_never_builds_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 7: execute_arrow returns the engine's table; the row builder never runs. execute()
    still builds its rows (once), equal to the per-value conversion of the same table."""
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE sales AS SELECT DATE '2024-01-01' + (i % 40)::INT AS day, "
        "(i * 1.5)::DECIMAL(10,2) AS amount FROM range(200) t(i)"
    )
    con.close()
    model = """
version: "0.2.0.dev0"
semantic_model:
  - name: m
    datasets:
      - name: sales
        source: sales
        fields:
          - name: day
            expression: {dialects: [{dialect: ANSI_SQL, expression: day}]}
            dimension: {is_time: true}
          - name: amount
            expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}
    metrics:
      - name: revenue
        expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(sales.amount)}]}
"""
    engine = Engine(model_text=model)
    query = {"metrics": ["revenue"], "group_by": ["sales.day:month"]}
    calls: list[int] = []
    real = dosi.execute.rows.arrow_rows

    def counting(table: pa.Table, cancellation: Any = None) -> list[dict[str, Any]]:
        calls.append(table.num_rows)
        return real(table, cancellation)

    monkeypatch.setattr(dosi.engine, "arrow_rows", counting)
    table = engine.execute_arrow(query, db_path=str(db))
    assert calls == []
    assert isinstance(table, pa.Table) and table.num_rows == 2
    assert table.schema.field("revenue").metadata[b"dosi.metric"] == b"revenue"
    res = engine.execute(query, db_path=str(db))
    assert calls == [2]
    assert res["rows"] == per_value_rows(res.arrow)
    want = {
        "2024-01-01": sum(i * 1.5 for i in range(200) if i % 40 < 31),
        "2024-02-01": sum(i * 1.5 for i in range(200) if i % 40 >= 31),
    }
    got = {r[c]: r["revenue"] for r in res["rows"] for c in r if c != "revenue"}
    assert {str(k)[:10]: v for k, v in got.items()} == want
    engine.close()
