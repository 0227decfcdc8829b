"""CLI surfaces beyond compile/query: `serve`, `mcp`, `select`, `lineage`, `attribute`, and
the result writers every data command shares (`--format table|json|csv|parquet|arrow`,
`--output FILE`, `--chart FILE`, `--spark`, the spinner).

`register(group, h)` adds the commands to the `dosi` group; `h` carries the group's shared
options and helpers, so this module never imports `dosi.cli` (no import circle).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import click
import pyarrow as pa

from dosi.charts import sparklines, write_chart
from dosi.cli_output import (
    CliError,
    echo_json,
    print_csv,
    print_table,
    print_warnings,
)
from dosi.frontends.contract import EngineHolder
from dosi.frontends.pg import PgOptions, authenticator, start_background

RESULT_FORMATS = ("table", "text", "json", "csv", "parquet", "arrow")
BINARY_FORMATS = ("parquet", "arrow")


# -- results ------------------------------------------------------------------------------------
def result_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--output, --chart and --spark for a command that prints a result."""
    f = click.option(
        "--spark",
        is_flag=True,
        help="Print a terminal sparkline per metric (time series) below the result.",
    )(f)
    f = click.option(
        "--chart",
        "chart",
        metavar="FILE",
        default=None,
        help="Also draw the result to FILE (.svg, or .png with the charts extra): a line "
        "chart for time series, bars otherwise.",
    )(f)
    f = click.option(
        "--output",
        "-o",
        "output",
        metavar="FILE",
        default=None,
        help="Write the result to FILE instead of stdout (required for parquet / arrow on a "
        "terminal).",
    )(f)
    return f


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
        import pyarrow.parquet as pq

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


# -- commands -----------------------------------------------------------------------------------
def _split(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _window(text: str, flag: str) -> dict[str, str]:
    start, sep, end = text.partition("..")
    if not sep or not start or not end:
        raise CliError(
            "invalid_window",
            f"{flag} is START..END (end exclusive), got `{text}`",
            hint=f"e.g. {flag} 2024-03-01..2024-04-01",
        )
    return {"start": start.strip(), "end": end.strip()}


def _json_arg(text: str | None, what: str) -> Any:
    if text is None:
        return None
    if text == "-":
        text = sys.stdin.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError("invalid_json", f"{what} is not valid JSON: {exc.msg}") from None


def _need_database(engine: Any, db_path: str | None, connection: str | None) -> None:
    """As `dosi query`: running needs --db, or --connections with a default profile."""
    if db_path is None and connection is None and engine.connections.path_for(None) is None:
        engine.close()
        raise CliError(
            "no_connection",
            "no database to run on: pass --db PATH (or set DOSI_DB), or --connections FILE "
            "with a default profile (or --connection NAME)",
            hint="`--db :memory:` runs on an empty in-memory DuckDB",
        )


def register(group: click.Group, h: Any) -> None:
    """Add serve, mcp, select, lineage and attribute to the `dosi` group."""

    @group.command(epilog=h.epilog)
    @click.option("--from", "from_", metavar="DATASET", help="The dataset whose rows are listed.")
    @click.option(
        "--field",
        "-F",
        "fields",
        multiple=True,
        metavar="DATASET.FIELD[,..]",
        help="Field to project (dataset.field or dataset.field:grain); repeatable.",
    )
    @click.option("--where", "-w", "where", multiple=True, metavar="SQL", help="Row filter.")
    @click.option("--start", metavar="DATE", help="Time range start (inclusive).")
    @click.option("--end", metavar="DATE", help="Time range end (exclusive).")
    @click.option("--time-dimension", "time_dimension", metavar="FIELD", default=None)
    @click.option("--order-by", "order_by", multiple=True, metavar="COLUMN[:desc]")
    @click.option("--limit", "-l", type=click.IntRange(min=0), default=None, metavar="N")
    @click.option("--distinct", is_flag=True, help="Drop duplicate rows.")
    @click.option("--query", "-q", "query_json", metavar="JSON", help="The detail query as JSON.")
    @click.option("--timeout", type=float, default=None, metavar="SECONDS")
    @result_options
    @h.db_options
    @h.model_options
    @h.format_option(RESULT_FORMATS)
    def select(
        from_: str | None,
        fields: tuple[str, ...],
        where: tuple[str, ...],
        start: str | None,
        end: str | None,
        time_dimension: str | None,
        order_by: tuple[str, ...],
        limit: int | None,
        distinct: bool,
        query_json: str | None,
        timeout: float | None,
        output: str | None,
        chart: str | None,
        spark: bool,
        db: str | None,
        connections_file: str | None,
        connection: str | None,
        model: str | None,
        mode: str | None,
        fmt: str,
    ) -> None:
        """Detail rows: fields of --from and what it reaches many-to-one, no rollup.

        Example: dosi select -m model.yaml --db shop.duckdb --from orders
        -F orders.order_id,orders.amount,customers.segment --order-by amount:desc -l 5
        """
        fmt = h.fmt(fmt)
        q = _json_arg(query_json, "--query")
        if q is None:
            if not from_:
                raise CliError("missing_from", "pass --from DATASET (or --query JSON)")
            q = {"from": from_, "fields": _split(fields)}
            if where:
                q["where_sql"] = " AND ".join(f"({w})" for w in where)
            if start or end:
                tr: dict[str, str] = {}
                if start:
                    tr["start"] = start
                if end:
                    tr["end"] = end
                if time_dimension:
                    tr["dimension"] = time_dimension
                q["time_range"] = tr
            if order_by:
                q["order_by"] = [
                    {"key": k.rsplit(":", 1)[0], "desc": k.endswith(":desc")}
                    if k.endswith((":desc", ":asc"))
                    else {"key": k.lstrip("-"), "desc": k.startswith("-")}
                    for k in order_by
                ]
            if limit is not None:
                q["limit"] = limit
            if distinct:
                q["distinct"] = True
        engine = h.engine(model, mode, connections_file, connection)
        db_path = h.resolve_db(db)
        _need_database(engine, db_path, connection)
        try:
            with spinner("selecting"):
                result = engine.select(
                    q, connection=connection, timeout_secs=timeout, db_path=db_path
                )
        finally:
            engine.close()
        emit_result(fmt, result, output=output, chart=chart, spark=spark)

    @group.command(epilog=h.epilog)
    @click.argument("metric", required=False)
    @click.option("--redact-sql", is_flag=True, help="Hide inline SQL dataset sources.")
    @h.model_options
    @h.format_option(("table", "text", "json"))
    def lineage(
        metric: str | None, redact_sql: bool, model: str | None, mode: str | None, fmt: str
    ) -> None:
        """A metric's lineage: measures, datasets, joins (text tree), or the model's whole
        graph of tables, datasets, metrics and joins (--format json, without METRIC)."""
        fmt = h.fmt(fmt)
        engine = h.engine(model, mode)
        graph = engine.lineage(metric, redact_sql=redact_sql)
        if fmt == "json":
            echo_json(graph)
            return
        if metric is None:
            for m in engine.metrics():
                click.echo(engine.lineage_text(m["name"]))
            return
        click.echo(engine.lineage_text(metric), nl=False)

    @group.command(epilog=h.epilog)
    @click.option("--metric", "-M", "metric", required=False, metavar="NAME")
    @click.option("--current", metavar="START..END", help="The window to explain (end exclusive).")
    @click.option("--baseline", metavar="START..END", help="The window to compare against.")
    @click.option(
        "--dimension",
        "-d",
        "dimensions",
        multiple=True,
        metavar="FIELD[,..]",
        help="Candidate dimension; repeatable.",
    )
    @click.option("--where", "-w", "where", multiple=True, metavar="SQL")
    @click.option("--top", "top_n", type=click.IntRange(min=1), default=10, show_default=True)
    @click.option("--query", "-q", "query_json", metavar="JSON", help="The request as JSON.")
    @click.option("--timeout", type=float, default=None, metavar="SECONDS")
    @h.db_options
    @h.model_options
    @h.format_option(("table", "text", "json"))
    def attribute(
        metric: str | None,
        current: str | None,
        baseline: str | None,
        dimensions: tuple[str, ...],
        where: tuple[str, ...],
        top_n: int,
        query_json: str | None,
        timeout: float | None,
        db: str | None,
        connections_file: str | None,
        connection: str | None,
        model: str | None,
        mode: str | None,
        fmt: str,
    ) -> None:
        """Why a metric changed between two windows, by dimension (one statement).

        Example: dosi attribute -M revenue --current 2024-03-01..2024-04-01
        --baseline 2024-01-01..2024-02-01 -d orders.channel -d customers.segment
        """
        fmt = h.fmt(fmt)
        req = _json_arg(query_json, "--query")
        if req is None:
            if not metric or not current or not baseline:
                raise CliError(
                    "missing_option",
                    "pass --metric, --current START..END and --baseline START..END",
                )
            req = {
                "metric": metric,
                "current": _window(current, "--current"),
                "baseline": _window(baseline, "--baseline"),
                "dimensions": _split(dimensions),
                "top_n": top_n,
            }
            if where:
                req["where_sql"] = " AND ".join(f"({w})" for w in where)
        engine = h.engine(model, mode, connections_file, connection)
        db_path = h.resolve_db(db)
        _need_database(engine, db_path, connection)
        try:
            with spinner("attributing"):
                out = engine.attribute(
                    req, connection=connection, timeout_secs=timeout, db_path=db_path
                )
        finally:
            engine.close()
        if fmt == "json":
            echo_json(out)
            return
        _print_attribution(out)

    @group.command(epilog=h.epilog)
    @click.option("--host", default="127.0.0.1", show_default=True)
    @click.option("--port", type=int, default=8000, show_default=True)
    @click.option(
        "--token",
        default=None,
        metavar="TOKEN",
        help="Require `Authorization: Bearer TOKEN` on /v1 (default: $DOSI_TOKEN).",
    )
    @click.option("--max-body", type=int, default=1_000_000, show_default=True, metavar="BYTES")
    @click.option("--pg-port", type=int, default=None, metavar="PORT",
                  help="Also serve the PostgreSQL protocol on this port (see `dosi pg`).")
    @click.option(
        "--timeout",
        type=float,
        default=30.0,
        show_default=True,
        metavar="SECONDS",
        help="Per-request query timeout.",
    )
    @h.db_options
    @h.model_options
    def serve(
        host: str,
        port: int,
        token: str | None,
        max_body: int,
        pg_port: int | None,
        timeout: float,
        db: str | None,
        connections_file: str | None,
        connection: str | None,
        model: str | None,
        mode: str | None,
    ) -> None:
        """Serve the REST API (/v1/...) and the web explorer (/) with uvicorn.

        The model file is reloaded when it changes; requests in flight finish on the old one.
        """
        try:
            from dosi.frontends.rest import serve as run
        except ImportError as exc:
            raise CliError(
                "missing_extra", f"dosi serve needs pip install 'dosi[serve]' ({exc})"
            ) from None
        path = h.resolve_model(model)
        if path == "-":
            raise CliError("model_from_stdin", "dosi serve reloads the model file: pass a path")
        conns = h.load_connections(connections_file)
        if pg_port is not None:  # the PostgreSQL frontend beside REST, same token
            holder = EngineHolder(path, conns, h.resolve_db(db), h.resolve_mode(mode))
            start_background(holder, PgOptions(
                host=host, port=pg_port, query_timeout=timeout,
                auth=authenticator(token or os.environ.get("DOSI_TOKEN") or None)))
        run(
            path,
            host=host,
            port=port,
            connections=conns,
            db_path=h.resolve_db(db),
            mode=h.resolve_mode(mode),
            token=token or os.environ.get("DOSI_TOKEN") or None,
            max_body=max_body,
            timeout=timeout,
        )

    @group.command(epilog=h.epilog)
    @click.option(
        "--transport",
        type=click.Choice(["stdio", "http"]),
        default="stdio",
        show_default=True,
        help="stdio for a local agent; http is MCP streamable HTTP at /mcp.",
    )
    @click.option("--host", default="127.0.0.1", show_default=True)
    @click.option("--port", type=int, default=8765, show_default=True)
    @click.option("--timeout", type=float, default=30.0, show_default=True, metavar="SECONDS")
    @h.db_options
    @h.model_options
    def mcp(
        transport: str,
        host: str,
        port: int,
        timeout: float,
        db: str | None,
        connections_file: str | None,
        connection: str | None,
        model: str | None,
        mode: str | None,
    ) -> None:
        """Serve the model to AI agents over MCP: list_metrics, describe_metric,
        list_dimensions, query, compile, explain, select, attribute, validate."""
        try:
            from dosi.frontends.mcp_server import run_mcp
        except ImportError as exc:
            raise CliError(
                "missing_extra", f"dosi mcp needs pip install 'dosi[mcp]' ({exc})"
            ) from None
        run_mcp(
            h.resolve_model(model),
            transport=transport,
            host=host,
            port=port,
            connections=h.load_connections(connections_file),
            db_path=h.resolve_db(db),
            mode=h.resolve_mode(mode),
            timeout=timeout,
        )


def _print_attribution(out: Mapping[str, Any]) -> None:
    click.echo(
        f"{out['metric']}: strategy {out['strategy']}"
        + (f" ({out['attribution']})" if out.get("attribution") else "")
    )
    if not out.get("attributable"):
        reason = out.get("unsupported_reason") or {}
        click.echo(f"not attributable: [{reason.get('code')}] {reason.get('message')}")
        return
    t = out["total_change"]
    pct = t.get("pct_change")
    click.echo(
        f"baseline {t['baseline_value']:,.6g} -> current {t['current_value']:,.6g}: "
        f"delta {t['delta']:+,.6g}" + (f" ({pct:+.2f}%)" if pct is not None else "")
    )
    for rank in out["dimension_ranking"]:
        dim = rank["dimension"]
        click.echo("")
        rows = [
            {
                "value": v["value"],
                "baseline": v["baseline_value"],
                "current": v["current_value"],
                "delta": v["delta"],
                "contribution_pct": v["contribution_pct"],
                "kind": v["segment_kind"],
            }
            for v in out["per_dimension"][dim]["values"]
        ]
        print_table(
            ["value", "baseline", "current", "delta", "contribution_pct", "kind"],
            rows,
            title=f"{dim}  (score {rank['score']:.3f})",
        )
    for w in out.get("warnings") or []:
        click.echo(f"warning: [{w['code']}] {w['message']}", err=True)
