"""ClickHouse `cume_dist` is version-gated (WIN-RNK-10): servers before 25.11 lack the window
function, so without a version fact the rank metric is `dialect_unsupported_window_function`,
a structured error before any SQL runs; a version fact (`clickhouse@<version>`, a connection's
`server_version`, or the release chDB embeds) lifts the gate on servers that have it."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

import dosi
from dosi.errors import QueryError
from dosi.sql.dialects import get_dialect

MODEL = """
version: 0.2.0.dev0
semantic_model:
  - name: gate
    datasets:
      - name: orders
        source: main.orders
        primary_key: [order_id]
        fields:
          - {name: order_id, expression: {dialects: [{dialect: ANSI_SQL, expression: order_id}]}}
          - name: order_date
            expression: {dialects: [{dialect: ANSI_SQL, expression: order_date}]}
            datatype: Date
          - {name: amount, expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}}
    metrics:
      - name: revenue
        expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
      - name: revenue_cume_dist
        expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
        custom_extensions:
          - vendor_name: DATUS
            data: '{"v": "1.3", "window": {"rank": {"function": "cume_dist"}}}'
      - name: revenue_rank
        expression: {dialects: [{dialect: ANSI_SQL, expression: SUM(orders.amount)}]}
        custom_extensions:
          - vendor_name: DATUS
            data: '{"v": "1.3", "window": {"rank": {"function": "rank"}}}'
"""
QUERY = {"metrics": ["revenue_cume_dist"], "group_by": [{"field": "metric_time", "grain": "month"}]}
# monthly revenue with a tie (March = April) and a gap (no February)
ROWS = [
    (1, "2025-01-05", 100),
    (2, "2025-01-20", 50),
    (3, "2025-03-02", 90),
    (4, "2025-04-11", 90),
    (5, "2025-05-30", 10),
]


@pytest.fixture(scope="module")
def engine() -> dosi.Engine:
    return dosi.Engine(model_text=MODEL)


def test_cume_dist_without_a_version_is_gated(engine: dosi.Engine) -> None:
    """WIN-RNK-10: no version fact, no cume_dist: a structured error naming the metric."""
    with pytest.raises(QueryError) as err:
        engine.compile(QUERY, dialect="clickhouse")
    assert err.value.code == "dialect_unsupported_window_function"
    assert err.value.metrics == ["revenue_cume_dist"]


@pytest.mark.parametrize("version", ["24.8.14", "25.3", "25.10.2.1"])
def test_servers_before_25_11_keep_the_gate(engine: dosi.Engine, version: str) -> None:
    """WIN-RNK-10: a server that predates cume_dist is still refused."""
    with pytest.raises(QueryError) as err:
        engine.compile(QUERY, dialect=f"clickhouse@{version}")
    assert err.value.code == "dialect_unsupported_window_function"


@pytest.mark.parametrize("version", ["25.11", "25.12.1", "26.9.2.1"])
def test_a_version_fact_lifts_the_gate(engine: dosi.Engine, version: str) -> None:
    """WIN-RNK-10: a server that has cume_dist gets it, in ClickHouse's spelling."""
    out = engine.compile(QUERY, dialect=f"clickhouse@{version}")
    assert "cume_dist() OVER" in out["sql"]
    assert out["dialect"] == "clickhouse"


def test_other_rank_functions_need_no_version(engine: dosi.Engine) -> None:
    sql = engine.compile({**QUERY, "metrics": ["revenue_rank"]}, dialect="clickhouse")["sql"]
    assert "RANK() OVER" in sql.upper()


@pytest.mark.parametrize("name", ["clickhouse@latest", "clickhouse@25", "clickhouse@25.x"])
def test_a_malformed_version_is_an_unknown_dialect(engine: dosi.Engine, name: str) -> None:
    with pytest.raises(QueryError) as err:
        engine.compile(QUERY, dialect=name)
    assert err.value.code == "unknown_dialect"
    assert err.value.hint


def test_version_facts_are_per_dialect() -> None:
    assert not get_dialect("clickhouse").supports_window_function("cume_dist")
    assert get_dialect("clickhouse@25.11").supports_window_function("cume_dist")
    # a version fact never re-gates a dialect that has the function
    assert get_dialect("postgres@9.6").supports_window_function("cume_dist")
    assert get_dialect("chdb@25.11").key == "clickhouse"


def test_server_version_option_keeps_an_old_server_gated() -> None:
    """The gate answers before any connection is opened (the server here does not exist)."""
    eng = dosi.Engine(
        model_text=MODEL,
        connections={
            "old": {
                "type": "clickhouse",
                "uri": "clickhouse://127.0.0.1:9/",
                "server_version": "24.8",
            }
        },
    )
    with pytest.raises(QueryError) as err:
        eng.execute(QUERY, connection="old")
    assert err.value.code == "dialect_unsupported_window_function"


def _cume_dist_desc(values: dict[str, float]) -> dict[str, float]:
    """CUME_DIST() OVER (ORDER BY v DESC): rows with v >= the row's v, over all rows."""
    n = len(values)
    return {k: sum(1 for w in values.values() if w >= v) / n for k, v in values.items()}


@pytest.mark.skipif(importlib.util.find_spec("chdb") is None, reason="chdb is not installed")
def test_chdb_runs_cume_dist_with_its_embedded_version(tmp_path: Any) -> None:
    """chDB's release is known (chdb.engine_version): the gate lifts when it has cume_dist,
    and the values equal the hand computation (ties share a value, the gap month is absent)."""
    import chdb
    import chdb.session

    version = tuple(int(p) for p in str(chdb.engine_version).split(".")[:2])
    session = chdb.session.Session(str(tmp_path / "ch"))
    try:
        session.query("CREATE DATABASE IF NOT EXISTS main")
        session.query(
            "CREATE TABLE main.orders (order_id Int64, order_date Date, amount Int64) "
            "ENGINE = Memory"
        )
        values = ", ".join(f"({i}, '{d}', {a})" for i, d, a in ROWS)
        session.query(f"INSERT INTO main.orders VALUES {values}")
        eng = dosi.Engine(model_text=MODEL, connections={"ch": {"type": "chdb", "client": session}})
        if version < (25, 11):
            with pytest.raises(QueryError) as err:
                eng.execute(QUERY, connection="ch")
            assert err.value.code == "dialect_unsupported_window_function"
            return
        res = eng.execute(QUERY, connection="ch")
        got = {str(r["metric_time__month"])[:10]: r["revenue_cume_dist"] for r in res["rows"]}
        monthly = {"2025-01-01": 150.0, "2025-03-01": 90.0, "2025-04-01": 90.0, "2025-05-01": 10.0}
        want = _cume_dist_desc(monthly)
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == pytest.approx(v)
    finally:
        session.close()
