"""Structured errors and exit codes: 0 ok, 1 internal, 2 query/usage, 3 model, 4 execution."""

from __future__ import annotations

import json

import pytest
from clikit import MINI_MODEL, SHOP_MODEL

from dosi.frontends.cli.epilog import COMMAND_EPILOG, EPILOG

ERROR_KEYS = {"error", "code", "message", "candidates", "hint", "suggested_retry"}


def error_json(result):
    data = json.loads(result.stdout)
    assert set(data) == {"error"}
    assert set(data["error"]) >= ERROR_KEYS
    return data["error"]


def no_traceback(result):
    assert "Traceback" not in result.output
    assert "Traceback" not in result.stderr


# -- exit code 2: bad query -----------------------------------------------------------------------
def test_unknown_metric_text(shop):
    r = shop("query", "-M", "revnue")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "[unknown_metric]" in r.stderr
    assert "unknown metric `revnue`" in r.stderr
    assert "did you mean: revenue" in r.stderr
    assert "hint:" in r.stderr
    assert 'suggested retry: {"metrics": ["revenue"]}' in r.stderr
    no_traceback(r)


def test_unknown_metric_json(shop):
    r = shop("query", "-M", "revnue", "--format", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert err["error"] == "query_error"
    assert err["code"] == "unknown_metric"
    assert err["candidates"][0] == "revenue"
    assert err["suggested_retry"] == {"metrics": ["revenue"]}
    assert r.stderr == ""


@pytest.mark.parametrize("command", ["compile", "explain"])
def test_query_errors_in_compile_and_explain(shop, command):
    r = shop(command, "-M", "revenue", "-g", "orders.chanel", "-f", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert "orders.channel" in err["candidates"]
    t = shop(command, "-M", "revenue", "-g", "orders.chanel")
    assert t.exit_code == 2
    assert "orders.channel" in t.stderr
    no_traceback(t)


def test_invalid_json_query(shop):
    r = shop("query", "--query", "{not json", "-f", "json")
    assert r.exit_code == 2
    assert error_json(r)["code"] == "invalid_query"


def test_unknown_query_key(shop):
    r = shop("query", "--query", '{"metrics": ["revenue"], "group": ["x"]}', "-f", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert err["code"] == "unknown_query_key"
    assert "group_by" in err["candidates"]


# -- exit code 2: bad usage -----------------------------------------------------------------------
def test_missing_model(run):
    r = run("query", "-M", "revenue", "-f", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert err["error"] == "usage_error"
    assert err["code"] == "missing_model"
    assert "DOSI_MODEL" in err["hint"]


def test_missing_query(shop):
    r = shop("query")
    assert r.exit_code == 2
    assert "[missing_query]" in r.stderr
    no_traceback(r)


def test_query_and_flags_conflict(shop):
    r = shop("query", "--query", '{"metrics": ["revenue"]}', "-M", "revenue", "-f", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert err["code"] == "conflicting_options"
    assert "--metric" in err["message"]


def test_time_dimension_needs_a_range(shop):
    r = shop("query", "-M", "revenue", "--time-dimension", "metric_time")
    assert r.exit_code == 2
    assert "--start" in r.stderr


def test_query_file_missing(shop, tmp_path):
    r = shop("query", "--query-file", tmp_path / "nope.json", "-f", "json")
    assert r.exit_code == 2
    assert error_json(r)["code"] == "query_file_not_found"


@pytest.mark.parametrize(
    "args",
    [
        ["query", "--no-such-option"],
        ["query", "-M", "revenue", "--limit", "-1"],
        ["query", "-M", "revenue", "--format", "xml"],
        ["list", "widgets"],
        ["no-such-command"],
    ],
)
def test_click_usage_errors_exit_2(run, args):
    r = run(*args)
    assert r.exit_code == 2
    no_traceback(r)


# -- exit code 3: bad model -----------------------------------------------------------------------
def test_model_file_missing(run, tmp_path):
    r = run("query", "-m", tmp_path / "nope.yaml", "-M", "revenue", "-f", "json")
    assert r.exit_code == 3
    err = error_json(r)
    assert err["error"] == "model_error"
    # issue 8: the code is the reference's stage; the precise code travels per issue
    assert err["code"] == "io"
    assert [i["code"] for i in err["compile_errors"]] == ["model_not_found"]


def test_invalid_model_reports_every_issue(run, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        MINI_MODEL.replace("SUM(orders.amount)", "SUM(orders.amont)").replace(
            "from: orders\n", "from: orderz\n"
        ),
        encoding="utf-8",
    )
    r = run("list", "-m", bad)
    assert r.exit_code == 3
    assert "the model is invalid (2 problems)" in r.stderr
    assert "orders.amount" in r.stderr  # candidate
    assert "(line " in r.stderr
    j = run("compile", "-m", bad, "-M", "revenue", "-f", "json")
    assert j.exit_code == 3
    err = error_json(j)
    assert err["code"] == "invalid_model"  # the relationship's dataset; the metric compiles later
    assert len(err["issues"]) == 2
    assert err["compile_errors"] == err["issues"]
    assert all(isinstance(i.get("line"), int) and i.get("path") for i in err["issues"])


def test_yaml_syntax_error(run, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 0.2.0.dev0\nsemantic_model: [\n", encoding="utf-8")
    r = run("list", "-m", bad, "-f", "json")
    assert r.exit_code == 3
    err = error_json(r)
    assert err["code"] == "parse"
    assert [i["code"] for i in err["issues"]] == ["invalid_yaml"]


# -- exit code 4: execution -----------------------------------------------------------------------
def test_database_missing(run, tmp_path):
    r = run(
        "query", "-m", SHOP_MODEL, "--db", tmp_path / "nope.duckdb", "-M", "revenue", "-f", "json"
    )
    assert r.exit_code == 4
    err = error_json(r)
    assert err["error"] == "execute_error"
    assert err["code"] == "config"


def test_no_database_given(run, monkeypatch):
    """Issue 8 item 6: a query without --db / DOSI_DB / a connection is `no_connection`
    (a usage error naming the flags), not an empty in-memory database's `Table ... does not
    exist`."""
    monkeypatch.delenv("DOSI_DB", raising=False)
    r = run("query", "-m", SHOP_MODEL, "-M", "revenue", "-f", "json")
    assert r.exit_code == 2
    err = error_json(r)
    assert err["code"] == "no_connection"
    for flag in ("--db", "DOSI_DB", "--connections", "--connection"):
        assert flag in err["message"]
    assert "does not exist" not in r.stderr
    no_traceback(r)


def test_unknown_connection(run, tmp_path, shop_db):
    conns = tmp_path / "c.yaml"
    conns.write_text(f"a: {{type: duckdb, uri: {shop_db}}}\n", encoding="utf-8")
    r = run(
        "query",
        "-m",
        SHOP_MODEL,
        "--connections",
        conns,
        "--connection",
        "b",
        "-M",
        "revenue",
        "-f",
        "json",
    )
    assert r.exit_code == 4
    err = error_json(r)
    assert err["code"] == "config"
    assert err["candidates"][0] == "a"


def test_non_duckdb_connection(run, tmp_path):
    agent = tmp_path / "agent.yml"
    agent.write_text("datasources:\n  wh: {type: snowflake, account: x}\n", encoding="utf-8")
    r = run(
        "query",
        "-m",
        SHOP_MODEL,
        "--connections",
        agent,
        "--connection",
        "wh",
        "-M",
        "revenue",
        "-f",
        "json",
    )
    assert r.exit_code == 4
    err = error_json(r)
    assert err["code"] == "config"
    assert "snowflake" in err["message"]


SLOW_MODEL = """\
version: 0.2.0.dev0
semantic_model:
  - name: slow
    datasets:
      - name: t
        source: range(5000000000)
        fields:
          - name: n
            expression: {dialects: [{dialect: ANSI_SQL, expression: range}]}
            datatype: Integer
    metrics:
      - name: distinct_n
        expression: {dialects: [{dialect: ANSI_SQL, expression: COUNT(DISTINCT t.n)}]}
"""


def test_timeout(run, tmp_path):
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL, encoding="utf-8")
    r = run(
        "query",
        "-m",
        model,
        "--db",
        ":memory:",
        "-M",
        "distinct_n",
        "--timeout",
        "0.2",
        "-f",
        "json",
    )
    assert r.exit_code == 4
    assert error_json(r)["code"] == "timeout"


# -- exit code 1: internal errors -----------------------------------------------------------------
def test_internal_error_has_no_traceback(shop, monkeypatch):
    from dosi.engine import Engine

    def boom(self, *a, **kw):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Engine, "compile", boom)
    r = shop("compile", "-M", "revenue")
    assert r.exit_code == 1
    assert "internal error: RuntimeError: kaboom" in r.stderr
    no_traceback(r)
    j = shop("compile", "-M", "revenue", "-f", "json")
    assert j.exit_code == 1
    err = error_json(j)
    assert err["code"] == "internal"
    assert "kaboom" in err["message"]


def test_internal_error_traceback_with_debug(shop, monkeypatch):
    from dosi.engine import Engine

    def boom(self, *a, **kw):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Engine, "compile", boom)
    r = shop("compile", "-M", "revenue", env={"DOSI_DEBUG": "1"})
    assert r.exit_code == 1
    assert "Traceback" in r.stderr


# -- documentation --------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [[], ["query"], ["validate"], ["compile"], ["list"]])
def test_exit_codes_in_help(run, command):
    r = run(*command, "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    for line in (
        "0 success",
        "1 internal error",
        "2 bad query",
        "3 bad model",
        "4 execution failure",
    ):
        assert line in text
    assert "Exit codes" in EPILOG and "Exit codes" in COMMAND_EPILOG
