"""`dosi select`, `dosi lineage`, `dosi attribute` and the result writers: --format
parquet/arrow, -o/--output FILE, --chart, --spark (SURF-CLI-05, SURF-CLI-07)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import Result
from clikit import SHOP_MODEL
from enginekit import SLOW_MODEL

Run = Callable[..., Result]


def _db(shop_db: Path) -> list[Any]:
    return ["-m", SHOP_MODEL, "--db", shop_db]


def test_select_prints_detail_rows(run: Run, shop_db: Path, sql: Any) -> None:
    r = run(
        "select",
        *_db(shop_db),
        "--from",
        "orders",
        "-F",
        "orders.order_id,orders.amount",
        "-F",
        "customers.segment",
        "--where",
        "orders.amount > 100",
        "--order-by",
        "amount:desc",
        "-l",
        "3",
        "-f",
        "json",
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    expected = sql("SELECT order_id FROM orders WHERE amount > 100 ORDER BY amount DESC LIMIT 3")
    assert [x["order_id"] for x in out["rows"]] == [e[0] for e in expected]
    assert out["columns"] == ["order_id", "amount", "customers__segment"]


def test_select_fan_out_is_a_query_error_with_json(run: Run, shop_db: Path) -> None:
    r = run("select", *_db(shop_db), "--from", "orders", "-F", "order_items.quantity", "-f", "json")
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "detail_fanout" and err["suggested_retry"] is None
    assert {"message", "candidates", "hint"} <= set(err)


def test_lineage_text_and_json(run: Run) -> None:
    r = run("lineage", "-m", SHOP_MODEL, "revenue_mom")
    assert r.exit_code == 0
    assert r.stdout.startswith("revenue_mom  (aggregate, window offset)")
    assert "orders -> customers" in r.stdout
    j = json.loads(run("lineage", "-m", SHOP_MODEL, "revenue", "-f", "json").stdout)
    assert j["tree"]["measures"][0]["name"] == "orders_amount_sum"
    bad = run("lineage", "-m", SHOP_MODEL, "revenu", "-f", "json")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "unknown_metric"


def test_attribute_table_and_json(run: Run, shop_db: Path, sql: Any) -> None:
    args = [
        "attribute",
        *_db(shop_db),
        "-M",
        "revenue",
        "--current",
        "2024-03-01..2024-04-01",
        "--baseline",
        "2024-01-01..2024-02-01",
        "-d",
        "orders.channel",
    ]
    j = json.loads(run(*args, "-f", "json").stdout)
    cur = sql(
        "SELECT SUM(amount) FROM orders WHERE order_date >= DATE '2024-03-01' AND order_date < DATE '2024-04-01'"
    )[0][0]
    assert j["total_change"]["current_value"] == pytest.approx(float(cur))
    text = run(*args)
    assert text.exit_code == 0
    assert "strategy term_wise (exact)" in text.stdout and "orders.channel" in text.stdout
    bad = run("attribute", *_db(shop_db), "-M", "revenue", "--current", "2024-03-01")
    assert bad.exit_code == 2


def test_query_output_formats_and_files(run: Run, shop_db: Path, tmp_path: Path) -> None:
    q = ["query", *_db(shop_db), "-M", "revenue,order_count", "-g", "orders.channel"]
    ref = json.loads(run(*q, "-f", "json").stdout)
    pq_file = tmp_path / "r.parquet"
    r = run(*q, "-f", "parquet", "-o", pq_file)
    assert r.exit_code == 0, r.output
    table = pq.read_table(pq_file)
    assert [float(v) for v in table.column("revenue").to_pylist()] == pytest.approx(
        [x["revenue"] for x in ref["rows"]]
    )
    assert table.schema.field("revenue").metadata[b"dosi.metric"] == b"revenue"
    arrow_file = tmp_path / "r.arrow"
    assert run(*q, "-f", "arrow", "--output", arrow_file).exit_code == 0
    with pa.ipc.open_file(arrow_file) as reader:  # the IPC file format (issue 26)
        assert reader.read_all().num_rows == ref["row_count"]
    stream_file = tmp_path / "r.arrows"
    assert run(*q, "--output", stream_file).exit_code == 0  # the stream, by its extension
    with pa.ipc.open_stream(stream_file.read_bytes()) as reader:
        assert reader.read_all().num_rows == ref["row_count"]
    csv_file = tmp_path / "r.csv"
    assert run(*q, "-f", "csv", "-o", csv_file).exit_code == 0
    assert csv_file.read_text().splitlines()[0] == "channel,revenue,order_count"
    json_file = tmp_path / "r.json"
    assert run(*q, "-f", "json", "-o", json_file).exit_code == 0
    assert json.loads(json_file.read_text())["rows"] == ref["rows"]


def test_chart_svg_and_spark(run: Run, shop_db: Path, tmp_path: Path) -> None:
    """Issue 26 item 4: `--chart x.svg` renders the one Vega-Lite spec (vl-convert): a line
    per channel over quarters, titled, with the grain on the x axis; `--spark` still prints."""
    pytest.importorskip("vl_convert")
    svg = tmp_path / "c.svg"
    r = run(
        "query",
        *_db(shop_db),
        "-M",
        "revenue",
        "-g",
        "orders.channel",
        "-g",
        "metric_time:quarter",
        "--start",
        "2024-01-01",
        "--end",
        "2025-01-01",
        "--chart",
        svg,
        "--spark",
    )
    assert r.exit_code == 0, r.output
    root = ET.fromstring(svg.read_text())
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "revenue by quarter per channel" in texts and "metric_time (quarter)" in texts
    assert {"mobile", "store", "web", "NULL"} <= set(texts)  # the legend: one line each
    lines = [g for g in root.iter() if "mark-line" in (g.get("class") or "")]
    assert len(lines) == 4  # one line mark per channel
    spark = [line for line in r.stdout.splitlines() if line.startswith("revenue (web)")]
    assert len(spark) == 1 and len(spark[0].split()[2]) == 4  # four quarters
    spec_file = tmp_path / "b.json"
    r = run("query", *_db(shop_db), "-M", "revenue", "-g", "orders.channel", "--chart", spec_file)
    assert r.exit_code == 0, r.output
    spec = json.loads(spec_file.read_text())
    assert spec["mark"] == {"type": "bar"} and spec["encoding"]["x"]["field"] == "channel"
    assert len(spec["data"]["values"]) == 4


def test_chart_png_through_vl_convert(run: Run, shop_db: Path, tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    png = tmp_path / "c.png"
    r = run("query", *_db(shop_db), "-M", "revenue", "-g", "metric_time:month", "--chart", png)
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = run("query", *_db(shop_db), "-M", "revenue", "--chart", tmp_path / "c.gif")
    assert bad.exit_code != 0 and "must end in .svg, .png, .html, .json" in bad.output


def test_binary_format_refuses_a_terminal_without_output(run: Run, shop_db: Path) -> None:
    """CliRunner's stdout is not a terminal, so the bytes go to stdout."""
    r = run("query", *_db(shop_db), "-M", "revenue", "-f", "arrow")
    assert r.exit_code == 0
    with pa.ipc.open_file(pa.py_buffer(r.stdout_bytes)) as reader:
        assert reader.read_all().column_names == ["revenue"]


def test_spinner_shows_elapsed_time_on_a_terminal_only(tmp_path: Path) -> None:
    """A query running longer than a second draws a spinner on stderr when stderr is a
    terminal; with stderr redirected to a file nothing but the error is written."""
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    empty_db = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty_db)).close()  # the model's source is a SELECT: any database
    cmd = [sys.executable, "-m", "dosi", "query", "-m", str(model), "--db", str(empty_db)]
    cmd += ["-M", "total", "--timeout", "2"]
    env = {k: v for k, v in os.environ.items() if k != "DOSI_NO_SPINNER"}
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(60)
    os.close(master)
    tty_err = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 4  # the timeout
    assert "querying…" in tty_err and "s\r" in tty_err.replace("\x1b", "")
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert plain.returncode == 4
    assert "querying" not in plain.stderr and "timeout" in plain.stderr


def test_select_and_attribute_need_a_database(run: Run) -> None:
    """As `dosi query`: no --db and no default connection is `no_connection` (exit 2)."""
    for args in (
        ["select", "-m", SHOP_MODEL, "--from", "orders", "-F", "orders.order_id"],
        [
            "attribute",
            "-m",
            SHOP_MODEL,
            "-M",
            "revenue",
            "--current",
            "2024-03-01..2024-04-01",
            "--baseline",
            "2024-01-01..2024-02-01",
            "-d",
            "orders.channel",
        ],
    ):
        r = run(*args, "-f", "json")
        assert r.exit_code == 2
        assert json.loads(r.stdout)["error"]["code"] == "no_connection"
