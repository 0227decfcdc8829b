"""Issue 26, honest command-line output: every file format opened by pandas, polars and DuckDB
with the values plain SQL computes; the format follows -o's extension; bad paths and full
disks are structured errors; --precision; one NULL spelling; Ctrl-C cancels at once (exit
130); progress on a terminal only."""

from __future__ import annotations

import decimal
import errno
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from click.testing import Result
from clikit import SHOP_MODEL
from enginekit import SLOW_MODEL

from dosi.frontends.cli.formats import resolve_format, write_error
from dosi.frontends.cli.output import CliError, exit_code_for
from dosi.frontends.cli.running import progress_line

Run = Callable[..., Result]
SRC = Path(__file__).resolve().parents[3] / "src"
QUERY = ["-M", "revenue,order_count", "-g", "orders.channel", "--order-by", "channel"]


def _args(shop_db: Path, *more: Any) -> list[Any]:
    return ["query", "-m", SHOP_MODEL, "--db", shop_db, *QUERY, *more]


@pytest.fixture(scope="module")
def expected(sql: Any) -> dict[str | None, tuple[decimal.Decimal, int]]:
    """{channel: (revenue, order_count)} by plain SQL over the shop database."""
    rows = sql("SELECT channel, SUM(amount), COUNT(*) FROM main.orders GROUP BY 1")
    return {ch: (rev, n) for ch, rev, n in rows}


def _check(frame: pd.DataFrame, expected: dict[str | None, tuple[Any, int]]) -> None:
    got = {
        (None if pd.isna(ch) else ch): (decimal.Decimal(str(rev)), int(n))
        for ch, rev, n in zip(frame["channel"], frame["revenue"], frame["order_count"],
                              strict=True)
    }
    assert got == {k: (decimal.Decimal(v[0]), v[1]) for k, v in expected.items()}


@pytest.mark.parametrize(
    "name", ["r.csv", "r.json", "r.jsonl", "r.parquet", "r.arrow", "r.feather", "r.arrows"]
)
def test_every_output_format_opens_in_pandas_polars_and_duckdb(
    run: Run, shop_db: Path, tmp_path: Path, expected: Any, name: str
) -> None:
    """The format comes from the extension alone (no -f), and the file holds the rows."""
    path = tmp_path / name
    r = run(*_args(shop_db, "-o", path))
    assert r.exit_code == 0, r.output
    assert f"wrote {len(expected)} rows to {path}" in r.stderr
    suffix = path.suffix
    con = duckdb.connect()
    if suffix == ".csv":
        frames = [pd.read_csv(path), pl.read_csv(path).to_pandas(),
                  con.sql(f"SELECT * FROM read_csv('{path}')").df()]
    elif suffix == ".json":  # the whole result: the rows under "rows"
        doc = json.loads(path.read_text())
        assert doc["columns"] == ["channel", "revenue", "order_count"]
        frames = [pd.json_normalize(doc, "rows"), pl.DataFrame(doc["rows"]).to_pandas(),
                  con.sql(f"SELECT unnest(rows, recursive := true) FROM read_json('{path}')").df()]
    elif suffix == ".jsonl":
        frames = [pd.read_json(path, lines=True), pl.read_ndjson(path).to_pandas(),
                  con.sql(f"SELECT * FROM read_json('{path}')").df()]
    elif suffix == ".parquet":
        frames = [pd.read_parquet(path), pl.read_parquet(path).to_pandas(),
                  con.sql(f"SELECT * FROM read_parquet('{path}')").df()]
    elif suffix in (".arrow", ".feather"):  # the IPC file format
        arrow_table = pa.ipc.open_file(path).read_all()  # DuckDB scans it through pyarrow
        frames = [pd.read_feather(path), pl.read_ipc(path).to_pandas(),
                  con.sql("SELECT * FROM arrow_table").df()]
    else:  # .arrows: the IPC stream
        arrow_table = pa.ipc.open_stream(path.read_bytes()).read_all()
        frames = [arrow_table.to_pandas(), pl.read_ipc_stream(path).to_pandas(),
                  con.sql("SELECT * FROM arrow_table").df()]
    for frame in frames:
        _check(frame, expected)


def test_format_conflicting_with_the_extension_is_an_error(
    run: Run, shop_db: Path, tmp_path: Path
) -> None:
    path = tmp_path / "r.parquet"
    r = run(*_args(shop_db, "-f", "csv", "-o", path))
    assert r.exit_code == 2
    assert "format_conflicts_with_output" in r.stderr and str(path) in r.stderr
    assert not path.exists()
    j = run(*_args(shop_db, "-f", "json", "-o", tmp_path / "r.csv"))
    err = json.loads(j.stdout)["error"]
    assert err["code"] == "format_conflicts_with_output"
    assert err["detail"]["extension_format"] == "csv"
    # an extension that names no format: --format decides, else a table
    ok = run(*_args(shop_db, "-f", "csv", "-o", tmp_path / "r.out"))
    assert ok.exit_code == 0 and (tmp_path / "r.out").read_text().startswith("channel,revenue")
    assert resolve_format(None, "x.dat", ("table", "csv")) == "table"
    assert resolve_format("text", "x.txt", ("table", "text")) == "table"
    with pytest.raises(CliError):
        resolve_format("arrow", "x.arrows", ("arrow", "arrows"))


@pytest.mark.parametrize(
    ("where", "code"),
    [("missing/dir/x", "output_folder_missing"), (".", "output_is_directory")],
)
def test_bad_output_path_is_a_usage_error_naming_it(
    run: Run, shop_db: Path, tmp_path: Path, where: str, code: str
) -> None:
    path = tmp_path / where
    r = run(*_args(shop_db, "-o", path, "-f", "csv"))
    assert r.exit_code == 2, r.output
    assert f"[{code}]" in r.stderr and str(path) in r.stderr
    assert "internal error" not in r.stderr
    j = json.loads(run(*_args(shop_db, "-o", path, "-f", "json")).stdout)
    assert j["error"]["code"] == code and j["error"]["detail"]["path"] == str(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission")
def test_unwritable_output_is_permission_denied(run: Run, shop_db: Path, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    r = run(*_args(shop_db, "-o", locked / "x.csv"))
    assert r.exit_code == 2 and "output_permission_denied" in r.stderr


def test_write_errors_map_to_codes_and_exits(tmp_path: Path) -> None:
    """Each OSError a write can meet becomes a structured error naming the path: path
    problems exit 2, the medium failing exits 4 (`exit_code_for`)."""
    path = tmp_path / "x.csv"
    for number, code, exit_code in [
        (errno.EACCES, "output_permission_denied", 2),
        (errno.ENOENT, "output_folder_missing", 2),
        (errno.ENOSPC, "output_write_failed", 4),
        (errno.EIO, "output_write_failed", 4),
    ]:
        err = write_error(path, OSError(number, os.strerror(number)))
        assert (err.code, exit_code_for(err)) == (code, exit_code)
        assert str(path) in err.message and err.detail["path"] == str(path)


def test_a_full_disk_is_exit_4_naming_the_path(run: Run, shop_db: Path) -> None:
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    r = run(*_args(shop_db, "-o", "/dev/full", "-f", "csv"))
    assert r.exit_code == 4, r.output
    assert "[output_write_failed]" in r.stderr and "/dev/full" in r.stderr
    assert "No space left" in r.stderr
    j = run(*_args(shop_db, "-o", "/dev/full", "-f", "parquet"))
    assert j.exit_code == 4 and "/dev/full" in j.stderr


def test_precision_fixes_the_digits_of_every_number(run: Run, shop_db: Path, sql: Any) -> None:
    want = sql("SELECT channel, SUM(amount) FROM main.orders GROUP BY 1")
    r = run("query", "-m", SHOP_MODEL, "--db", shop_db, "-M", "revenue,avg_order_value",
            "-g", "orders.channel", "--precision", "1")
    assert r.exit_code == 0, r.output
    body = r.stdout.splitlines()[2:-1]
    for ch, rev in want:
        line = next(ln for ln in body if ln.split("|")[0].strip() == (ch or "NULL"))
        cells = [c.strip() for c in line.split("|")]
        assert cells[1] == f"{rev.quantize(decimal.Decimal('0.1'))}"
        assert len(cells[2].split(".")[1]) == 1  # a double at one digit too
    exact = run("query", "-m", SHOP_MODEL, "--db", shop_db, "-M", "revenue", "-f", "csv")
    total = sql("SELECT SUM(amount) FROM main.orders")[0][0]
    assert exact.stdout.splitlines()[1] == str(total)  # CSV keeps every digit


def test_null_is_spelled_null_in_query_and_attribute_tables(run: Run, shop_db: Path) -> None:
    """The orders without a channel are the NULL group; attribution's NULL segment prints the
    same way (not "(null)")."""
    q = run(*_args(shop_db))
    assert any(ln.startswith("NULL ") for ln in q.stdout.splitlines())
    a = run("attribute", "-m", SHOP_MODEL, "--db", shop_db, "-M", "revenue",
            "--current", "2024-03-01..2024-04-01", "--baseline", "2024-01-01..2024-02-01",
            "-d", "orders.channel")
    assert a.exit_code == 0, a.output
    assert "(null)" not in a.stdout
    assert any(ln.startswith("NULL ") for ln in a.stdout.splitlines())


# -- Ctrl-C and progress (a real process: signals and terminals) -----------------------------
@pytest.fixture
def slow_cmd(tmp_path: Path) -> list[str]:
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    empty_db = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty_db)).close()  # the model's source is a SELECT: any database
    return [sys.executable, "-m", "dosi", "query", "-m", str(model), "--db", str(empty_db),
            "-M", "total"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DOSI_NO_SPINNER", "DOSI_NO_PROGRESS")}
    env["PYTHONPATH"] = str(SRC)
    return env


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def test_sigint_cancels_the_query_at_once_and_exits_130(slow_cmd: list[str]) -> None:
    """The query would run for minutes; Ctrl-C while it runs (its progress line is on the
    terminal) stops it within seconds with "interrupted", never an internal error."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(slow_cmd, stdout=subprocess.PIPE, stderr=slave, env=_env())
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while b"querying" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            seen += os.read(master, 4096)
    assert b"querying" in seen, seen
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    took = time.monotonic() - sent
    err = seen.decode("utf-8", "replace") + _read_all(master)
    os.close(master)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].split("\r")[-1].strip() == "interrupted"
    assert "internal error" not in err
    assert proc.stdout is not None and proc.stdout.read() == b""
    assert took < 5.0


def test_progress_shows_duckdb_percent_on_a_terminal_only(slow_cmd: list[str]) -> None:
    """stderr on a terminal: frames with DuckDB's percentage; stdout (a pipe) gets none;
    with stderr piped too, no frame anywhere."""
    cmd = [*slow_cmd, "--timeout", "3"]
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=_env())
    os.close(slave)
    tty_err = _read_all(master)
    out = proc.stdout.read() if proc.stdout else b""
    proc.wait(60)
    os.close(master)
    assert proc.returncode == 4  # the timeout ends it
    frames = [f for f in tty_err.split("\r") if "querying…" in f]
    assert frames, tty_err
    assert any("%" in f for f in frames)  # DuckDB reported its progress
    assert "querying" not in out.decode()
    plain = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=60)
    assert plain.returncode == 4
    assert "querying" not in plain.stderr and "%" not in plain.stderr
    assert "timeout" in plain.stderr


def test_progress_line_shapes() -> None:
    assert progress_line("querying", 3.14, 41.6, 0) == "⠋ querying…  42%   3.1s"
    assert progress_line("querying", 12.0, None, 1) == "⠙ querying…  12.0s"
    assert "100%" in progress_line("querying", 1.0, 130.0, 0)
