"""`dosi demo`: builds the shop database once, runs the showcase queries."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import SHOP_DIR

from dosi.frontends.cli.commands.demo import SHOWCASE, next_steps
from dosi.frontends.cli.query_input import invoked_as

SRC = Path(__file__).resolve().parents[3] / "src"

TITLES = [title for title, _, _ in SHOWCASE]


@pytest.fixture
def demo_db(tmp_path, shop_db):
    """A copy of the session database, so the demo does not spend time building it."""
    db = tmp_path / "demo.duckdb"
    db.write_bytes(shop_db.read_bytes())
    return db


def test_showcase_covers_the_brief():
    metrics = {m for _, _, q in SHOWCASE for m in q["metrics"]}
    assert {
        "revenue_mom",
        "revenue_rolling_3m",
        "revenue_ytd",
        "revenue_rank",
        "refund_total",
    } <= metrics
    assert any("regions.region_name" in q.get("group_by", []) for _, _, q in SHOWCASE)


def test_demo_builds_database_and_runs(run, tmp_path, sql):
    db = tmp_path / "fresh" / "shop.duckdb"
    r = run("demo", "--example-dir", SHOP_DIR, "--db", db)
    assert r.exit_code == 0, r.output
    assert db.exists()
    assert "built the demo database" in r.stderr
    for i, title in enumerate(TITLES, 1):
        assert f"{i}. {title}" in r.stdout
    queries = [
        json.loads(line.split("query: ", 1)[1])
        for line in r.stdout.splitlines()
        if line.strip().startswith("query: ")
    ]
    assert queries == [q for _, _, q in SHOWCASE]
    assert r.stdout.count(" rows)") + r.stdout.count(" row)") == len(SHOWCASE)
    # revenue by region, checked against plain SQL
    want = sql(
        "SELECT r.region_name, SUM(o.amount) FROM main.orders o "
        "LEFT JOIN main.customers c ON o.customer_id = c.customer_id "
        "LEFT JOIN main.regions r ON c.region_id = r.region_id GROUP BY 1 ORDER BY 2 DESC"
    )
    for name, revenue in want:
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith((name or "NULL") + " "))
        assert f"{revenue:.2f}" in line


def test_demo_reuses_existing_database(run, demo_db):
    r = run("demo", "--db", demo_db)  # example dir found from the package location
    assert r.exit_code == 0, r.output
    assert "built the demo database" not in r.stderr


def test_demo_json(run, demo_db, sql):
    r = run("demo", "--db", demo_db, "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [q["title"] for q in data["queries"]] == TITLES
    assert all(q["result"]["row_count"] > 0 for q in data["queries"])
    merge = data["queries"][-1]["result"]
    feb = next(row for row in merge["rows"] if row["metric_time__month"].startswith("2024-02"))
    refunds_feb = sql(
        "SELECT SUM(refund_amount) FROM main.refunds "
        "WHERE refund_date >= DATE '2024-02-01' AND refund_date < DATE '2024-03-01'"
    )[0][0]
    assert feb["revenue"] is None  # no orders in 2024-02
    assert feb["refund_total"] == float(refunds_feb)
    ytd = data["queries"][3]["result"]["rows"]
    assert ytd[0]["revenue_ytd"] == float(
        sql(
            "SELECT SUM(amount) FROM main.orders "
            "WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-07-01'"
        )[0][0]
    )


def test_demo_command_lines_reproduce_the_queries(run, demo_db):
    data = json.loads(run("demo", "--db", demo_db, "-f", "json").stdout)
    program = invoked_as()
    for q in data["queries"]:
        args = shlex.split(q["command"])
        assert args[: len(program) + 1] == [*program, "query"]
        r = run(*args[len(program) :], "-f", "json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["rows"] == q["result"]["rows"]


def test_invoked_as_names_the_script_unless_it_is_on_path(tmp_path, monkeypatch):
    """Issue 26: the demo's commands run as printed, `dosi` on PATH or not."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "dosi"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert invoked_as(str(script)) == ["venv/bin/dosi"]
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert invoked_as(str(script)) == ["dosi"]
    assert invoked_as("/somewhere/pytest")[1:] == ["-m", "dosi"]


def test_demo_next_steps_run_as_printed(tmp_path, demo_db):
    """Every `try:` line the demo ends with runs from the same directory as printed."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("DOSI_MODEL", None)
    env.pop("DOSI_DB", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dosi",
            "demo",
            "--example-dir",
            str(SHOP_DIR),
            "--db",
            str(demo_db),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    tail = done.stdout.split("\ntry:\n", 1)[1].splitlines()
    lines = [ln.strip() for ln in tail if ln.startswith("  ")]
    assert len(lines) == 3
    for line in lines:
        step = subprocess.run(
            ["bash", "-c", line],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert step.returncode == 0, (line, step.stderr)
    assert (tmp_path / "revenue.csv").read_text().startswith("channel,revenue\nmobile,")


def test_demo_bad_example_dir(run, tmp_path):
    r = run("demo", "--example-dir", tmp_path, "-f", "json")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["error"]["code"] == "example_not_found"


def test_demo_points_at_the_docs_site(tmp_path, monkeypatch):
    """Issue 26 item 1: from a checkout, the demo's last line says how to serve the docs site;
    elsewhere it names the pages."""
    monkeypatch.chdir(SRC.parent)
    line = next_steps(["dosi"], "examples/shop/model.yaml", "shop.duckdb")[-1]
    assert "-m pip install -e '.[docs]'" in line and "-m mkdocs serve" in line, line
    assert "site/" in line
    monkeypatch.chdir(tmp_path)
    assert next_steps(["dosi"], "m.yaml", "d.duckdb")[-1].endswith(
        "docs/index.md of the dosi repository"
    )
