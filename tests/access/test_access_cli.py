"""The access file from the command line (issue 30 item 1, issue 29 item 4): `dosi access
hash` prints a stored hash that the identities accept, `dosi access check` shows what each
user sees, and an unusable token or access file stops `dosi mcp` / `dosi serve` at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from accesskit import ACCESS, MODEL

from dosi.access.identity import verify_secret

SRC = str(Path(__file__).resolve().parents[2] / "src")


def dosi(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("DOSI_TOKEN", None)
    env.pop("DOSI_ACCESS_FILE", None)
    return subprocess.run(
        [sys.executable, "-m", "dosi", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_issue30_cli_hash_and_check() -> None:
    out = dosi("access", "hash", "--scheme", "scrypt", stdin="pässwörd\n")
    assert out.returncode == 0, out.stderr
    stored = out.stdout.strip()
    assert verify_secret("pässwörd", stored) and not verify_secret("passwort", stored)
    check = dosi("access", "check", str(ACCESS), "-m", str(MODEL))
    assert check.returncode == 0, check.stderr
    users = {u["user"]: u for u in json.loads(check.stdout)["users"]}
    assert users["ana"]["filtered"] == ["orders"] and "total_cost" not in users["ana"]["metrics"]
    assert users["nobody"]["metrics"] == [] and users["lacks"]["error"]["code"] == (
        "access_attribute_missing"
    )


def test_issue29_unusable_token_or_access_file_stops_the_server(tmp_path: Path) -> None:
    mcp = dosi("mcp", "-m", str(MODEL), "--transport", "http", "--token", " ")
    assert mcp.returncode == 2 and "token" in mcp.stderr
    broken = tmp_path / "access.yaml"
    broken.write_text("users: [{name: a, token_hash: plain-secret}]", encoding="utf-8")
    serve = dosi("serve", "-m", str(MODEL), "--access", str(broken), "--port", "1")
    assert serve.returncode == 2 and "access_config_invalid" in serve.stderr
    stdio = dosi("mcp", "-m", str(MODEL), "--access", str(ACCESS))
    assert stdio.returncode == 2 and "--user" in stdio.stderr
