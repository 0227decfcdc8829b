"""`dosi compile`, `dosi explain` and `dosi query`: a metric query (JSON, a file, stdin or the
query flags) compiled to SQL, shown as its plan, or run and printed."""

from __future__ import annotations

from typing import Any

import click

from dosi.errors import ExecuteError
from dosi.frontends.cli.engine_input import open_engine, resolve_db
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.formats import check_output_path
from dosi.frontends.cli.options import (
    RESULT_FORMATS,
    TEXT_FORMATS,
    db_options,
    format_option,
    model_options,
    query_options,
    result_options,
    use_format,
)
from dosi.frontends.cli.output import CliError, dumps, echo_json, print_warnings
from dosi.frontends.cli.query_input import query_from
from dosi.frontends.cli.results import decimal_scales, emit_result
from dosi.frontends.cli.running import run_query


@click.command("compile", epilog=COMMAND_EPILOG)
@query_options
@click.option(
    "--dialect",
    "-d",
    default="duckdb",
    show_default=True,
    metavar="NAME",
    help="SQL dialect (duckdb, postgres, snowflake, bigquery, databricks, trino, ...).",
)
@click.option("--pretty", is_flag=True, help="Indent the SQL.")
@model_options
@format_option(TEXT_FORMATS)
def compile_(
    dialect: str, pretty: bool, model: str | None, mode: str | None, fmt: str, **kw: Any
) -> None:
    """Compile a metric query to SQL without running it.

    Give the query as --query JSON / --query-file FILE, or with the query flags
    (-M revenue -g metric_time:month --start 2025-01-01 ...).
    """
    fmt = use_format(fmt)
    query = query_from(kw)
    engine = open_engine(model, mode)
    result = engine.compile(query, dialect=dialect, pretty=pretty)
    if fmt == "json":
        echo_json(result)
        return
    sql = result["sql"]
    click.echo(sql if sql.rstrip().endswith(";") else sql.rstrip() + ";")
    print_warnings(result.get("warnings") or [])


@click.command(epilog=COMMAND_EPILOG)
@query_options
@click.option("--sql", "show_sql", is_flag=True, help="Also print the compiled (pretty) SQL.")
@click.option(
    "--db",
    "db",
    metavar="PATH",
    default=None,
    help="The DuckDB database the plan is for: with declared rollups, the Rollups section "
    "says which built rollup serves each branch there. Default: $DOSI_DB.",
)
@model_options
@format_option(TEXT_FORMATS)
def explain(
    show_sql: bool, db: str | None, model: str | None, mode: str | None, fmt: str, **kw: Any
) -> None:
    """Show the query plan: the tree of plan nodes (scans, joins, aggregates, merge, windows,
    order), and the output columns; --format json adds the tree as JSON (`plan_tree`)."""
    fmt = use_format(fmt)
    query = query_from(kw)
    engine = open_engine(model, mode)
    plan = engine.explain(query, db_path=resolve_db(db))
    compiled = engine.compile(query, pretty=True)
    if fmt == "json":
        echo_json(
            {
                "plan": plan,
                "plan_tree": engine.plan_tree(query),
                "outputs": compiled["outputs"],
                "requested_columns": compiled["requested_columns"],
                "warnings": compiled["warnings"],
                "sql": compiled["sql"],
            }
        )
        return
    click.echo(plan.rstrip())
    click.echo("Outputs")
    for d in compiled["requested_columns"]:
        click.echo(f"  {d['column']} <- {d['requested']}")
    for o in compiled["outputs"]:
        params = o.get("params")
        suffix = f" params={dumps(params, indent=None)}" if params else ""
        click.echo(f"  {o['column']} <- metric {o['metric']}{suffix}")
    if show_sql:
        click.echo()
        click.echo(compiled["sql"].rstrip() + ";")
    print_warnings(compiled.get("warnings") or [])


@click.command(epilog=COMMAND_EPILOG)
@query_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Cancel the query after this many seconds (exit 4).",
)
@click.option("--show-sql", is_flag=True, help="Print the SQL that runs to stderr.")
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help='Read the warehouse, bypassing the result cache (the query key "cache": false).',
)
@result_options
@db_options
@model_options
@format_option(RESULT_FORMATS)
def query(
    timeout: float | None,
    show_sql: bool,
    no_cache: bool,
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
    **kw: Any,
) -> None:
    """Run a metric query on the connection's engine (DuckDB by default) and print the rows.

    --format table prints a table (warnings on stderr), csv a header and rows, json the whole
    result (dialect, sql, outputs, warnings, requested_columns, columns, rows, row_count),
    jsonl one JSON object per row; parquet, arrow (the Arrow IPC file) and arrows (the IPC
    stream) write the Arrow table. --output FILE writes to a file in the format its extension
    says (unless --format says otherwise), --chart FILE draws the result (.svg, .png, .html, .json),
    --spark prints a sparkline per metric. Ctrl-C cancels the running query (exit 130).
    """
    fmt = use_format(fmt, output)
    check_output_path(output)
    q = query_from(kw)
    engine = open_engine(model, mode, connections_file, connection)
    db_path = resolve_db(db)
    if db_path is None and connection is None and engine.connections.path_for(None) is None:
        engine.close()
        raise CliError(
            "no_connection",
            "no database to run the query on: pass --db PATH (or set DOSI_DB), or "
            "--connections FILE with a default profile (or --connection NAME)",
            hint="`--db :memory:` runs on an empty in-memory DuckDB (sources that read files); "
            "`dosi compile` prints the SQL without running it",
        )
    if show_sql:
        click.echo(engine.compile(q)["sql"], err=True)
    try:
        result = run_query(
            lambda token: engine.execute(
                q,
                connection=connection,
                timeout_secs=timeout,
                db_path=db_path,
                cancellation=token,
                cache=not no_cache,
            ),
            "querying",
            lambda: engine.progress(connection, db_path),
        )
    except ExecuteError as err:
        _cli_hint(err)
        raise
    finally:
        engine.close()
    emit_result(
        fmt,
        result,
        output=output,
        chart=chart,
        spark=spark,
        scales=decimal_scales(result),
        precision=precision,
    )


def _cli_hint(err: ExecuteError) -> None:
    """Say the engine's hints in command-line terms (--db, --timeout)."""
    hint = err.hint or ""
    hint = hint.replace("pass db_path= an existing", "pass --db an existing")
    hint = hint.replace("raise timeout_secs", "raise --timeout").replace("(db_path)", "(--db)")
    err.hint = hint or None
