"""`python -m dosi` and the `main()` entry point, in a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from clikit import REPO, SHOP_MODEL

from dosi.frontends.cli import main


def dosi(*args: object, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    env.pop("DOSI_MODEL", None)
    env.pop("DOSI_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "dosi", *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def test_python_m_dosi_help():
    p = dosi("--help")
    assert p.returncode == 0
    for command in ("validate", "list", "info", "compile", "query", "explain", "demo"):
        assert command in p.stdout
    assert "Exit codes" in p.stdout


def test_python_m_dosi_query(shop_db):
    p = dosi(
        "query",
        "-m",
        SHOP_MODEL,
        "--db",
        shop_db,
        "-M",
        "revenue",
        "-g",
        "orders.status",
        "-f",
        "json",
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["row_count"] == 3


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["query", "-m", SHOP_MODEL, "-M", "revnue"], 2),
        (["query", "-m", "/nonexistent/model.yaml", "-M", "revenue"], 3),
        (["query", "-m", SHOP_MODEL, "--db", "/nonexistent/x.duckdb", "-M", "revenue"], 4),
        (["query", "--bogus"], 2),
    ],
)
def test_exit_codes_in_a_real_process(args, code):
    p = dosi(*args)
    assert p.returncode == code
    assert "Traceback" not in p.stderr
    assert "error" in p.stderr.lower()


def test_main_entry_point(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "dosi" in capsys.readouterr().out
