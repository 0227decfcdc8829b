"""Option types of the `dosi` command line, shared by every command.

The model, mode and database options may be given before or after the subcommand name
(`dosi -m M query ...` or `dosi query -m M ...`): the group stores them in `CliState`, and the
flags without a parameter of their own (--trust-sql, --allow-extensions, --memory-limit) are
stored there by a callback. `use_format` records the output format, so a failure is reported
in it (`app.DosiGroup`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from dosi.frontends.cli.formats import normalise, resolve_format

F = TypeVar("F", bound=Callable[..., Any])

TEXT_FORMATS = ("table", "text", "json")
DATA_FORMATS = ("table", "text", "json", "csv")
RESULT_FORMATS = ("table", "text", "json", "jsonl", "csv", "parquet", "arrow", "arrows")


@dataclass
class CliState:
    """What the group and its commands share for one invocation (`click`'s context object)."""

    model: str | None = None
    mode: str | None = None
    db: str | None = None
    fmt: str = "table"
    trust_sql: bool = False
    allow_extensions: bool = False
    memory_limit: str | None = None


def cli_state() -> CliState:
    """The current invocation's state (made on first use)."""
    ctx = click.get_current_context()
    obj = ctx.find_object(CliState)
    if obj is None:
        obj = ctx.ensure_object(CliState)
    return obj


def _set_state(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A callback storing an option in the shared state, so it works before or after the
    subcommand name without every command taking it as a parameter."""

    def store(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value:
            setattr(ctx.ensure_object(CliState), name, value)

    return store


def model_options(f: F) -> F:
    """--model/-m, --osi-basic / --osi-datus (the `mode` parameter) and --trust-sql."""
    f = click.option(
        "--trust-sql",
        is_flag=True,
        expose_value=False,
        callback=_set_state("trust_sql"),
        help="Trust the model's SQL: let sources and expressions read files or settings or "
        "write (off by default; see docs/untrusted-queries.md).",
    )(f)
    f = click.option(
        "--osi-datus",
        "mode",
        flag_value="datus",
        help="Read the DATUS extensions (the default).",
    )(f)
    f = click.option(
        "--osi-basic",
        "mode",
        flag_value="basic",
        default=None,
        help="Plain Ossie: ignore DATUS extensions, with an ignored_vendor_extension warning each.",
    )(f)
    f = click.option(
        "--model",
        "-m",
        "model",
        metavar="PATH",
        default=None,
        help="Ossie model file (YAML or JSON; - reads stdin). Default: $DOSI_MODEL.",
    )(f)
    return f


def db_options(f: F) -> F:
    """--db, --connections, --connection, and the DuckDB limits (--memory-limit,
    --allow-extensions) for a command that runs SQL."""
    f = click.option(
        "--allow-extensions",
        is_flag=True,
        expose_value=False,
        callback=_set_state("allow_extensions"),
        help="Let DuckDB read external files and auto-load extensions (locked down by default).",
    )(f)
    f = click.option(
        "--memory-limit",
        metavar="SIZE",
        expose_value=False,
        callback=_set_state("memory_limit"),
        help="DuckDB memory limit for the query, e.g. 2GB (default: DuckDB's own).",
    )(f)
    f = click.option(
        "--connection",
        "connection",
        metavar="NAME",
        default=None,
        help="Which connection of --connections to run on (default: its default / only one).",
    )(f)
    f = click.option(
        "--connections",
        "connections_file",
        metavar="FILE",
        default=None,
        help="Connections YAML: {name: {type: duckdb, uri: PATH}}, or an agent.yml "
        "with a `datasources:` section.",
    )(f)
    f = click.option(
        "--db",
        "db",
        metavar="PATH",
        default=None,
        help="DuckDB database file to run on. Default: $DOSI_DB.",
    )(f)
    return f


def format_option(choices: Sequence[str]) -> Callable[[F], F]:
    """--format/-f with the formats a command can write (default table, or what the
    command's --output extension implies: `formats.resolve_format`)."""
    binary = [c for c in choices if c in ("parquet", "arrow", "arrows")]
    note = " (text is a synonym of table"
    if binary:
        note += "; arrow is the Arrow IPC file, arrows the IPC stream"
    note += ")"

    def deco(f: F) -> F:
        f = click.option(
            "--format",
            "-f",
            "fmt",
            type=click.Choice(list(choices), case_sensitive=False),
            default=None,
            help="Output format" + note + ". Default: table, or what --output's extension "
            "says where the command has --output (.csv, .json, .jsonl, .parquet, .arrow, "
            ".arrows).",
        )(f)
        return f

    return deco


def query_options(f: F) -> F:
    """--query / --query-file, or the query flags that build one (`query_input.query_from`)."""
    options = [
        click.option(
            "--query",
            "-q",
            "query_json",
            metavar="JSON",
            help="The query as JSON text (- reads stdin).",
        ),
        click.option(
            "--query-file",
            "query_file",
            metavar="FILE",
            help="Read the JSON query from FILE (- for stdin).",
        ),
        click.option(
            "--metric",
            "-M",
            "metrics",
            multiple=True,
            metavar="NAME[,NAME]",
            help="Metric to compute; repeatable or comma-separated.",
        ),
        click.option(
            "--group-by",
            "-g",
            "group_by",
            multiple=True,
            metavar="FIELD[:GRAIN]",
            help="Group by a field (orders.region) or time axis (metric_time:month); repeatable.",
        ),
        click.option(
            "--where",
            "-w",
            "where",
            multiple=True,
            metavar="SQL",
            help="Row filter on fields, e.g. \"orders.status = 'completed'\"; "
            "repeated filters are ANDed.",
        ),
        click.option(
            "--context-filter",
            "context_filter",
            multiple=True,
            metavar="SQL",
            help="Context-layer row filter (D-LOD): feeds every fixed rollup and the window "
            "population; repeated filters are ANDed.",
        ),
        click.option("--start", metavar="DATE", help="Time range start (inclusive, YYYY-MM-DD)."),
        click.option("--end", metavar="DATE", help="Time range end (exclusive, YYYY-MM-DD)."),
        click.option(
            "--time-dimension",
            "time_dimension",
            metavar="FIELD",
            help="Time axis --start/--end filter (e.g. metric_time, the default).",
        ),
        click.option(
            "--param",
            "-p",
            "param",
            multiple=True,
            metavar="NAME=VALUE",
            help="Bind a metric parameter (D-PARAM): n=6, r=east, n=[3,6,12]; a repeated "
            "name binds a list (one column per value).",
        ),
        click.option(
            "--tagged-range",
            "tagged_range",
            multiple=True,
            metavar="TAG=START..END",
            help="A tagged time range (time_ranges): h1=2024-01-01..2024-07-01 gives "
            "<metric>__h1 columns; repeatable; either bound may be empty.",
        ),
        click.option(
            "--densify",
            "densify",
            type=click.Choice(["time", "all", "windows", "covered", "false"]),
            default=None,
            help="Fill empty time buckets from a time spine: time (every bucket of the "
            "grain), all (crossed with the grouped values), windows (window metrics over the "
            "filled series, rows with data returned), covered (those rows and the empty buckets "
            "a window metric has a value in), false (none, over a model default).",
        ),
        click.option(
            "--week-start",
            "week_start",
            type=click.Choice(["monday", "sunday", "saturday"]),
            default=None,
            help="The first day of a week bucket and of day_of_week numbering for this query "
            "(over the model's calendar; default monday).",
        ),
        click.option(
            "--order-by",
            "order_by",
            multiple=True,
            metavar="KEY[:desc]",
            help="Sort key; -revenue or revenue:desc sorts descending; repeatable.",
        ),
        click.option(
            "--limit",
            "-l",
            type=click.IntRange(min=0),
            default=None,
            metavar="N",
            help="Keep at most N rows.",
        ),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


def result_options(f: F) -> F:
    """--output, --chart, --spark and --precision for a command that prints a result."""
    f = click.option(
        "--precision",
        type=click.IntRange(min=0, max=30),
        default=None,
        metavar="N",
        help="Show every non-integer number in a table with exactly N digits after the point "
        "(default: decimals at their own scale, doubles to at most 6 places); csv, json and "
        "the binary formats keep every digit.",
    )(f)
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
        help="Also draw the result to FILE (.svg, .png or .html with the charts extra; .json "
        "is the Vega-Lite spec): a line per series over time, bars otherwise.",
    )(f)
    f = click.option(
        "--output",
        "-o",
        "output",
        metavar="FILE",
        default=None,
        help="Write the result to FILE instead of stdout; its extension picks the format "
        "unless --format says otherwise (required for parquet / arrow on a terminal).",
    )(f)
    return f


def use_format(
    fmt: str | None, output: str | None = None, choices: Sequence[str] = RESULT_FORMATS
) -> str:
    """The command's format, recorded for error reports: --format normalised (text is
    table), or the one --output's extension implies; a contradiction is a usage error."""
    cli_state().fmt = normalise(fmt) if fmt is not None else "table"
    resolved = resolve_format(fmt, output, choices)
    cli_state().fmt = resolved
    return resolved
