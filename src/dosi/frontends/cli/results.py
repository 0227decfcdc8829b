"""Result writers every data command shares: `--format table|text|json|csv|parquet|arrow`,
`--output FILE`, `--chart FILE`, `--spark`, the token legend of opaque param columns, and the
elapsed-time spinner on a terminal."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.parquet as pq

from dosi.frontends.charts.spark import sparklines
from dosi.frontends.charts.write import write_chart
from dosi.frontends.cli.output import CliError, echo_json, print_csv, print_table, print_warnings

BINARY_FORMATS = ("parquet", "arrow")


@contextlib.contextmanager
def spinner(label: str = "running", after: float = 1.0) -> Iterator[None]:
    """An elapsed-time spinner on stderr for work that takes longer than `after` seconds;
    silent when stderr is not a terminal."""
    if not sys.stderr.isatty() or os.environ.get("DOSI_NO_SPINNER"):
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def spin() -> None:
        frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
        if done.wait(after):
            return
        i = 0
        while not done.wait(0.1):
            elapsed = time.monotonic() - started
            sys.stderr.write(f"\r{frames[i % len(frames)]} {label}… {elapsed:5.1f}s")
            sys.stderr.flush()
            i += 1
        sys.stderr.write("\r" + " " * (len(label) + 16) + "\r")
        sys.stderr.flush()

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()


def _binary(table: pa.Table, fmt: str) -> bytes:
    sink = pa.BufferOutputStream()
    if fmt == "parquet":
        pq.write_table(table, sink)
    else:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _text(fmt: str, result: Mapping[str, Any], scales: Mapping[str, int]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if fmt == "json":
            echo_json(dict(result))
        elif fmt == "csv":
            print_csv(result["columns"], result["rows"])
        else:
            print_table(result["columns"], result["rows"], scales=scales)
            n = result["row_count"]
            click.echo(f"({n} row{'s' if n != 1 else ''})")
    return buf.getvalue()


def emit_result(
    fmt: str,
    result: Mapping[str, Any],
    *,
    output: str | None = None,
    chart: str | None = None,
    spark: bool = False,
    scales: Mapping[str, int] | None = None,
) -> None:
    """Print or write a result in `fmt`; draw its chart; print sparklines (stderr if the
    result itself goes to stdout in a machine format)."""
    if fmt in BINARY_FORMATS:
        table = getattr(result, "arrow", None)
        if table is None:
            raise CliError("unsupported_format", f"this result has no Arrow table for {fmt}")
        data = _binary(table, fmt)
        if output is None:
            if sys.stdout.isatty():
                raise CliError(
                    "binary_to_terminal",
                    f"--format {fmt} is binary: pass --output FILE (or redirect stdout)",
                )
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            Path(output).write_bytes(data)
    elif output is not None:
        Path(output).write_text(_text(fmt, result, scales or {}), encoding="utf-8")
    elif fmt == "json":
        echo_json(dict(result))
    else:
        click.echo(_text(fmt, result, scales or {}), nl=False)
        if fmt == "table":
            for line in token_legend(result.get("outputs") or []):
                click.echo(line)
    if output is not None:
        click.echo(f"wrote {result['row_count']} rows to {output}", err=True)
    if chart is not None:
        try:
            write_chart(result, chart)
        except ImportError as exc:
            raise CliError("missing_extra", str(exc)) from None
        except ValueError as exc:
            raise CliError("invalid_chart_path", str(exc)) from None
        click.echo(f"chart written to {chart}", err=True)
    if spark:
        lines = sparklines(result)
        to_err = output is None and fmt != "table"
        if not lines:
            click.echo("(no time series to draw: group by metric_time:<grain>)", err=True)
        for line in lines:
            click.echo(line, err=to_err)
    if fmt in ("table", "csv"):
        print_warnings(result.get("warnings") or [])


def token_legend(outputs: list[dict[str, Any]]) -> list[str]:
    """PARAM-TOK-07: a legend line per column whose suffix is an opaque token (`_h<hex>`), with
    the original values it stands for."""
    lines = []
    for o in outputs:
        params = o.get("params") or {}
        column = o.get("column", "")
        opaque = [
            f"{k}={v}"
            for k, v in params.items()
            if isinstance(v, str)
            and re.search(rf"__{re.escape(k)}_h[0-9a-f]{{8,16}}(__|$)", column)
        ]
        if opaque:
            lines.append(f"legend: {column} = {', '.join(opaque)}")
    return lines


def print_result(fmt: str, result: Mapping[str, Any]) -> None:
    if fmt == "json":
        echo_json(dict(result))
        return
    columns, rows = result["columns"], result["rows"]
    if fmt == "csv":
        print_csv(columns, rows)
    else:
        print_table(columns, rows, scales=decimal_scales(result))
        n = result["row_count"]
        click.echo(f"({n} row{'s' if n != 1 else ''})")
    print_warnings(result.get("warnings") or [])


def decimal_scales(result: Any) -> dict[str, int]:
    """{column: scale} of the DECIMAL columns of a result's Arrow table."""
    table = getattr(result, "arrow", None)
    if table is None:
        return {}
    return {f.name: f.type.scale for f in table.schema if pa.types.is_decimal(f.type)}
