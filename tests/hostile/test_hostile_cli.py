"""The `dosi` command line on hostile input: a documented exit code (2 query / usage, 3 model,
4 execution), a structured error and no traceback, never exit 1 ("internal error")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from enginekit import SHOP_MODEL

from dosi.frontends.cli import cli

SHOP_TEXT = SHOP_MODEL.read_text(encoding="utf-8")


def _run(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _error(result: Result) -> dict:
    """The error, or for a model error its first issue (the error's code is the stage)."""
    data = json.loads(result.stdout)
    data = data.get("error", data)
    return data["issues"][0] if data.get("issues") else data


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    bad_model = tmp_path / "bad.yaml"
    bad_model.write_bytes(b"version: \xff\xfe\n")
    bad_query = tmp_path / "q.json"
    bad_query.write_bytes(b'{"metrics": ["\xff"]}')
    untrusted = tmp_path / "untrusted.yaml"
    untrusted.write_text(
        SHOP_TEXT.replace("source: main.orders", "source: \"(SELECT * FROM read_csv('x'))\"", 1),
        encoding="utf-8",
    )
    return {"bad_model": bad_model, "bad_query": bad_query, "untrusted": untrusted}


def test_hostile_cli_input_exits_with_documented_codes(files: dict[str, Path]) -> None:
    cases = [
        (("validate", "-m", files["bad_model"], "-f", "json"), 3, "invalid_yaml"),
        (("validate", "-m", "/tmp/a\x00b", "-f", "json"), 3, "model_not_found"),
        (
            (
                "compile",
                "-m",
                SHOP_MODEL,
                "--query",
                '{"metrics":["revenue"],"limit":' + "9" * 5000 + "}",
                "-f",
                "json",
            ),
            2,
            "invalid_query",
        ),
        (
            ("compile", "-m", SHOP_MODEL, "--query-file", files["bad_query"], "-f", "json"),
            2,
            "invalid_query",
        ),
        (
            ("compile", "-m", SHOP_MODEL, "-M", "revenue", "--where", "sleep(1) = 0", "-f", "json"),
            2,
            "unsupported_filter",
        ),
        (("compile", "-m", files["untrusted"], "-M", "revenue", "-f", "json"), 3, "untrusted_sql"),
    ]
    for args, code, error in cases:
        r = _run(*args)
        assert (r.exit_code, _error(r)["code"]) == (code, error), args
        assert "Traceback" not in r.output


def test_trust_sql_flag_admits_model_sql(files: dict[str, Path]) -> None:
    r = _run("compile", "-m", files["untrusted"], "--trust-sql", "-M", "revenue", "-f", "json")
    assert r.exit_code == 0, r.output
    assert "read_csv" in json.loads(r.stdout)["sql"].lower()
    r = _run("validate", "-m", files["untrusted"], "--trust-sql")
    assert r.exit_code == 0, r.output
