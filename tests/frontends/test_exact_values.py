"""Exact values on every surface (issue 21 item 1): DECIMAL(38, s) and BIGINT values at the edge
(38 digits, scale 10 and beyond, negative, digits no double holds, integers beyond 2**53) come
back digit for digit from Python rows, `QueryResult.to_json`, Arrow, pandas (`exact=True`),
polars, the CLI (json, csv, table, parquet), REST (JSON, CSV, Arrow) and MCP.

Expected values are the Python `Decimal` / `int` values the test writes into DuckDB itself;
nothing expected comes from dosi. The JSON rule (docs: results, "Exact values"): an integer is
a JSON number, a decimal a number where a standard reader's double gives it back, else a string
of its digits. Requirement IDs: SURF-PY-04, SURF-ARROW-01.
"""

from __future__ import annotations

import asyncio
import csv
import decimal
import io
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from enginekit import dataset, field, make_db, metric, model_doc, to_yaml
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from dosi import Engine
from dosi.frontends.cli import cli
from dosi.frontends.mcp.server import build_server
from dosi.frontends.rest.app import create_app

D = decimal.Decimal
SCALES = (0, 2, 10, 20, 37)
DEC_COLS = [f"d{s}" for s in SCALES]
METRICS = [f"sum_d{s}" for s in SCALES] + ["max_b", "sum_b"]
BIGINT = (-(2**63), 2**63 - 1)


def _model_yaml() -> str:
    fields: list[Any] = [field("id", datatype="Integer"), field("b", datatype="Integer")]
    fields += [field(c, datatype="Decimal") for c in DEC_COLS]
    metrics = [metric(f"sum_{c}", f"SUM(ledger.{c})") for c in DEC_COLS]
    metrics += [metric("max_b", "MAX(ledger.b)"), metric("sum_b", "SUM(ledger.b)")]
    return to_yaml(model_doc([dataset("ledger", fields, primary_key=["id"])], metrics=metrics))


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("exact") / "model.yaml"
    p.write_text(_model_yaml(), encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def engine(model_path: Path) -> Iterator[Engine]:
    e = Engine(model_path=model_path)
    yield e
    e.close()


Row = dict[str, Any]  # {"id": int, "d0": Decimal, ..., "b": int}


def _build(path: Path, rows: list[Row]) -> Path:
    cols = ", ".join(f"{c} DECIMAL(38, {s})" for c, s in zip(DEC_COLS, SCALES, strict=True))
    values = []
    for r in rows:
        decs = ", ".join(
            f"CAST('{r[c]}' AS DECIMAL(38, {s}))" for c, s in zip(DEC_COLS, SCALES, strict=True)
        )
        values.append(f"({r['id']}, {r['b']}, {decs})")
    return make_db(
        path,
        [
            f"CREATE TABLE ledger (id BIGINT, b BIGINT, {cols})",
            f"INSERT INTO ledger VALUES {', '.join(values)}",
        ],
    )


def _expected(r: Row) -> dict[str, Any]:
    """The value each metric must show for a one-row group: the row's own digits."""
    out: dict[str, Any] = {"id": r["id"]}
    for c, s in zip(DEC_COLS, SCALES, strict=True):
        out[f"sum_{c}"] = int(r[c]) if s == 0 else r[c]
    out["max_b"] = r["b"]
    out["sum_b"] = r["b"]
    return out


def _from_json(v: Any) -> Any:
    """A JSON value read back exactly: ints, a float's shortest digits, a string's digits."""
    assert not isinstance(v, bool)
    if isinstance(v, float):
        return D(repr(v))
    if isinstance(v, str):
        return D(v)
    return v


def _text(v: Any) -> str:
    return str(v) if isinstance(v, int) else format(v, "f")


def _check_json_rows(rows: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert len(rows) == len(want)
    for got, exp in zip(rows, want, strict=True):
        for k, e in exp.items():
            v = got[k]
            if isinstance(e, int):
                assert type(v) is int and v == e, (k, v, e)  # integers stay numbers, exact
            else:
                assert _from_json(v) == e, (k, v, e)
                # the one rule: a number exactly when a double reads the value back
                assert isinstance(v, float) == (D(repr(float(e))) == e), (k, v, e)


def _check_text_rows(rows: list[dict[str, str]], want: list[dict[str, Any]]) -> None:
    assert len(rows) == len(want)
    for got, exp in zip(rows, want, strict=True):
        for k, e in exp.items():
            assert got[k] == _text(e), (k, got[k], e)


QUERY = {"metrics": METRICS, "group_by": ["ledger.id"], "order_by": [{"key": "id"}]}
COLUMNS = ["id", *METRICS]


def _check_python(engine: Engine, db: Path, want: list[dict[str, Any]]) -> None:
    res = engine.execute(QUERY, db_path=db)
    assert res["columns"] == COLUMNS
    for got, exp in zip(res["rows"], want, strict=True):
        for k, e in exp.items():
            assert got[k] == e and type(got[k]) is type(e), (k, got[k], e)
    _check_json_rows(json.loads(res.to_json())["rows"], want)
    table = res.to_arrow()
    for c, s in zip(DEC_COLS, SCALES, strict=True):
        assert table.schema.field(f"sum_{c}").type == pa.decimal128(38, s)
        assert [D(x) for x in table.column(f"sum_{c}").to_pylist()] == [
            D(w[f"sum_{c}"]) for w in want
        ]
    assert table.column("max_b").type == pa.int64()
    assert table.column("max_b").to_pylist() == [w["max_b"] for w in want]
    exact = res.to_pandas(exact=True)
    plain = res.to_pandas()
    polars = res.to_polars()
    for k in METRICS:
        assert [D(x) if not isinstance(x, int) else x for x in exact[k]] == [w[k] for w in want]
        assert plain[k].dtype.kind in "if", (k, plain[k].dtype)  # numeric for analysis code
        assert [D(x) if not isinstance(x, int) else x for x in polars[k].to_list()] == [
            w[k] for w in want
        ]
    assert plain["max_b"].tolist() == [w["max_b"] for w in want]  # int64, exact


def _check_cli(model: Path, db: Path, want: list[dict[str, Any]], tmp: Path) -> None:
    runner = CliRunner()
    base = ["query", "-m", str(model), "--db", str(db), "-M", ",".join(METRICS)]
    base += ["-g", "ledger.id", "--order-by", "id"]

    def run(*extra: str) -> str:
        r = runner.invoke(cli, [*base, *extra], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return r.stdout

    _check_json_rows(json.loads(run("--format", "json"))["rows"], want)
    _check_text_rows(list(csv.DictReader(io.StringIO(run("--format", "csv")))), want)
    lines = run("--format", "table").splitlines()
    header = [h.strip() for h in lines[0].split(" | ")]
    table_rows = [
        dict(zip(header, (x.strip() for x in ln.split(" | ")), strict=True))
        for ln in lines[2 : 2 + len(want)]
    ]
    _check_text_rows(table_rows, want)
    out = tmp / "r.parquet"
    run("--format", "parquet", "--output", str(out))
    pt = pq.read_table(out)
    for k in METRICS:
        got = [x if isinstance(x, int) else D(x) for x in pt.column(k).to_pylist()]
        assert got == [w[k] if isinstance(w[k], int) else D(w[k]) for w in want], k


def _check_rest(model: Path, db: Path, want: list[dict[str, Any]]) -> None:
    with TestClient(create_app(model, db_path=str(db))) as c:
        r = c.post("/v1/query", json=QUERY)
        assert r.status_code == 200, r.text
        _check_json_rows(r.json()["rows"], want)
        r = c.post("/v1/query", json=QUERY, headers={"Accept": "text/csv"})
        _check_text_rows(list(csv.DictReader(io.StringIO(r.text))), want)
        r = c.post(
            "/v1/query", json=QUERY, headers={"Accept": "application/vnd.apache.arrow.stream"}
        )
        table = pa.ipc.open_stream(r.content).read_all()
        assert table.column("sum_d37").to_pylist() == [w["sum_d37"] for w in want]


def _check_mcp(model: Path, db: Path, want: list[dict[str, Any]]) -> None:
    async def main() -> None:
        async with Client(build_server(model, db_path=str(db))) as client:
            r = await client.call_tool("query", {"query": QUERY})
            assert not r.is_error, r.content
            _check_json_rows(json.loads(r.content[0].text)["rows"], want)
            assert r.structured_content is not None
            _check_json_rows(r.structured_content["rows"], want)

    asyncio.run(main())


def _all_surfaces(engine: Engine, model: Path, rows: list[Row]) -> None:
    want = [_expected(r) for r in sorted(rows, key=lambda r: r["id"])]
    with tempfile.TemporaryDirectory() as d:
        db = _build(Path(d) / "ledger.duckdb", rows)
        _check_python(engine, db, want)
        _check_cli(model, db, want, Path(d))
        _check_rest(model, db, want)
        _check_mcp(model, db, want)


_WIDE = decimal.Context(prec=60)


def _row(i: int, b: int, **decs: str) -> Row:
    r: Row = {"id": i, "b": b}
    for c, s in zip(DEC_COLS, SCALES, strict=True):
        r[c] = D(decs.get(c, "0")).quantize(D(1).scaleb(-s), context=_WIDE)
    return r


EDGE_ROWS = [
    _row(  # 38 digits at every scale, the largest values the types hold
        1,
        2**63 - 1,
        d0="9" * 38,
        d2="9" * 36 + ".99",
        d10="9" * 28 + "." + "9" * 10,
        d20="9" * 18 + "." + "9" * 20,
        d37="9." + "9" * 37,
    ),
    _row(  # the same, negative
        2,
        -(2**63),
        d0="-" + "9" * 38,
        d2="-" + "9" * 36 + ".99",
        d10="-" + "9" * 28 + "." + "9" * 10,
        d20="-" + "9" * 18 + "." + "9" * 20,
        d37="-9." + "9" * 37,
    ),
    _row(  # money no double holds; 2**53 + 1; the smallest step of each scale
        3,
        2**53 + 1,
        d0=str(2**53 + 1),
        d2="12345678901234567.89",
        d10="0.0000000001",
        d20="-0.00000000000000000001",
        d37="0." + "0" * 36 + "1",
    ),
    _row(4, 0, d2="0.10", d10="2.5", d20="1.01", d37="0.1"),  # values a double reads back
    _row(5, -1),  # zeros at every scale
]


def test_edge_decimals_and_bigints_on_every_surface(engine: Engine, model_path: Path) -> None:
    """38 digits, scale 10 / 20 / 37, negative, beyond float precision, 2**53 + 1, BIGINT
    bounds: exact on every surface."""
    _all_surfaces(engine, model_path, EDGE_ROWS)


def _decimal_at(scale: int) -> st.SearchStrategy[D]:
    # built from text: exact whatever the context precision (arithmetic would round to 28)
    return st.integers(-(10**38) + 1, 10**38 - 1).map(lambda i: D(f"{i}E-{scale}"))


@st.composite
def _rows(draw: Callable[..., Any]) -> list[Row]:
    n = draw(st.integers(1, 4))
    out = []
    for i in range(n):
        r: Row = {"id": i + 1, "b": draw(st.integers(*BIGINT))}
        for c, s in zip(DEC_COLS, SCALES, strict=True):
            r[c] = draw(_decimal_at(s))
        out.append(r)
    return out


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=_rows())
def test_random_decimal38_and_bigint_round_trip_every_format(
    engine: Engine, model_path: Path, rows: list[Row]
) -> None:
    """Property: random DECIMAL(38, s) and BIGINT values survive every output format."""
    _all_surfaces(engine, model_path, rows)


def test_unsigned_and_hugeint_with_nulls_stay_exact(tmp_path: Path) -> None:
    """A UBIGINT above 2**63 in a group beside a NULL one is pandas' nullable `UInt64` (it
    failed to convert as `Int64`); a SUM of BIGINTs beyond 2**63 (DuckDB's HUGEINT) keeps every
    digit in rows, JSON and CSV. Expected values are the ones written into DuckDB."""
    fields = [field("id", datatype="Integer"), field("g", datatype="String")]
    fields += [field("b", datatype="Integer"), field("u", datatype="Integer")]
    doc = model_doc(
        [dataset("t", fields, primary_key=["id"])],
        metrics=[metric("sum_b", "SUM(t.b)"), metric("max_u", "MAX(t.u)")],
    )
    top = 2**64 - 1
    db = make_db(
        tmp_path / "u.duckdb",
        [
            "CREATE TABLE t (id BIGINT, g VARCHAR, b BIGINT, u UBIGINT)",
            f"INSERT INTO t VALUES (1, 'a', {2**63 - 1}, {top}), (2, 'a', {2**63 - 1}, 1), "
            "(3, 'b', NULL, NULL)",
        ],
    )
    e = Engine(model_text=to_yaml(doc))
    res = e.execute(
        {"metrics": ["sum_b", "max_u"], "group_by": ["t.g"], "order_by": ["g"]}, db_path=db
    )
    want = [("a", 2**64 - 2, top), ("b", None, None)]
    assert [(r["g"], r["sum_b"], r["max_u"]) for r in res["rows"]] == want
    assert [(r["g"], r["sum_b"], r["max_u"]) for r in json.loads(res.to_json())["rows"]] == want
    frame = res.to_pandas()
    assert str(frame["max_u"].dtype) == "UInt64"
    assert frame["max_u"][0] == top and frame["max_u"].isna().tolist() == [False, True]
    assert res.to_pandas(exact=True)["sum_b"][0] == 2**64 - 2
    e.close()
