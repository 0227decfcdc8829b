"""`dosi select`, `dosi lineage` and `dosi attribute`: detail rows (no rollup), what a metric
reads, and why a metric changed between two windows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from dosi.analysis.attribution import NULL_SEGMENT
from dosi.frontends.cli.engine_input import need_database, open_engine, resolve_db
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.formats import check_output_path
from dosi.frontends.cli.options import (
    RESULT_FORMATS,
    db_options,
    format_option,
    model_options,
    result_options,
    use_format,
)
from dosi.frontends.cli.output import CliError, echo_json, print_table
from dosi.frontends.cli.query_input import json_argument
from dosi.frontends.cli.results import emit_result
from dosi.frontends.cli.running import run_query


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


@click.command(epilog=COMMAND_EPILOG)
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
@db_options
@model_options
@format_option(RESULT_FORMATS)
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
    precision: int | None,
    db: str | None,
    connections_file: str | None,
    connection: str | None,
    model: str | None,
    mode: str | None,
    fmt: str | None,
) -> None:
    """Detail rows: fields of --from and what it reaches many-to-one, no rollup.

    Example: dosi select -m model.yaml --db shop.duckdb --from orders
    -F orders.order_id,orders.amount,customers.segment --order-by amount:desc -l 5
    """
    fmt = use_format(fmt, output)
    check_output_path(output)
    q = json_argument(query_json, "--query")
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
    engine = open_engine(model, mode, connections_file, connection)
    db_path = resolve_db(db)
    need_database(engine, db_path, connection)
    try:
        result = run_query(
            lambda token: engine.select(
                q,
                connection=connection,
                timeout_secs=timeout,
                db_path=db_path,
                cancellation=token,
            ),
            "selecting",
            lambda: engine.progress(connection, db_path),
        )
    finally:
        engine.close()
    emit_result(fmt, result, output=output, chart=chart, spark=spark, precision=precision)


@click.command(epilog=COMMAND_EPILOG)
@click.argument("metric", required=False)
@click.option("--redact-sql", is_flag=True, help="Hide inline SQL dataset sources.")
@model_options
@format_option(("table", "text", "json"))
def lineage(
    metric: str | None, redact_sql: bool, model: str | None, mode: str | None, fmt: str
) -> None:
    """A metric's lineage: measures, datasets, joins (text tree), or the model's whole
    graph of tables, datasets, metrics and joins (--format json, without METRIC)."""
    fmt = use_format(fmt)
    engine = open_engine(model, mode)
    graph = engine.lineage(metric, redact_sql=redact_sql)
    if fmt == "json":
        echo_json(graph)
        return
    if metric is None:
        for m in engine.metrics():
            click.echo(engine.lineage_text(m["name"]))
        return
    click.echo(engine.lineage_text(metric), nl=False)


@click.command(epilog=COMMAND_EPILOG)
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
@db_options
@model_options
@format_option(("table", "text", "json"))
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
    fmt = use_format(fmt)
    req = json_argument(query_json, "--query")
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
    engine = open_engine(model, mode, connections_file, connection)
    db_path = resolve_db(db)
    need_database(engine, db_path, connection)
    try:
        out = run_query(
            lambda token: engine.attribute(
                req,
                connection=connection,
                timeout_secs=timeout,
                db_path=db_path,
                cancellation=token,
            ),
            "attributing",
            lambda: engine.progress(connection, db_path),
        )
    finally:
        engine.close()
    if fmt == "json":
        echo_json(out)
        return
    _print_attribution(out)


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
                # the NULL segment shows as every NULL does in a table (NULL)
                "value": None if v["value"] == NULL_SEGMENT else v["value"],
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
