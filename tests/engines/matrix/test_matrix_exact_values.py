"""Exact values on every engine of the conformance suite (issue 21 items 1 and 8): DECIMAL(38, s)
sums whose digits no double holds and BIGINT sums at 2**63 - 1 come back digit for digit in
Python rows (`decimal.Decimal`, `int`), in `QueryResult.to_json` (numbers where a double gives
them back, strings of their digits otherwise) and as Arrow decimals, on chDB, DataFusion, Spark,
PostgreSQL and MariaDB. SQLite has no decimal type (it stores REAL), so there only the BIGINT
values are checked exact. The rest of the matrix compares decimals as floats; this module is
where a lossy engine path would show.

Expected values are the Decimal / int sums written by hand below from the rows this module
loads itself; nothing expected comes from dosi. Requirement IDs: SURF-PY-04, SURF-ARROW-01.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from enginekit import dataset, field, metric, model_doc, to_yaml

import dosi

D = decimal.Decimal
TABLE = "x_exact_ledger"
#: (id, grp, b BIGINT, d2 DECIMAL(38, 2), d10 DECIMAL(38, 10))
ROWS: list[tuple[int, str, int, D, D]] = [
    (1, "a", 2**62, D("12345678901234567.89"), D("1234567890123456789012345678.0123456789")),
    (2, "a", 2**62 - 1, D("0.01"), D("-0.0000000001")),
    (3, "b", -(2**62), D("-99999999999999999999999999999999999.99"), D("0.1000000001")),
    (4, "b", -(2**62), D("0.03"), D("0.2000000002")),
]
#: grp -> the hand-added sums (and the MAX of b)
EXPECTED: dict[str, dict[str, Any]] = {
    "a": {
        "sum_d2": D("12345678901234567.90"),
        "sum_d10": D("1234567890123456789012345678.0123456788"),
        "sum_b": 2**63 - 1,
        "max_b": 2**62,
    },
    "b": {
        "sum_d2": D("-99999999999999999999999999999999999.96"),
        "sum_d10": D("0.3000000003"),
        "sum_b": -(2**63),
        "max_b": -(2**62),
    },
}
DECIMALS = ("sum_d2", "sum_d10")


def _model_text() -> str:
    fields: list[Any] = [
        field("id", datatype="Integer"),
        field("grp", datatype="String"),
        field("b", datatype="Integer"),
        field("d2", datatype="Decimal"),
        field("d10", datatype="Decimal"),
    ]
    metrics = [
        metric("sum_d2", f"SUM({TABLE}.d2)"),
        metric("sum_d10", f"SUM({TABLE}.d10)"),
        metric("sum_b", f"SUM({TABLE}.b)"),
        metric("max_b", f"MAX({TABLE}.b)"),
    ]
    ds = dataset(TABLE, fields, source=f"main.{TABLE}", primary_key=["id"])
    return to_yaml(model_doc([ds], metrics=metrics))


def _literal_rows() -> str:
    return ", ".join(
        f"({i}, '{g}', {b}, CAST('{d2}' AS DECIMAL(38, 2)), CAST('{d10}' AS DECIMAL(38, 10)))"
        for i, g, b, d2, d10 in ROWS
    )


def _load(kind: str, client: Any) -> None:
    """The ledger into the engine's `main` schema (replaced), each engine through its own DDL."""
    ddl = "(id INT, grp VARCHAR(8), b BIGINT, d2 DECIMAL(38, 2), d10 DECIMAL(38, 10))"
    if kind == "datafusion":
        table = pa.table(
            {
                "id": pa.array([r[0] for r in ROWS], pa.int32()),
                "grp": [r[1] for r in ROWS],
                "b": pa.array([r[2] for r in ROWS], pa.int64()),
                "d2": pa.array([r[3] for r in ROWS], pa.decimal128(38, 2)),
                "d10": pa.array([r[4] for r in ROWS], pa.decimal128(38, 10)),
            }
        )
        if client.table_exist(f"main.{TABLE}"):
            client.deregister_table(f"main.{TABLE}")
        client.register_record_batches(f"main.{TABLE}", [table.to_batches()])
    elif kind == "chdb":
        client.query(f"DROP TABLE IF EXISTS main.{TABLE}")
        client.query(
            f"CREATE TABLE main.{TABLE} (id Int32, grp String, b Int64, d2 Decimal(38, 2), "
            "d10 Decimal(38, 10)) ENGINE = MergeTree ORDER BY id"
        )
        client.query(f"INSERT INTO main.{TABLE} VALUES {_literal_rows()}")
    elif kind == "spark":
        client.sql(f"DROP TABLE IF EXISTS main.{TABLE}")
        client.sql(f"CREATE TABLE main.{TABLE} {ddl.replace('VARCHAR(8)', 'STRING')} USING parquet")
        client.sql(f"INSERT INTO main.{TABLE} VALUES {_literal_rows()}")
    elif kind == "sqlite":
        client.execute(f"DROP TABLE IF EXISTS main.{TABLE}")
        client.execute(f"CREATE TABLE main.{TABLE} {ddl}")
        client.executemany(
            f"INSERT INTO main.{TABLE} VALUES (?, ?, ?, ?, ?)",
            [(i, g, b, float(d2), float(d10)) for i, g, b, d2, d10 in ROWS],
        )
        client.commit()
    else:  # postgres (psycopg, autocommit) and mariadb (pymysql)
        cur = client.cursor()
        cur.execute(f"DROP TABLE IF EXISTS main.{TABLE}")
        cur.execute(f"CREATE TABLE main.{TABLE} {ddl}")
        cur.executemany(f"INSERT INTO main.{TABLE} VALUES (%s, %s, %s, %s, %s)", ROWS)
        cur.close()
        if kind == "mariadb":
            client.commit()


@pytest.fixture(scope="module")
def exact_target(loaded: tuple[str, Any]) -> Iterator[tuple[str, dosi.Engine]]:
    kind, client = loaded
    _load(kind, client)
    eng = dosi.Engine(
        model_text=_model_text(), connections={kind: {"type": kind, "client": client}}
    )
    try:
        yield kind, eng
    finally:
        eng.close()


def _checked(kind: str) -> tuple[str, ...]:
    """The metrics held exact on this engine (SQLite has no DECIMAL storage)."""
    names = tuple(EXPECTED["a"])
    return tuple(n for n in names if n not in DECIMALS) if kind == "sqlite" else names


def test_rows_and_json_are_exact(exact_target: tuple[str, dosi.Engine]) -> None:
    """Python rows hold Decimal / int equal to the hand sums; JSON gives the same digits back."""
    kind, eng = exact_target
    res = eng.execute({"metrics": list(EXPECTED["a"]), "group_by": [f"{TABLE}.grp"]})
    rows = {r["grp"]: r for r in res["rows"]}
    assert sorted(rows) == ["a", "b"], kind
    doc = json.loads(res.to_json(), parse_float=D)
    by_grp = {r["grp"]: r for r in doc["rows"]}
    for grp, want in EXPECTED.items():
        for name in _checked(kind):
            got = rows[grp][name]
            assert type(got) is type(want[name]), (kind, grp, name, got)
            assert got == want[name], (kind, grp, name, got)
            encoded = by_grp[grp][name]
            assert not isinstance(encoded, float), (kind, name, encoded)
            assert D(str(encoded)) == want[name], (kind, grp, name, encoded)


def test_arrow_keeps_decimal_type(exact_target: tuple[str, dosi.Engine]) -> None:
    """The Arrow answer of a DECIMAL sum is an Arrow decimal with the exact values."""
    kind, eng = exact_target
    if kind == "sqlite":
        pytest.skip("sqlite: no DECIMAL storage (values are REAL); BIGINT checked above")
    table = eng.execute_arrow({"metrics": list(DECIMALS), "group_by": [f"{TABLE}.grp"]})
    for name in DECIMALS:
        col = table.column(name)
        assert pa.types.is_decimal(col.type), (kind, name, col.type)
    got = {
        g: (a, b)
        for g, a, b in zip(
            table.column("grp").to_pylist(),
            table.column("sum_d2").to_pylist(),
            table.column("sum_d10").to_pylist(),
            strict=True,
        )
    }
    for grp, want in EXPECTED.items():
        assert got[grp] == (want["sum_d2"], want["sum_d10"]), (kind, grp)
