"""`dosi serve` (the REST API and the web explorer) and `dosi mcp` (the MCP server).

Their servers need optional extras (fastapi and uvicorn; the MCP SDK), so they are loaded
through `dosi.frontends.extras` only when the command runs: the `dosi` command starts, and
`dosi serve --help` works, without them. `dosi serve --pg-port` also starts the PostgreSQL
wire server (`dosi.frontends.pg`, no extra needed) beside REST."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dosi.access.policy import AccessSource
from dosi.frontends.cli.commands.access import access_option
from dosi.frontends.cli.engine_input import (
    load_connections,
    resolve_db,
    resolve_mode,
    resolve_model,
)
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.options import db_options, model_options
from dosi.frontends.cli.output import CliError
from dosi.frontends.extras import load_extra
from dosi.frontends.holder import EngineHolder, default_memory_budget
from dosi.frontends.limits import limits_from_env, memory_budget_from
from dosi.frontends.pg import PgOptions, authenticator, start_background
from dosi.frontends.tokens import usable_token

REST_SERVER = "dosi.frontends.rest.server"
MCP_SERVER = "dosi.frontends.mcp.server"


F = TypeVar("F", bound=Callable[..., Any])

_max_rows = click.option(
    "--max-rows",
    type=int,
    default=None,
    metavar="N",
    help="Refuse an answer of more rows (result_too_large; default $DOSI_MAX_ROWS or "
    "100000; 0: no limit). A request may ask for less (?max_rows=).",
)
_max_result_bytes = click.option(
    "--max-result-bytes",
    default=None,
    metavar="SIZE",
    help="Refuse an answer larger than this once encoded (default $DOSI_MAX_RESULT_BYTES or "
    "64MB; 0: no limit). A request may ask for less (?max_bytes=).",
)
_memory_budget = click.option(
    "--memory-budget",
    default=None,
    metavar="SIZE",
    help="Memory for all query engines together; each DuckDB gets its share (default "
    "$DOSI_MEMORY_BUDGET or half the machine's memory).",
)


def limit_options(fn: F) -> F:
    """The serving limits (issue 29 item 1), the same options on `serve` and `mcp`."""
    return _max_rows(_max_result_bytes(_memory_budget(fn)))


@click.command(epilog=COMMAND_EPILOG)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="Require `Authorization: Bearer TOKEN` on /v1 (default: $DOSI_TOKEN).",
)
@click.option("--max-body", type=int, default=1_000_000, show_default=True, metavar="BYTES")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer requests whose Host header is NAME (repeatable; default: loopback names "
    "when bound to loopback, any name otherwise).",
)
@click.option(
    "--header-timeout",
    "head_timeout",
    type=float,
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="Close a connection that has not sent a complete request head within this time.",
)
@click.option(
    "--body-timeout",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Answer 408 when a request body has not fully arrived within this time.",
)
@click.option(
    "--max-connections",
    type=int,
    default=512,
    show_default=True,
    metavar="N",
    help="Answer 503 above this many open connections or requests in flight.",
)
@click.option(
    "--pg-port",
    type=int,
    default=None,
    metavar="PORT",
    help="Also serve the PostgreSQL protocol on this port (see `dosi pg`).",
)
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Per-request timeout: compile, run, conversion and encoding together.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 4096),
    default=40,
    show_default=True,
    envvar="DOSI_WORKERS",
    metavar="N",
    help="Worker threads that compile, run and encode requests ($DOSI_WORKERS); raise it "
    "above the number of concurrent clients you expect.",
)
@limit_options
@access_option
@db_options
@model_options
def serve(
    host: str,
    port: int,
    token: str | None,
    max_body: int,
    allow_hosts: tuple[str, ...],
    head_timeout: float,
    body_timeout: float,
    max_connections: int,
    pg_port: int | None,
    timeout: float,
    workers: int,
    access_file: str | None,
    max_rows: int | None,
    max_result_bytes: str | None,
    memory_budget: str | None,
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
        rest = load_extra(REST_SERVER)
    except ImportError as exc:
        raise CliError(
            "missing_extra", f"dosi serve needs pip install 'dosi[serve]' ({exc})"
        ) from None
    path = resolve_model(model)
    if path == "-":
        raise CliError("model_from_stdin", "dosi serve reloads the model file: pass a path")
    conns = load_connections(connections_file)
    limits = limits_from_env(max_rows, max_result_bytes, timeout)
    budget = memory_budget_from(memory_budget)
    # an empty or unusable DOSI_TOKEN is a start-up error, never silently no authentication
    secret = rest.usable_token(token if token is not None else os.environ.get("DOSI_TOKEN"))
    access = AccessSource(access_file) if access_file else None  # a bad file fails here
    if pg_port is not None:  # the PostgreSQL frontend beside REST, same token and users
        holder = EngineHolder(
            path,
            conns,
            resolve_db(db),
            resolve_mode(mode),
            memory_budget=budget if budget is not None else default_memory_budget(),
        )
        start_background(
            holder,
            PgOptions(
                host=host,
                port=pg_port,
                query_timeout=timeout,
                auth=authenticator(secret, access),
                access=access,
                max_rows=limits.max_rows,
                max_bytes=limits.max_bytes,
            ),
        )
    rest.serve(
        path,
        host=host,
        port=port,
        connections=conns,
        db_path=resolve_db(db),
        mode=resolve_mode(mode),
        token=secret,
        max_body=max_body,
        timeout=timeout,
        allow_hosts=allow_hosts,
        head_timeout=head_timeout,
        max_connections=max_connections,
        body_timeout=body_timeout,
        access=access,
        max_rows=limits.max_rows,
        max_result_bytes=limits.max_bytes,
        memory_budget=budget,
        workers=workers,
    )


@click.command(epilog=COMMAND_EPILOG)
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
@click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help="Over HTTP, require `Authorization: Bearer TOKEN` (default: $DOSI_TOKEN).",
)
@click.option(
    "--user",
    default=None,
    metavar="NAME",
    help="Over stdio with --access, the access file's user the agent answers as.",
)
@access_option
@limit_options
@db_options
@model_options
def mcp(
    transport: str,
    host: str,
    port: int,
    timeout: float,
    token: str | None,
    user: str | None,
    access_file: str | None,
    max_rows: int | None,
    max_result_bytes: str | None,
    memory_budget: str | None,
    db: str | None,
    connections_file: str | None,
    connection: str | None,
    model: str | None,
    mode: str | None,
) -> None:
    """Serve the model to AI agents over MCP: list_metrics, describe_metric,
    list_dimensions, query, sql, compile, explain, select, attribute, validate."""
    try:
        mcp_server = load_extra(MCP_SERVER)
    except ImportError as exc:
        raise CliError("missing_extra", f"dosi mcp needs pip install 'dosi[mcp]' ({exc})") from None
    secret = usable_token(token if token is not None else os.environ.get("DOSI_TOKEN"))
    if access_file:
        AccessSource(access_file)  # an unreadable access file is a start-up error
    if transport == "stdio" and access_file and user is None:
        raise CliError("missing_user", "dosi mcp --access over stdio needs --user NAME")
    mcp_server.run_mcp(
        resolve_model(model),
        transport=transport,
        host=host,
        port=port,
        connections=load_connections(connections_file),
        db_path=resolve_db(db),
        mode=resolve_mode(mode),
        timeout=timeout,
        token=secret if transport == "http" else None,
        access=access_file or None,
        user=user,
        limits=limits_from_env(max_rows, max_result_bytes, timeout),
        memory_budget=memory_budget_from(memory_budget),
    )
