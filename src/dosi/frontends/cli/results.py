"""Result writers every data command shares: `--format table|text|json|jsonl|csv|parquet|
arrow|arrows` (or the format `--output`'s extension implies, `formats.resolve_format`),
`--output FILE`, `--chart FILE`, `--spark`, `--precision N`, and the token legend of opaque
param columns."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Mapping
from typing import Any

import click
import pyarrow as pa

from dosi.frontends.charts.spark import sparklines
from dosi.frontends.charts.write import write_chart
from dosi.frontends.cli.formats import BINARY_FORMATS, binary, write_output
from dosi.frontends.cli.output import (
    CliError,
    dumps,
    echo_json,
    print_csv,
    print_table,
    print_warnings,
)


def _text(
    fmt: str, result: Mapping[str, Any], scales: Mapping[str, int], precision: int | None
) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        if fmt == "json":
            echo_json(dict(result))
        elif fmt == "jsonl":
            for row in result["rows"]:
                click.echo(dumps({c: row.get(c) for c in result["columns"]}, indent=None))
        elif fmt == "csv":
            print_csv(result["columns"], result["rows"])
        else:
            print_table(result["columns"], result["rows"], scales=scales, precision=precision)
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
    precision: int | None = None,
) -> None:
    """Print or write a result in `fmt`; draw its chart; print sparklines (stderr if the
    result itself goes to stdout in a machine format). `precision` fixes the digits after
    the point of every non-integer number in a table."""
    if output == "-":
        output = None
    if fmt in BINARY_FORMATS:
        table = getattr(result, "arrow", None)
        if table is None:
            raise CliError("unsupported_format", f"this result has no Arrow table for {fmt}")
        data = binary(table, fmt)
        if output is None:
            if sys.stdout.isatty():
                raise CliError(
                    "binary_to_terminal",
                    f"--format {fmt} is binary: pass --output FILE (or redirect stdout)",
                )
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            write_output(output, data)
    elif output is not None:
        write_output(output, _text(fmt, result, scales or {}, precision))
    elif fmt == "json":
        echo_json(dict(result))
    else:
        click.echo(_text(fmt, result, scales or {}, precision), nl=False)
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
    if fmt in ("table", "csv", "jsonl"):
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
