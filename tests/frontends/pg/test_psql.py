"""psql from Debian's postgresql-client: `\\dt`, `\\d shop`, `\\d+ shop` (descriptions as
column comments) and a query, through the simple query protocol."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import Running
from dosi import Engine

PSQL = shutil.which("psql")
pytestmark = pytest.mark.skipif(PSQL is None, reason="psql not installed (postgresql-client)")


def psql(
    pg: Running, *commands: str, password: str | None = None
) -> subprocess.CompletedProcess[str]:
    args = [PSQL or "psql", pg.conninfo(), "-X", "-v", "ON_ERROR_STOP=1", "-P", "pager=off"]
    for c in commands:
        args += ["-c", c]
    env = {**os.environ, "PGCONNECT_TIMEOUT": "20"}
    env.pop("PGPASSWORD", None)
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


def test_psql_lists_and_describes_the_table(pg: Running, api: Engine) -> None:
    out = psql(pg, "\\dt", "\\d shop")
    assert out.returncode == 0, out.stderr
    assert "public | shop | table" in out.stdout
    assert 'Table "public.shop"' in out.stdout
    for line in ("orders__channel", "metric_time__month", "revenue"):
        assert line in out.stdout
    assert "numeric(38,2)" in out.stdout  # revenue's type, as the connection returns it
    assert "bigint" in out.stdout and "double precision" in out.stdout


def test_psql_describe_plus_shows_descriptions(pg: Running, api: Engine) -> None:
    out = psql(pg, "\\d+ shop")
    assert out.returncode == 0, out.stderr
    assert api.metric("revenue")["description"] in out.stdout
    assert "Order status, one of completed, cancelled, returned." in out.stdout


def test_psql_query_equals_the_python_api(pg: Running, api: Engine) -> None:
    out = psql(
        pg,
        "SELECT orders__channel, SUM(revenue), MEASURE(order_count) FROM shop "
        "GROUP BY 1 ORDER BY 1",
    )
    assert out.returncode == 0, out.stderr
    ref = api.execute(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "orders.channel"}],
        }
    )["rows"]
    body = [line for line in out.stdout.splitlines() if "|" in line][1:]
    got = [tuple(x.strip() for x in line.split("|")) for line in body]
    expected = [(r["channel"] or "", f"{r['revenue']:.2f}", str(r["order_count"])) for r in ref]
    assert got == expected
    assert f"({len(ref)} rows)" in out.stdout


def test_psql_error_shows_code_hint_and_candidates(pg: Running) -> None:
    out = psql(pg, "SELECT MAX(revenue) FROM shop")
    assert out.returncode != 0
    assert "ERROR:  [sql_aggregate_mismatch]" in out.stderr
    assert "MEASURE(revenue)" in out.stderr and "HINT:" in out.stderr
