"""`dosi sql` and `dosi pg`: semantic SQL from the command line, and the PostgreSQL wire
server (docs/serving/sql.md). The server needs no optional extra, so it is imported directly;
`dosi serve --pg-port` starts the same server beside REST (`commands.serve`)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import click

from dosi.access.audit import audit_to_stderr
from dosi.access.policy import AccessSource
from dosi.frontends.cli.commands.access import access_option
from dosi.frontends.cli.engine_input import (
    load_connections,
    open_engine,
    resolve_db,
    resolve_mode,
    resolve_model,
)
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
from dosi.frontends.cli.output import echo_json
from dosi.frontends.cli.results import emit_result
from dosi.frontends.cli.running import run_query
from dosi.frontends.contract import EngineHolder
from dosi.frontends.pg import DEFAULT_PORT, PgOptions, PgServer, authenticator


def pg_options(
    token: str | None,
    host: str,
    port: int,
    certfile: str | None,
    keyfile: str | None,
    max_connections: int,
    timeout: float | None,
    max_rows: int | None,
    access_file: str | None = None,
) -> PgOptions:
    access = AccessSource(access_file) if access_file else None
    if access is not None:
        audit_to_stderr()
    return PgOptions(
        host=host,
        port=port,
        auth=authenticator(token or os.environ.get("DOSI_TOKEN") or None, access),
        access=access,
        certfile=certfile or os.environ.get("DOSI_PG_CERT") or None,
        keyfile=keyfile or os.environ.get("DOSI_PG_KEY") or None,
        max_connections=max_connections,
        query_timeout=timeout,
        max_rows=max_rows or None,
    )


def pg_click_options(f: Any) -> Any:
    """The server's security and limit options."""
    for opt in reversed(
        [
            click.option(
                "--pg-cert",
                "certfile",
                default=None,
                metavar="FILE",
                help="TLS certificate (PEM); TLS is offered when set ($DOSI_PG_CERT).",
            ),
            click.option(
                "--pg-key",
                "keyfile",
                default=None,
                metavar="FILE",
                help="TLS private key (PEM), if not in the certificate file.",
            ),
            click.option(
                "--pg-max-connections",
                "max_connections",
                type=click.IntRange(min=1),
                default=64,
                show_default=True,
            ),
            click.option(
                "--pg-max-rows",
                "max_rows",
                type=click.IntRange(min=0),
                default=1_000_000,
                show_default=True,
                help="A larger result is an error (0: no limit).",
            ),
        ]
    ):
        f = opt(f)
    return f


@click.command(epilog=COMMAND_EPILOG)
@click.argument("statement", metavar="SQL")
@click.option(
    "--explain",
    "show_query",
    is_flag=True,
    help="Print the dosi query the statement translates to, and stop.",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS"
)
@result_options
@db_options
@model_options
@format_option(RESULT_FORMATS)
def sql(
    statement: str,
    show_query: bool,
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
    """Answer a SQL SELECT over the model's virtual table (one table named after the
    model: dimension columns such as orders__channel and metric_time__month, and one
    column per metric), e.g. "SELECT orders__channel, MEASURE(revenue) FROM shop GROUP
    BY 1". `-` reads the statement from stdin."""
    fmt = use_format(fmt, output)
    check_output_path(output)
    text = sys.stdin.read() if statement == "-" else statement
    engine = open_engine(model, mode, connections_file, connection)
    try:
        if show_query:
            plan = engine.sql_plan(text)
            echo_json(plan.query)
            return
        db_path = resolve_db(db)
        result = run_query(
            lambda token: engine.sql(
                text,
                connection=connection,
                timeout_secs=timeout,
                db_path=db_path,
                cancellation=token,
            ),
            "querying",
            lambda: engine.progress(connection, db_path),
        )
    finally:
        engine.close()
    emit_result(fmt, result, output=output, chart=chart, spark=spark, precision=precision)


@click.command(epilog=COMMAND_EPILOG)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=DEFAULT_PORT, show_default=True)
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="Require this password (default: $DOSI_TOKEN; none: no password).",
)
@click.option(
    "--timeout",
    type=float,
    default=120.0,
    show_default=True,
    metavar="SECONDS",
    help="Per-query timeout.",
)
@pg_click_options
@access_option
@db_options
@model_options
def pg(
    host: str,
    port: int,
    token: str | None,
    timeout: float,
    certfile: str | None,
    keyfile: str | None,
    max_connections: int,
    max_rows: int,
    access_file: str | None,
    db: str | None,
    connections_file: str | None,
    connection: str | None,
    model: str | None,
    mode: str | None,
) -> None:
    """Serve the model's semantic table over the PostgreSQL protocol, for BI tools
    (Superset, Metabase, Tableau, DBeaver, Excel) and any PostgreSQL client."""
    path = resolve_model(model)
    holder = EngineHolder(
        path, load_connections(connections_file), resolve_db(db), resolve_mode(mode)
    )
    options = pg_options(
        token, host, port, certfile, keyfile, max_connections, timeout, max_rows, access_file
    )
    server = PgServer(holder, options)
    try:
        asyncio.run(server.serve_forever())
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
