"""D-PARAM (datus-extensions §3, CHECKLIST §13): declarations, window slots, binding, list
expansion, column names, `outputs` on every surface, the catalog's param_schema.

Expected numbers come from hand-written DuckDB SQL over the same small table (gaps: no sales in
May; NULL amounts; ties), never from the engine under test.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from dosi import Engine
from dosi.errors import DiagnosticSink, ModelError, QueryError
from dosi.ext.params import read_params, typed_value
from dosi.frontends.cli import cli

HEAD = """
version: 0.2.0.dev0
semantic_model:
  - name: t
    datasets:
      - name: sales
        source: main.sales
        primary_key: [sale_id]
        fields:
          - name: sale_id
            expression: {dialects: [{dialect: ANSI_SQL, expression: sale_id}]}
          - name: sale_date
            expression: {dialects: [{dialect: ANSI_SQL, expression: sale_date}]}
            datatype: Date
            dimension: {is_time: true}
          - name: region
            expression: {dialects: [{dialect: ANSI_SQL, expression: region}]}
          - name: amount
            expression: {dialects: [{dialect: ANSI_SQL, expression: amount}]}
    metrics:
      - name: revenue
        expression: {dialects: [{dialect: ANSI_SQL, expression: "SUM(sales.amount)"}]}
"""


def metric(name: str, payload: dict[str, Any], expr: str = "SUM(sales.amount)") -> str:
    data = json.dumps(json.dumps({"v": "1.5", **payload}))
    return f"""      - name: {name}
        expression: {{dialects: [{{dialect: ANSI_SQL, expression: "{expr}"}}]}}
        custom_extensions:
          - vendor_name: DATUS
            data: {data}
"""


N = {"name": "n", "type": "int", "default": 3, "min": 1, "max": 12}
METRICS = (
    metric(
        "moving_avg",
        {
            "params": [{**N, "description": "trailing window width"}],
            "window": {"type": "rolling", "function": "avg", "periods": {"param": "n"}},
        },
    )
    + metric(
        "growth",
        {
            "params": [{"name": "k", "type": "int", "default": 1, "allowed": [1, 2, 12]}],
            "window": {
                "offset": {"count": {"param": "k"}, "granularity": "month"},
                "calculation": "delta",
            },
        },
    )
    + metric(
        "running",
        {
            "params": [{"name": "p", "type": "int", "default": 0, "min": 0, "max": 40}],
            "window": {"frame": {"function": "sum", "preceding": {"param": "p"}}},
        },
    )
    + metric(
        "bucket",
        {
            "params": [{"name": "k", "type": "int", "default": 2, "min": 1}],
            "window": {"rank": {"function": "ntile", "buckets": {"param": "k"}}},
        },
    )
    + metric(
        "nth",
        {
            "params": [{"name": "k", "type": "int", "default": 1, "min": 1, "max": 6}],
            "window": {"value": {"function": "nth_value", "n": {"param": "k"}}},
        },
    )
    + metric(
        "two",
        {
            "params": [
                {"name": "a", "type": "int", "default": 1, "min": 1, "max": 40},
                {"name": "b", "type": "int", "default": 0, "min": 0, "max": 40},
            ],
            "window": {"frame": {"function": "sum", "preceding": {"param": "b"}}},
        },
    )
)


def _rows() -> list[tuple[Any, ...]]:
    rows, i = [], 0
    for m in range(1, 13):
        if m == 5:  # a gap month
            continue
        for r, k in (("east", 1), ("west", 2), ("north", 3)):
            if r == "north" and m % 3 == 0:
                continue
            i += 1
            rows.append((i, dt.date(2024, m, 3), r, float(m * 10 * k + i)))
            i += 1
            amount = None if (m == 7 and r == "east") else float(m + k)
            rows.append((i, dt.date(2024, m, 17), r, amount))
    return rows


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("params") / "t.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales(sale_id INT, sale_date DATE, region VARCHAR, amount DOUBLE)")
    con.executemany("INSERT INTO sales VALUES (?,?,?,?)", _rows())
    con.close()
    return path


@pytest.fixture(scope="module")
def eng() -> Engine:
    return Engine(model_text=HEAD + METRICS)


def sql_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


MONTHLY = (
    "WITH b AS (SELECT date_trunc('month', sale_date)::DATE AS m, SUM(amount) AS v "
    "FROM sales GROUP BY 1) "
)


def approx(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(pytest.approx(v) if isinstance(v, float) else v for v in r) for r in rows]


def query(eng: Engine, db: Path, q: dict[str, Any]) -> Any:
    return eng.execute(q, db_path=db)


def values(res: Any) -> list[tuple[Any, ...]]:
    """The result rows as Python values (dates as dates), from its Arrow table."""
    cols = [res.arrow.column(c).to_pylist() for c in res["columns"]]
    return list(zip(*cols, strict=True))


# -- declarations -------------------------------------------------------------------------------


def model_issues(extra: str) -> list[str]:
    with pytest.raises(ModelError) as info:
        Engine(model_text=HEAD + extra)
    return [i.code for i in info.value.issues]


M = ["metric_time:month"]
ROLL = {"type": "rolling", "function": "avg", "periods": {"param": "n"}}


@pytest.mark.parametrize(
    ("params", "window"),
    [
        ([{**N, "name": "N"}], ROLL),  # PARAM-DEC-02 name pattern
        ([N, N], ROLL),  # PARAM-DEC-02 unique
        ([{**N, "type": "bool"}], ROLL),  # PARAM-DEC-03 type
        ([{"name": "n", "type": "int", "min": 1}], ROLL),  # PARAM-DEC-03 default required
        ([{"name": "n", "type": "int", "default": 2, "allowed": [1, 2], "min": 1}], ROLL),  # 04
        ([{"name": "n", "type": "string", "default": "a", "allowed": ["a"], "min": 1}], ROLL),
        ([{"name": "n", "type": "int", "default": 0, "min": 1}], ROLL),  # PARAM-DEC-07
        ([{"name": "n", "type": "int", "default": 4, "allowed": [1, 2]}], ROLL),  # PARAM-DEC-07
        ([{"name": "n", "type": "int", "default": 3, "min": 5, "max": 2}], ROLL),
        ([{"name": "n", "type": "float", "default": 3, "min": 1}], ROLL),  # PARAM-SLOT-07 type
        ([{"name": "n", "type": "int", "default": 3, "min": 0}], ROLL),  # PARAM-SLOT-07 bound
        ([{"name": "n", "type": "int", "default": 3}], ROLL),  # window slot needs a lower bound
        ([{"name": "n", "type": "int", "default": 3, "allowed": [0, 3]}], ROLL),
        ([N], {**ROLL, "periods": {"param": "q"}}),  # an undeclared param
        ([N], {"type": "cumulative", "function": "sum", "reset": {"param": "n"}}),  # no slot
        ([N], {"type": "pop", "offset": {"param": "n"}}),  # the "1 month" sugar takes none
        ([N], {**ROLL, "periods": {"param": "n", "x": 1}}),  # a malformed hole
        ([{**N, "foo": 1}], ROLL),
        ([{"name": "n", "type": "int", "default": 3.0, "min": 1}], ROLL),
        ([{"name": "n", "type": "int", "default": True, "min": 1}], ROLL),
        ([{"name": "n", "type": "int", "default": 3, "allowed": []}], ROLL),
    ],
)
def test_param_dec_invalid_declarations_are_invalid_datus_extension(
    params: Any, window: dict[str, Any]
) -> None:
    """PARAM-DEC-02..07, PARAM-SLOT-07/10: every bad declaration or slot rejects the model."""
    assert "invalid_datus_extension" in model_issues(
        metric("m", {"params": params, "window": window})
    )


def test_param_dec_string_param_needs_allowed() -> None:
    """PARAM-DEC-05: an unbounded string param is any dimension value: rejected."""
    sink = DiagnosticSink()
    read_params({"params": [{"name": "r", "type": "string", "default": "a"}]}, None, sink)
    assert [d.code for d in sink.errors] == ["invalid_datus_extension"]


def test_param_slot_10_bind_marker_in_metric_expression_is_rejected() -> None:
    """PARAM-SLOT-10: `:name` in a metric expression is an error, never a silent literal."""
    extra = metric(
        "m",
        {"params": [N], "window": ROLL},
        expr="SUM(CASE WHEN sales.amount > :n THEN 1 END)",
    )
    assert "invalid_datus_extension" in model_issues(extra)


def test_param_dec_06_08_unbounded_and_unused_warn() -> None:
    """PARAM-DEC-06/08: a domain-less float and an unreferenced param compile, with warnings."""
    extra = metric(
        "m",
        {
            "params": [N, {"name": "t", "type": "float", "default": 1.5}],
            "window": {"type": "rolling", "function": "avg", "periods": 3},
        },
    )
    e = Engine(model_text=HEAD + extra)
    codes = [(w["code"], w["message"].split('"')[1]) for w in e.warnings]
    assert ("datus_param_unused", "n") in codes
    assert ("datus_param_unused", "t") in codes
    assert ("datus_param_unbounded", "t") in codes
    assert ("datus_param_unbounded", "n") not in codes


def test_param_cmp_01_basic_mode_params_are_inert(db: Path) -> None:
    """PARAM-CMP-01: under basic mode the hosts are ignored, so any query-time params are
    unknown_metric_param (and the metric is its plain aggregate)."""
    e = Engine(model_text=HEAD + METRICS, mode="basic")
    with pytest.raises(QueryError) as info:
        e.compile({"metrics": ["moving_avg"], "params": {"n": 6}})
    assert info.value.code == "unknown_metric_param"
    plain = e.execute({"metrics": ["moving_avg", "revenue"]}, db_path=db)["rows"][0]
    assert plain["moving_avg"] == pytest.approx(plain["revenue"])


# -- slots: numbers -----------------------------------------------------------------------------


def test_param_inst_01_default_binding_plans_as_declared(eng: Engine, db: Path) -> None:
    """PARAM-INST-01 / PARAM-BIND-02 / PARAM-OUT-01: unbound (or bound to the default) the
    metric is its default instantiation, under its own name."""
    want = sql_rows(
        db,
        MONTHLY + "SELECT m, AVG(v) OVER (ORDER BY m ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
        "FROM b ORDER BY m",
    )
    for params in ({}, {"n": 3}):
        q = {"metrics": ["moving_avg"], "group_by": ["metric_time:month"], "params": params}
        res = query(eng, db, q)
        assert res["columns"] == ["metric_time__month", "moving_avg"]
        assert values(res) == approx(want)
        assert res["outputs"] == [
            {"column": "moving_avg", "metric": "moving_avg", "params": {"n": 3}}
        ]


def test_param_slot_03_rolling_periods_list(eng: Engine, db: Path) -> None:
    """PARAM-SLOT-03, PARAM-BIND-06, PARAM-OUT-02/05: a list binds one column per value."""
    want = sql_rows(
        db,
        MONTHLY + "SELECT m, AVG(v) OVER (ORDER BY m ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
        "AVG(v) OVER (ORDER BY m ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) FROM b ORDER BY m",
    )
    q = {"metrics": ["moving_avg"], "group_by": ["metric_time:month"], "params": {"n": [2, 6]}}
    res = query(eng, db, q)
    assert res["columns"] == ["metric_time__month", "moving_avg__n_2", "moving_avg__n_6"]
    assert values(res) == approx(want)
    assert [o["params"] for o in res["outputs"]] == [{"n": 2}, {"n": 6}]


def test_param_slot_01_offset_count(eng: Engine, db: Path) -> None:
    """PARAM-SLOT-01: offset.count; a calendar shift (the May gap reads NULL), not LAG."""
    want = sql_rows(
        db,
        MONTHLY + "SELECT c.m, c.v - p.v FROM b c LEFT JOIN b p ON p.m = c.m - INTERVAL 2 MONTH "
        "ORDER BY c.m",
    )
    q = {"metrics": ["growth"], "group_by": ["metric_time:month"], "params": {"k": 2}}
    res = query(eng, db, q)
    assert res["columns"] == ["metric_time__month", "growth__k_2"]
    assert values(res) == approx(want)


def test_param_slot_02_frame_preceding(eng: Engine, db: Path) -> None:
    """PARAM-SLOT-02: frame.preceding accepts 0 (its own minimum)."""
    want = sql_rows(
        db,
        MONTHLY + "SELECT m, v, SUM(v) OVER (ORDER BY m ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) "
        "FROM b ORDER BY m",
    )
    q = {"metrics": ["running"], "group_by": ["metric_time:month"], "params": {"p": [0, 4]}}
    res = query(eng, db, q)
    assert res["columns"] == ["metric_time__month", "running__p_0", "running__p_4"]
    assert values(res) == approx(want)


def test_param_slot_04_05_rank_buckets_and_value_n(eng: Engine, db: Path) -> None:
    """PARAM-SLOT-04/05: ntile buckets and nth_value n."""
    want = sql_rows(
        db,
        "WITH b AS (SELECT region, SUM(amount) AS v FROM sales GROUP BY 1) "
        "SELECT region, NTILE(3) OVER (ORDER BY v DESC) FROM b ORDER BY region",
    )
    q = {"metrics": ["bucket"], "group_by": ["sales.region"], "params": {"k": 3}}
    assert values(query(eng, db, q)) == want
    want = sql_rows(
        db,
        MONTHLY + "SELECT m, NTH_VALUE(v, 2) OVER (ORDER BY m ROWS BETWEEN UNBOUNDED PRECEDING "
        "AND UNBOUNDED FOLLOWING) FROM b ORDER BY m",
    )
    q = {"metrics": ["nth"], "group_by": ["metric_time:month"], "params": {"k": 2}}
    res = query(eng, db, q)
    assert res["columns"] == ["metric_time__month", "nth__k_2"]
    assert values(res) == approx(want)


def test_param_bind_07_cartesian_in_declared_order(eng: Engine) -> None:
    """PARAM-BIND-07 / PARAM-OUT-04: the earlier-declared param is the outer loop; segments join
    with `__`; only bound params are suffixed."""
    out = eng.compile({"metrics": ["two"], "group_by": M, "params": {"b": [0, 1], "a": [1, 2]}})[
        "outputs"
    ]
    assert [o["column"] for o in out] == [
        "two__a_1__b_0",
        "two__a_1__b_1",
        "two__a_2__b_0",
        "two__a_2__b_1",
    ]
    out = eng.compile({"metrics": ["two"], "group_by": M, "params": {"b": 5}})["outputs"]
    assert out == [{"column": "two__b_5", "metric": "two", "params": {"a": 1, "b": 5}}]


def test_param_bind_01_one_binding_applies_to_every_declaring_metric(eng: Engine) -> None:
    """PARAM-BIND-01: `k` binds growth, bucket and nth alike."""
    q = {"metrics": ["growth", "bucket", "revenue"], "group_by": M, "params": {"k": [1, 2]}}
    cols = [o["column"] for o in eng.compile(q)["outputs"]]
    assert cols == ["growth__k_1", "growth__k_2", "bucket__k_1", "bucket__k_2", "revenue"]


# -- binding errors -----------------------------------------------------------------------------


def err(eng: Engine, q: dict[str, Any]) -> QueryError:
    with pytest.raises(QueryError) as info:
        eng.compile(q)
    return info.value


def test_param_bind_03_unknown_param_lists_candidates(eng: Engine) -> None:
    e = err(eng, {"metrics": ["moving_avg"], "params": {"m": 3}})
    assert e.code == "unknown_metric_param"
    assert e.candidates == ["n"]
    e = err(eng, {"metrics": ["revenue"], "params": {"n": 3}})
    assert e.code == "unknown_metric_param"


@pytest.mark.parametrize("value", [13, 0, 7.5, "7", True, [2, 2], [], [3, 40]])
def test_param_bind_04_out_of_domain_with_retry(eng: Engine, value: Any) -> None:
    """PARAM-BIND-04: wrong type or domain is param_out_of_domain, with a resendable retry."""
    q = {"metrics": ["moving_avg"], "group_by": ["metric_time:month"], "params": {"n": value}}
    e = err(eng, q)
    assert e.code == "param_out_of_domain"
    assert e.suggested_retry == {**q, "params": {"n": 3}}
    eng.compile(e.suggested_retry)


def test_param_bind_05_float_accepts_json_integer() -> None:
    """PARAM-BIND-05: the only implicit conversion."""
    assert typed_value("float", 2) == 2.0 and isinstance(typed_value("float", 2), float)
    assert typed_value("int", 2.0) is None
    assert typed_value("int", "2") is None


def test_param_bind_08_at_most_64_columns(eng: Engine) -> None:
    """PARAM-BIND-08: 72 columns are param_expansion_too_large; 64 compile."""
    e = err(eng, {"metrics": ["two"], "params": {"a": list(range(1, 9)), "b": list(range(9))}})
    assert e.code == "param_expansion_too_large"
    ok = {"a": list(range(1, 9)), "b": list(range(8))}
    q = {"metrics": ["two"], "group_by": M, "params": ok}
    assert len(eng.compile(q)["outputs"]) == 64


def test_param_ord_02_03_order_by_metric_name(eng: Engine, db: Path) -> None:
    """PARAM-ORD-02: one column (suffixed or not) sorts by the metric name; PARAM-ORD-03: a list
    spreading it is unknown_order_key with a single-value retry."""
    q = {
        "metrics": ["moving_avg"],
        "group_by": ["metric_time:month"],
        "params": {"n": 6},
        "order_by": [{"key": "moving_avg", "desc": True}],
    }
    got = [r["moving_avg__n_6"] for r in query(eng, db, q)["rows"]]
    assert got == sorted(got, reverse=True)
    e = err(eng, {**q, "params": {"n": [2, 6]}})
    assert e.code == "unknown_order_key"
    assert e.suggested_retry is not None and e.suggested_retry["params"] == {"n": 2}
    assert e.candidates == ['{"n": 2}', '{"n": 6}']
    # PARAM-ORD-01: an engine-generated column name is never a sort key
    e = err(eng, {**q, "order_by": [{"key": "moving_avg__n_6"}]})
    assert e.code == "unknown_order_key"


# -- outputs on every surface -------------------------------------------------------------------


def test_core_q_16_arrow_field_metadata(eng: Engine, db: Path) -> None:
    """SURF-ARROW-01: each metric column carries dosi.metric and dosi.params."""
    q = {
        "metrics": ["revenue", "moving_avg"],
        "group_by": ["metric_time:month"],
        "params": {"n": [2]},
    }
    t = eng.execute_arrow(q, db_path=db)
    md = {f.name: f.metadata for f in t.schema if f.metadata}
    assert md["moving_avg__n_2"][b"dosi.metric"] == b"moving_avg"
    assert json.loads(md["moving_avg__n_2"][b"dosi.params"]) == {"n": 2}
    assert json.loads(md["revenue"][b"dosi.params"]) == {}


def test_surf_cli_06_param_flag_and_json_outputs(tmp_path: Path, db: Path) -> None:
    """SURF-CLI-06: `dosi query --param` binds; the JSON result carries outputs."""
    model = tmp_path / "m.yaml"
    model.write_text(HEAD + METRICS)
    args = ["query", "-m", str(model), "--db", str(db), "-M", "moving_avg"]
    args += ["-g", "metric_time:month", "-p", "n=2", "-p", "n=6", "--format", "json"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [o["column"] for o in out["outputs"]] == ["moving_avg__n_2", "moving_avg__n_6"]


# -- catalog ------------------------------------------------------------------------------------


def test_param_cat_01_02_params_with_slots_and_schema(eng: Engine) -> None:
    """PARAM-CAT-01/02: declarations plus slots; param_schema maps min/max and allowed."""
    m = eng.metric("moving_avg")
    assert m["params"] == [
        {
            "name": "n",
            "type": "int",
            "default": 3,
            "min": 1,
            "max": 12,
            "description": "trailing window width",
            "slots": ["rolling.periods"],
        }
    ]
    one = m["param_schema"]["properties"]["n"]["oneOf"][0]
    assert one["type"] == "integer" and one["minimum"] == 1 and one["maximum"] == 12
    g = eng.metric("growth")["param_schema"]["properties"]["k"]["oneOf"][0]
    assert g["enum"] == [1, 2, 12]
    assert eng.metric("revenue")["params"] is None
    listed = {x["name"]: x["params"] for x in eng.metrics()}
    assert listed["growth"][0]["slots"] == ["offset.count"]


def test_param_attr_01_one_value_per_param_and_echo(eng: Engine, db: Path) -> None:
    """PARAM-ATTR-01: attribution binds one value per param (a list is param_out_of_domain
    with a single-value retry) and echoes the binding in comparison_metadata.params."""
    req = {
        "metric": "moving_avg",
        "dimensions": ["sales.region"],
        "current": {"start": "2024-04-01", "end": "2024-05-01"},
        "baseline": {"start": "2024-03-01", "end": "2024-04-01"},
    }
    with pytest.raises(QueryError) as info:
        eng.attribute({**req, "params": {"n": [2, 6]}}, db_path=db)
    assert info.value.code == "param_out_of_domain"
    assert info.value.suggested_retry == {**req, "params": {"n": 2}}
    out = eng.attribute({**req, "params": {"n": 6}}, db_path=db)
    assert out["comparison_metadata"]["params"] == {"n": 6}
    with pytest.raises(QueryError) as info:
        eng.attribute({**req, "params": {"x": 6}}, db_path=db)
    assert info.value.code == "unknown_metric_param"


def test_param_slot_10_bind_marker_in_where_sql_is_rejected(eng: Engine) -> None:
    """PARAM-SLOT-10 / CORE-Q-09: `:name` in a query's where_sql is an error."""
    with pytest.raises(QueryError) as info:
        eng.compile({"metrics": ["revenue"], "where_sql": "sales.amount > :n"})
    assert info.value.code == "unsupported_filter"
    assert ":n" in info.value.message
    eng.compile({"metrics": ["revenue"], "where_sql": "sales.region = 'a:b'"})
