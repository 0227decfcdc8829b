"""`--osi-basic`: DATUS extensions ignored with warnings, and the numbers change as documented."""

from __future__ import annotations

import json

INNER = (
    "SELECT SUM(o.amount) FROM main.orders o JOIN main.customers c ON o.customer_id = c.customer_id"
)
TOTAL = "SELECT SUM(amount) FROM main.orders"


def js(result):
    return json.loads(result.stdout)


def test_join_type_inner_vs_basic_left(run, mini_model, shop_db, sql):
    args = [
        "query",
        "-m",
        mini_model,
        "--db",
        shop_db,
        "-M",
        "revenue",
        "-g",
        "customers.segment",
        "-f",
        "json",
    ]
    datus = run(*args)
    basic = run(*args, "--osi-basic")
    assert datus.exit_code == 0, datus.output
    assert basic.exit_code == 0, basic.output
    datus_total = sum(r["revenue"] for r in js(datus)["rows"])
    basic_total = sum(r["revenue"] for r in js(basic)["rows"])
    assert abs(datus_total - float(sql(INNER)[0][0])) < 1e-6  # D-JOIN inner drops orphans
    assert abs(basic_total - float(sql(TOTAL)[0][0])) < 1e-6  # LEFT keeps them
    assert basic_total > datus_total
    assert js(datus)["warnings"] == []
    warnings = js(basic)["warnings"]
    assert {w["code"] for w in warnings} == {"ignored_vendor_extension"}
    assert any("D-JOIN" in w["message"] for w in warnings)


def test_fill_nulls_with_vs_basic(run, mini_model, shop_db):
    args = [
        "query",
        "-m",
        mini_model,
        "--db",
        shop_db,
        "-M",
        "revenue,cancelled_revenue",
        "-g",
        "metric_time:day",
        "--start",
        "2024-01-01",
        "--end",
        "2024-03-01",
        "-f",
        "json",
    ]
    datus = js(run(*args))["rows"]
    basic = js(run(*args, "--osi-basic"))["rows"]
    assert len(datus) == len(basic) > 0
    assert all(r["cancelled_revenue"] is not None for r in datus)  # D-FILL 0
    assert any(r["cancelled_revenue"] is None for r in basic)
    assert sum(r["cancelled_revenue"] == 0 for r in datus) == sum(
        r["cancelled_revenue"] is None for r in basic
    )


def test_basic_warnings_on_stderr_in_table_format(run, mini_model, shop_db):
    r = run("query", "-m", mini_model, "--db", shop_db, "-M", "revenue", "--osi-basic")
    assert r.exit_code == 0, r.output
    assert "warning: [ignored_vendor_extension]" in r.stderr
    assert "ignored_vendor_extension" not in r.stdout
    assert "revenue" in r.stdout


def test_basic_warnings_in_compile_json(run, mini_model):
    r = run("compile", "-m", mini_model, "-M", "revenue", "--osi-basic", "-f", "json")
    assert r.exit_code == 0
    assert len(js(r)["warnings"]) == 2
    assert (
        "LEFT JOIN"
        in run(
            "compile", "-m", mini_model, "-M", "revenue", "-g", "customers.segment", "--osi-basic"
        ).stdout.upper()
    )
    assert (
        "LEFT JOIN"
        not in run(
            "compile", "-m", mini_model, "-M", "revenue", "-g", "customers.segment"
        ).stdout.upper()
    )


def test_list_in_basic_mode_prints_warnings_to_stderr(run, mini_model):
    r = run("list", "metrics", "-m", mini_model, "--osi-basic")
    assert r.exit_code == 0
    assert r.stderr.count("ignored_vendor_extension") == 2
    j = run("list", "metrics", "-m", mini_model, "--osi-basic", "-f", "json")
    assert [m["name"] for m in js(j)] == ["revenue", "cancelled_revenue"]
