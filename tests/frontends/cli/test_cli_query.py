"""`dosi query` / `compile` / `explain`: output formats, flag-built queries, query sources."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from clikit import SHOP_MODEL

REVENUE_TOTAL = "SELECT SUM(amount) FROM main.orders"
BY_CHANNEL = (
    "SELECT channel, SUM(amount), COUNT(order_id) FROM main.orders GROUP BY channel ORDER BY 2 DESC"
)


def js(result: Any) -> Any:
    return json.loads(result.stdout)


def strict_json(text: str) -> Any:
    """json.loads that rejects NaN / Infinity (not valid JSON)."""

    def bad(token: str) -> Any:
        raise ValueError(f"invalid JSON constant {token}")

    return json.loads(text, parse_constant=bad)


# -- query: formats ------------------------------------------------------------------------------
def test_query_table_matches_plain_sql(shop, sql):
    r = shop("query", "-M", "revenue,order_count", "-g", "orders.channel", "--order-by=-revenue")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert [c.strip() for c in lines[0].split("|")] == ["channel", "revenue", "order_count"]
    body = [[c.strip() for c in line.split("|")] for line in lines[2:-1]]
    expected = sql(BY_CHANNEL)
    assert len(body) == len(expected) == 4
    for row, (channel, revenue, count) in zip(body, expected, strict=True):
        assert row[0] == (channel if channel is not None else "NULL")
        assert row[1] == f"{revenue:.2f}"
        assert int(row[2]) == count
    assert lines[-1] == "(4 rows)"
    assert r.stderr == ""


def test_query_json_is_the_full_result(shop, sql):
    r = shop("query", "-M", "revenue,order_count", "-g", "orders.channel", "--format", "json")
    assert r.exit_code == 0, r.output
    data = strict_json(r.stdout)
    assert set(data) >= {
        "dialect",
        "sql",
        "outputs",
        "warnings",
        "requested_columns",
        "columns",
        "rows",
        "row_count",
    }
    assert data["dialect"] == "duckdb"
    assert data["columns"] == ["channel", "revenue", "order_count"]
    assert data["row_count"] == len(data["rows"]) == 4
    assert [(o["column"], o["metric"]) for o in data["outputs"]] == [
        ("revenue", "revenue"),
        ("order_count", "order_count"),
    ]
    got = {r["channel"]: (r["revenue"], r["order_count"]) for r in data["rows"]}
    want = {c: (float(v), n) for c, v, n in sql(BY_CHANNEL)}
    assert got == want
    assert sum(r["revenue"] for r in data["rows"]) == pytest.approx(float(sql(REVENUE_TOTAL)[0][0]))


def test_query_json_dates_are_strings(shop):
    r = shop(
        "query",
        "-M",
        "revenue",
        "-g",
        "metric_time:month",
        "--start",
        "2024-01-01",
        "--end",
        "2024-04-01",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    data = strict_json(r.stdout)
    months = [row[data["columns"][0]] for row in data["rows"]]
    assert all(isinstance(m, str) for m in months)
    # a month of the DATE column orders.order_date is a date (issue 8 item 7)
    assert months == ["2024-01-01", "2024-03-01"]  # 2024-02 has no orders


def test_query_csv_date_buckets_are_dates(shop):
    """Issue 8 item 7: CSV keeps a DATE bucket a date; a TIMESTAMP bucket keeps its time."""
    r = shop("query", "-M", "revenue", "-g", "metric_time:quarter", "-f", "csv")
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0][0] == "metric_time__quarter" and rows[1][0] == "2023-01-01"
    r = shop("query", "-M", "event_count", "-g", "events.event_ts:month", "-f", "csv")
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[1][0] == "2025-01-01 00:00:00"


def test_query_csv(shop, sql):
    r = shop("query", "-M", "revenue,order_count", "-g", "orders.channel", "-f", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["channel", "revenue", "order_count"]
    assert len(rows) == 1 + 4
    want = {(c or ""): (float(v), n) for c, v, n in sql(BY_CHANNEL)}
    got = {c: (float(v), int(n)) for c, v, n in rows[1:]}
    assert got == want
    assert "" in got  # the NULL channel is an empty CSV field


def test_query_total_revenue(shop, sql):
    r = shop("query", "-M", "revenue", "-f", "json")
    assert r.exit_code == 0, r.output
    rows = js(r)["rows"]
    assert rows == [{"revenue": pytest.approx(float(sql(REVENUE_TOTAL)[0][0]))}]
    assert rows[0]["revenue"] == pytest.approx(3125505.68)


def test_query_monthly_2024_has_eleven_rows(shop, sql):
    r = shop(
        "query",
        "-M",
        "revenue",
        "-g",
        "metric_time:month",
        "--start",
        "2024-01-01",
        "--end",
        "2025-01-01",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    data = js(r)
    want = sql(
        "SELECT date_trunc('month', order_date) m, SUM(amount) FROM main.orders "
        "WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2025-01-01' "
        "GROUP BY m ORDER BY m"
    )
    assert data["row_count"] == len(want) == 11
    assert [row["revenue"] for row in data["rows"]] == pytest.approx([float(v) for _, v in want])


def test_query_table_shows_decimals_at_their_scale(shop):
    r = shop(
        "query",
        "-M",
        "revenue",
        "-g",
        "metric_time:month",
        "--start",
        "2024-03-01",
        "--end",
        "2024-04-01",
    )
    assert r.exit_code == 0, r.output
    assert "84059.90" in r.stdout  # DECIMAL(…, 2), not 84059.9
    assert "2024-03-01" in r.stdout


# -- flag-built queries equal JSON queries ------------------------------------------------------
FLAG_CASES = [
    (
        [
            "-M",
            "revenue",
            "-M",
            "order_count",
            "-g",
            "orders.channel",
            "--order-by",
            "revenue:desc",
        ],
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "revenue", "desc": True}],
        },
    ),
    (
        [
            "-M",
            "revenue,avg_order_value",
            "-g",
            "metric_time:month",
            "--start",
            "2024-01-01",
            "--end",
            "2025-01-01",
        ],
        {
            "metrics": ["revenue", "avg_order_value"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        },
    ),
    (
        [
            "-M",
            "revenue",
            "-g",
            "regions.region_name",
            "--where",
            "orders.status = 'completed'",
            "--order-by=-revenue",
            "--limit",
            "3",
        ],
        {
            "metrics": ["revenue"],
            "group_by": ["regions.region_name"],
            "where_sql": "orders.status = 'completed'",
            "order_by": [{"key": "revenue", "desc": True}],
            "limit": 3,
        },
    ),
    (
        [
            "-M",
            "revenue",
            "-g",
            "metric_time:quarter",
            "--time-dimension",
            "metric_time",
            "--start",
            "2024-01-01",
            "--end",
            "2025-01-01",
            "--order-by",
            "metric_time:quarter:desc",
        ],
        {
            "metrics": ["revenue"],
            "group_by": ["metric_time:quarter"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01", "dimension": "metric_time"},
            "order_by": [{"key": "metric_time:quarter", "desc": True}],
        },
    ),
    (
        ["-M", "revenue,revenue_mom", "-g", "metric_time:month", "--start", "2025-01-01"],
        {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01"},
        },
    ),
    (
        [
            "-M",
            "revenue",
            "-g",
            "orders.status,orders.channel",
            "--where",
            "orders.channel = 'web'",
            "--where",
            "orders.status <> 'cancelled'",
        ],
        {
            "metrics": ["revenue"],
            "group_by": ["orders.status", "orders.channel"],
            "where_sql": "(orders.channel = 'web') AND (orders.status <> 'cancelled')",
        },
    ),
]


@pytest.mark.parametrize(("flags", "query"), FLAG_CASES)
def test_flags_equal_json_query(shop, flags, query):
    by_flags = shop("query", *flags, "-f", "json")
    by_json = shop("query", "--query", json.dumps(query), "-f", "json")
    assert by_flags.exit_code == 0, by_flags.output
    assert by_json.exit_code == 0, by_json.output
    a, b = js(by_flags), js(by_json)
    assert a["rows"] == b["rows"]
    assert a["sql"] == b["sql"]
    assert a["row_count"] > 0


def test_flags_where_and_limit_values(shop, sql):
    r = shop(
        "query",
        "-M",
        "revenue",
        "-g",
        "regions.region_name",
        "--where",
        "orders.status = 'completed'",
        "--order-by=-revenue",
        "--limit",
        "2",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    want = sql(
        "SELECT r.region_name, SUM(o.amount) FROM main.orders o "
        "LEFT JOIN main.customers c ON o.customer_id = c.customer_id "
        "LEFT JOIN main.regions r ON c.region_id = r.region_id "
        "WHERE o.status = 'completed' GROUP BY 1 ORDER BY 2 DESC LIMIT 2"
    )
    got = [(row["region_name"], row["revenue"]) for row in js(r)["rows"]]
    assert got == [(n, pytest.approx(float(v))) for n, v in want]


@pytest.mark.parametrize("spelling", ["-revenue", "revenue:desc", "revenue desc", "revenue:DESC"])
def test_order_by_descending_spellings(shop, spelling):
    r = shop(
        "query", "-M", "revenue", "-g", "orders.status", f"--order-by={spelling}", "-f", "json"
    )
    assert r.exit_code == 0, r.output
    values = [row["revenue"] for row in js(r)["rows"]]
    assert values == sorted(values, reverse=True)


def test_order_by_ascending(shop):
    r = shop("query", "-M", "revenue", "-g", "orders.status", "--order-by", "revenue", "-f", "json")
    values = [row["revenue"] for row in js(r)["rows"]]
    assert values == sorted(values)
    r2 = shop(
        "query", "-M", "revenue", "-g", "orders.status", "--order-by", "revenue:asc", "-f", "json"
    )
    assert js(r2)["rows"] == js(r)["rows"]


# -- query sources --------------------------------------------------------------------------------
Q_STATUS = {"metrics": ["revenue"], "group_by": ["orders.status"]}


def test_query_file(shop, tmp_path, sql):
    f = tmp_path / "q.json"
    f.write_text(json.dumps(Q_STATUS), encoding="utf-8")
    r = shop("query", "--query-file", f, "-f", "json")
    assert r.exit_code == 0, r.output
    want = dict(sql("SELECT status, SUM(amount) FROM main.orders GROUP BY 1"))
    assert {row["status"]: row["revenue"] for row in js(r)["rows"]} == pytest.approx(
        {k: float(v) for k, v in want.items()}
    )


@pytest.mark.parametrize("option", ["--query-file", "--query"])
def test_query_from_stdin(shop, option):
    r = shop("query", option, "-", "-f", "json", input=json.dumps(Q_STATUS))
    assert r.exit_code == 0, r.output
    assert js(r)["row_count"] == 3


def test_env_model_and_db(run, shop_db, sql):
    env = {"DOSI_MODEL": str(SHOP_MODEL), "DOSI_DB": str(shop_db)}
    r = run("query", "-M", "revenue", "-f", "json", env=env)
    assert r.exit_code == 0, r.output
    assert js(r)["rows"][0]["revenue"] == pytest.approx(float(sql(REVENUE_TOTAL)[0][0]))


def test_group_level_options(run, shop_db):
    r = run("-m", SHOP_MODEL, "--db", shop_db, "query", "-M", "order_count", "-f", "json")
    assert r.exit_code == 0, r.output
    assert js(r)["rows"] == [{"order_count": 3980}]


def test_command_options_override_group_options(run, shop_db, tmp_path):
    r = run(
        "-m",
        tmp_path / "missing.yaml",
        "query",
        "-m",
        SHOP_MODEL,
        "--db",
        shop_db,
        "-M",
        "order_count",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output


def test_show_sql_goes_to_stderr(shop):
    r = shop("query", "-M", "revenue", "--show-sql", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "SUM(orders.amount)" in r.stderr
    assert js(r)["row_count"] == 1


def test_connections_file(run, shop_db, tmp_path):
    conns = tmp_path / "conns.yaml"
    conns.write_text(f"shop:\n  type: duckdb\n  uri: {shop_db}\n", encoding="utf-8")
    r = run("query", "-m", SHOP_MODEL, "--connections", conns, "-M", "order_count", "-f", "json")
    assert r.exit_code == 0, r.output
    assert js(r)["rows"] == [{"order_count": 3980}]


def test_connections_agent_yml(run, shop_db, tmp_path):
    """A full agent.yml: `datasources:` (non-DuckDB entries are skipped), relative paths."""
    (tmp_path / "data").mkdir()
    local = tmp_path / "data" / "shop.duckdb"
    local.write_bytes(Path(shop_db).read_bytes())
    agent = tmp_path / "agent.yml"
    agent.write_text(
        "agent:\n  target: openai\n"
        "datasources:\n"
        "  warehouse:\n    type: snowflake\n    account: x\n"
        "  local:\n    type: duckdb\n    uri: data/shop.duckdb\n",
        encoding="utf-8",
    )
    r = run(
        "query",
        "-m",
        SHOP_MODEL,
        "--connections",
        agent,
        "--connection",
        "local",
        "-M",
        "order_count",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    assert js(r)["rows"] == [{"order_count": 3980}]


# -- compile --------------------------------------------------------------------------------------
def test_compile_prints_sql_that_runs(shop, shop_db, sql):
    r = shop("compile", "-M", "revenue", "-g", "orders.channel")
    assert r.exit_code == 0, r.output
    text = r.stdout.strip()
    assert text.endswith(";")
    assert "SUM(orders.amount)" in text
    con = duckdb.connect(str(shop_db), read_only=True)
    try:
        rows = con.sql(text.rstrip(";")).fetchall()
    finally:
        con.close()
    assert sum(float(v) for _, v in rows) == pytest.approx(float(sql(REVENUE_TOTAL)[0][0]))


def test_compile_pretty_and_dialect(shop):
    plain = shop("compile", "-M", "revenue", "-g", "metric_time:month")
    pretty = shop("compile", "-M", "revenue", "-g", "metric_time:month", "--pretty")
    assert plain.exit_code == pretty.exit_code == 0
    assert plain.stdout.count("\n") == 1
    assert pretty.stdout.count("\n") > 3
    r = shop(
        "compile",
        "-M",
        "revenue",
        "-g",
        "metric_time:month",
        "--dialect",
        "snowflake",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    data = js(r)
    assert data["dialect"] == "snowflake"
    assert set(data) >= {"dialect", "sql", "outputs", "warnings", "requested_columns"}
    assert data["requested_columns"][0]["requested"] == "metric_time"


def test_compile_query_json_same_sql_as_flags(shop):
    a = shop("compile", "-M", "revenue", "-g", "orders.status", "-f", "json")
    b = shop("compile", "--query", json.dumps(Q_STATUS), "-f", "json")
    assert js(a)["sql"] == js(b)["sql"]


def test_compile_unknown_dialect(shop):
    r = shop("compile", "-M", "revenue", "--dialect", "snowflak", "-f", "json")
    assert r.exit_code == 2
    err = js(r)["error"]
    assert "snowflake" in err["candidates"]


# -- explain --------------------------------------------------------------------------------------
def test_explain_text(shop):
    r = shop(
        "explain", "-M", "revenue,revenue_mom", "-g", "metric_time:month", "--start", "2025-01-01"
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("QueryPlan")
    assert "Outputs" in r.stdout
    assert "revenue_mom <- metric revenue_mom" in r.stdout
    assert "SELECT" not in r.stdout


def test_explain_with_sql_and_json(shop):
    r = shop("explain", "-M", "revenue", "-g", "orders.status", "--sql")
    assert r.exit_code == 0, r.output
    assert "SELECT" in r.stdout
    j = shop("explain", "-M", "revenue", "-g", "orders.status", "-f", "json")
    data = js(j)
    assert data["plan"].startswith("QueryPlan")
    assert [o["metric"] for o in data["outputs"]] == ["revenue"]
    assert data["requested_columns"] == [{"requested": "orders.status", "column": "status"}]


# -- context_filter (D-LOD context layer, CORE-Q-10) ----------------------------------------------
def test_query_context_filter_flag_feeds_the_cohort_rollup(shop, sql):
    """`--context-filter` is the query key `context_filter`: it scopes the fixed rollup (each
    customer's first *web* order) and the view's rows alike."""
    r = shop(
        "query",
        "-M",
        "customer_count",
        "-g",
        "orders.order_kind",
        "--context-filter",
        "orders.channel = 'web'",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    got = {row["order_kind"]: row["customer_count"] for row in strict_json(r.stdout)["rows"]}
    expected = sql(
        "SELECT CASE WHEN o.order_date = f.d THEN 'first' ELSE 'repeat' END,"
        " COUNT(DISTINCT o.customer_id) FROM orders o JOIN (SELECT customer_id, MIN(order_date)"
        " AS d FROM orders WHERE channel = 'web' GROUP BY 1) f"
        " ON o.customer_id IS NOT DISTINCT FROM f.customer_id WHERE o.channel = 'web' GROUP BY 1"
    )
    assert got == dict(expected)
    compiled = shop("compile", "-M", "revenue", "--context-filter", "orders.channel = 'web'")
    assert compiled.exit_code == 0 and "'web'" in compiled.stdout


# -- densify (issue 22) -------------------------------------------------------------------------
def test_query_densify_flag_returns_every_bucket(shop):
    """`--densify time` is the query key `densify`: every day of January is a row, the days
    without a large order count 0; `--densify false` keeps the days with data."""
    args = ["query", "-M", "order_count", "-g", "metric_time:day", "--where", "orders.amount > 900"]
    args += ["--start", "2025-01-01", "--end", "2025-02-01", "--format", "json"]
    dense = strict_json(shop(*args, "--densify", "time").stdout)["rows"]
    sparse = strict_json(shop(*args, "--densify", "false").stdout)["rows"]
    assert len(dense) == 31 and len(sparse) < 31
    assert [r for r in dense if r["order_count"]] == sparse
    bad = shop(*args, "--densify", "some")
    assert bad.exit_code != 0 and "time" in bad.output


# -- week start (issue 22 item 4) ---------------------------------------------------------------
def test_query_week_start_flag_moves_week_buckets(shop):
    """`--week-start sunday` is the query key `week_start`: every week bucket starts on a
    Sunday, the order count over the range is unchanged, and a day outside the choices is a
    usage error."""
    args = ["query", "-M", "order_count", "-g", "metric_time:week", "--format", "json"]
    args += ["--start", "2025-01-05", "--end", "2025-03-02"]
    monday = strict_json(shop(*args).stdout)["rows"]
    sunday = strict_json(shop(*args, "--week-start", "sunday").stdout)["rows"]

    def weekday(row):
        return dt.date.fromisoformat(str(row["metric_time__week"])[:10]).weekday()

    assert {weekday(r) for r in monday} == {0}
    assert {weekday(r) for r in sunday} == {6}
    assert sum(r["order_count"] for r in monday) == sum(r["order_count"] for r in sunday)
    bad = shop(*args, "--week-start", "friday")
    assert bad.exit_code != 0 and "sunday" in bad.output
