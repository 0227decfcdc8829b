"""The `dosi` command line: validate, list, info, compile, query, explain and demo.

Every command loads the model given by `--model` (or `DOSI_MODEL`), in DATUS mode unless
`--osi-basic` is passed, and reports failures as the engine's structured errors with distinct
exit codes (see `EPILOG`). No Python traceback reaches the user.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import click

from dosi.cli_output import (
    EXIT_MODEL,
    CliError,
    dumps,
    echo_json,
    print_csv,
    print_diagnostics,
    print_kv,
    print_table,
    print_warnings,
    report_error,
    report_internal,
)
from dosi.cli_query import resolve_query
from dosi.cli_surfaces import RESULT_FORMATS, emit_result, register, result_options, spinner
from dosi.errors import Diagnostic, ExecuteError, ModelError, OsiError
from dosi.frontends.authoring import register as register_authoring
from dosi.model.loader import read_model_text
from dosi.model.versions import CURRENT as CURRENT_OSSIE

F = TypeVar("F", bound=Callable[..., Any])

COMMAND_EPILOG = """\b
Exit codes:
  0  success
  1  internal error (a bug in dosi; DOSI_DEBUG=1 shows the traceback)
  2  bad query (query_error) or bad usage (usage_error)
  3  bad model (model_error; `dosi validate` of an invalid model)
  4  execution failure (execute_error: database missing, SQL rejected, query_timeout)
  Bad input of any kind (hostile model, query, path, encoding) exits 2, 3
  or 4 with a structured error, never 1 and never a traceback.

\b
Errors are printed to stderr as code, message, candidates, hint and
suggested retry; with --format json they are printed to stdout as
{"error": {...}} instead.
"""

EPILOG = (
    COMMAND_EPILOG
    + """
\b
Environment:
  DOSI_MODEL  default for --model
  DOSI_DB     default for --db (DuckDB database file)

\b
Examples:
  dosi demo
  dosi validate -m examples/shop/model.yaml
  dosi list dimensions -m examples/shop/model.yaml --metric revenue
  dosi query -m examples/shop/model.yaml --db examples/shop/data/shop.duckdb \\
      -M revenue,revenue_mom -g metric_time:month --start 2025-01-01
  dosi compile -m examples/shop/model.yaml --query '{"metrics": ["revenue"]}' --pretty
"""
)

TEXT_FORMATS = ("table", "text", "json")
MAX_CONNECTIONS_BYTES = 1_000_000
DATA_FORMATS = ("table", "text", "json", "csv")


# -- shared state and options -------------------------------------------------------------------
@dataclass
class _State:
    model: str | None = None
    mode: str | None = None
    db: str | None = None
    fmt: str = "table"
    trust_sql: bool = False
    allow_extensions: bool = False
    memory_limit: str | None = None


def _state() -> _State:
    ctx = click.get_current_context()
    obj = ctx.find_object(_State)
    if obj is None:
        obj = ctx.ensure_object(_State)
    return obj


def _set_state(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A callback storing an option in the shared state, so it works before or after the
    subcommand name without every command taking it as a parameter."""

    def store(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value:
            setattr(ctx.ensure_object(_State), name, value)

    return store


def _model_options(f: F) -> F:
    f = click.option(
        "--trust-sql",
        is_flag=True,
        expose_value=False,
        callback=_set_state("trust_sql"),
        help="Trust the model's SQL: let sources and expressions read files or settings or "
        'write (off by default; see the README, "Running untrusted queries").',
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


def _db_options(f: F) -> F:
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


def _format_option(choices: Sequence[str]) -> Callable[[F], F]:
    def deco(f: F) -> F:
        return click.option(
            "--format",
            "-f",
            "fmt",
            type=click.Choice(list(choices), case_sensitive=False),
            default="table",
            show_default=True,
            help="Output format (text is a synonym of table).",
        )(f)

    return deco


def _query_options(f: F) -> F:
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


def _query_from(kw: dict[str, Any]) -> str | dict[str, Any]:
    flags = {
        k: kw.pop(k)
        for k in (
            "metrics",
            "group_by",
            "where",
            "start",
            "end",
            "time_dimension",
            "order_by",
            "limit",
            "param",
            "tagged_range",
            "context_filter",
        )
    }
    return resolve_query(kw.pop("query_json"), kw.pop("query_file"), flags)


def _fmt(fmt: str) -> str:
    fmt = fmt.lower()
    fmt = "table" if fmt == "text" else fmt
    _state().fmt = fmt
    return fmt


def _resolve_model(model: str | None) -> str:
    model = model or _state().model or os.environ.get("DOSI_MODEL") or None
    if not model:
        raise CliError(
            "missing_model",
            "no model given",
            hint="pass --model PATH (or -m PATH), or set DOSI_MODEL",
        )
    return model


def _resolve_mode(mode: str | None) -> str:
    return mode or _state().mode or "datus"


def _resolve_db(db: str | None) -> str | None:
    return db or _state().db or os.environ.get("DOSI_DB") or None


def _model_text(model: str) -> str:
    if model == "-":
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ModelError(
                [Diagnostic("invalid_yaml", "the model on stdin is not UTF-8 text")]
            ) from None
    try:
        return read_model_text(Path(model).expanduser())
    except ValueError:  # a NUL byte in the path
        return read_model_text(model)


def _load_connections(path: str | None) -> Any:
    """Profiles from a connections file or an agent.yml `datasources:` section; relative
    paths resolve against the file's folder (dosi.execute.connections)."""
    if path is None:
        return None
    import yaml

    from dosi.execute.connections import parse_connections

    p = Path(path).expanduser()
    try:
        with p.open("rb") as fh:  # bounded: /dev/zero or a huge file cannot exhaust memory
            raw = fh.read(MAX_CONNECTIONS_BYTES + 1)
        if len(raw) > MAX_CONNECTIONS_BYTES:
            raise CliError(
                "invalid_connections",
                f"connections file {path} is over {MAX_CONNECTIONS_BYTES} bytes",
            )
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CliError(
            "invalid_connections", f"connections file {path} is not readable UTF-8 YAML: {exc}"
        ) from None
    except OSError as exc:
        raise CliError(
            "connections_not_found", f"cannot read connections file {path}: {exc.strerror or exc}"
        ) from None
    except yaml.YAMLError as exc:
        raise CliError(
            "invalid_connections", f"connections file {path} is not valid YAML: {exc}"
        ) from None
    return parse_connections(data, base_dir=p.resolve().parent)


def _engine(
    model: str | None,
    mode: str | None,
    connections: str | None = None,
    connection: str | None = None,
) -> Any:
    from dosi.engine import Engine

    text = _model_text(_resolve_model(model))
    conns = _load_connections(connections)
    state = _state()
    return Engine(
        model_text=text,
        mode=_resolve_mode(mode),
        connections=conns,
        trust_sql=state.trust_sql,
        allow_extensions=state.allow_extensions,
        memory_limit=state.memory_limit,
    )


# -- the group ----------------------------------------------------------------------------------
class DosiGroup(click.Group):
    """Runs a subcommand and turns every failure into a structured error and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (
            click.exceptions.ClickException,
            click.exceptions.Exit,
            click.Abort,
            SystemExit,
            KeyboardInterrupt,
        ):
            raise
        except OsiError as err:
            ctx.exit(report_error(err, ctx.ensure_object(_State).fmt))
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            ctx.exit(self._internal(ctx, exc))
        except Exception as exc:
            ctx.exit(self._internal(ctx, exc))

    @staticmethod
    def _internal(ctx: click.Context, exc: Exception) -> int:
        if os.environ.get("DOSI_DEBUG"):
            traceback.print_exc()
        return report_internal(exc, ctx.ensure_object(_State).fmt)


def _version() -> str:
    import dosi

    return (
        f"dosi {dosi.__version__} (Ossie {dosi.SPEC_VERSION}, datus-ext {dosi.DATUS_EXT_VERSION})"
    )


@click.group(cls=DosiGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@_model_options
@click.option(
    "--db",
    "db",
    metavar="PATH",
    default=None,
    help="DuckDB database file for `query`. Default: $DOSI_DB.",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _p, v: (click.echo(_version()), ctx.exit()) if v else None,
    help="Show the engine, Ossie and datus-ext versions and exit.",
)
@click.pass_context
def cli(ctx: click.Context, model: str | None, mode: str | None, db: str | None) -> None:
    """dosi: a semantic-layer engine for Apache Ossie models with the DATUS extensions.

    The model, mode and database options can be given here or on each command.
    """
    state = ctx.ensure_object(_State)
    state.model, state.mode, state.db = model, mode, db


# -- validate -----------------------------------------------------------------------------------
@cli.command(epilog=COMMAND_EPILOG)
@_model_options
@_format_option(TEXT_FORMATS)
def validate(model: str | None, mode: str | None, fmt: str) -> None:
    """Validate a model: every problem with its path and line, and any warnings.

    Exits 0 when valid (warnings allowed), 3 when not. It checks the model only, never the
    warehouse: it cannot confirm a field's data matches its declared D-FORMAT.
    """
    import dosi

    fmt = _fmt(fmt)
    path = _resolve_model(model)
    resolved_mode = _resolve_mode(mode)
    try:
        result = dosi.validate(_model_text(path), resolved_mode, trust_sql=_state().trust_sql)
    except ModelError as err:  # unreadable file
        result = {
            "valid": False,
            "stage": err.code,
            "issues": [d.to_dict() for d in err.issues],
            "compile_errors": [],
            "warnings": [],
        }
    if fmt == "json":
        echo_json(result)
    else:
        where = "stdin" if path == "-" else path
        warnings = result.get("warnings") or []
        if result["valid"]:
            note = f", {len(warnings)} warning(s)" if warnings else ""
            version = result.get("version", CURRENT_OSSIE)
            read = f"Ossie {version}" + (
                f", upgraded in memory to {CURRENT_OSSIE}" if version != CURRENT_OSSIE else ""
            )
            click.echo(
                click.style("OK", fg="green", bold=True)
                + f": {where} is a valid model ({read}; {resolved_mode} mode{note})"
            )
        else:
            issues = result.get("issues") or []
            stage = result.get("stage")
            click.echo(
                click.style("INVALID", fg="red", bold=True)
                + f": {where} has {len(issues)} problem(s) ("
                + (f"{stage}; " if stage else "")
                + f"{resolved_mode} mode)"
            )
            print_diagnostics(issues, err=False, label="error")
        print_diagnostics(warnings, err=False, label="warning")
    if not result["valid"]:
        sys.exit(EXIT_MODEL)


# -- list ---------------------------------------------------------------------------------------
_LIST_KINDS = {
    "metrics": "metrics",
    "metric": "metrics",
    "dimensions": "dimensions",
    "dimension": "dimensions",
    "datasets": "datasets",
    "dataset": "datasets",
}


def _columns(
    rows: Sequence[Mapping[str, Any]], preferred: Sequence[str], optional: Sequence[str] = ()
) -> list[str]:
    keys = {k for r in rows for k in r}
    return [c for c in preferred if c in keys or not rows] + [c for c in optional if c in keys]


def _all_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def _emit_rows(fmt: str, rows: list[dict[str, Any]], table_cols: Sequence[str]) -> None:
    if fmt == "json":
        echo_json(rows)
    elif fmt == "csv":
        print_csv(_all_columns(rows) or list(table_cols), rows)
    else:
        print_table(table_cols, rows, null="")


@cli.command("list", epilog=COMMAND_EPILOG)
@click.argument(
    "kind",
    required=False,
    default="metrics",
    type=click.Choice(sorted(_LIST_KINDS), case_sensitive=False),
)
@click.option(
    "--metric",
    "metric_name",
    metavar="NAME",
    default=None,
    help="metrics: show this metric in detail; dimensions: only those it can use.",
)
@click.option(
    "--dataset",
    "dataset_name",
    metavar="NAME",
    default=None,
    help="datasets: show this dataset in detail (fields, relationships).",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="dimensions: also list fields that are not dimensions (measures, keys).",
)
@_model_options
@_format_option(DATA_FORMATS)
def list_(
    kind: str,
    metric_name: str | None,
    dataset_name: str | None,
    show_all: bool,
    model: str | None,
    mode: str | None,
    fmt: str,
) -> None:
    """List the model's metrics, dimensions or datasets (KIND, default metrics)."""
    fmt = _fmt(fmt)
    kind = _LIST_KINDS[kind.lower()]
    if dataset_name is not None and kind != "datasets":
        raise CliError("conflicting_options", "--dataset applies to `dosi list datasets`")
    if metric_name is not None and kind == "datasets":
        raise CliError(
            "conflicting_options",
            "--metric applies to `dosi list metrics` and `dosi list dimensions`",
        )
    engine = _engine(model, mode)
    for w in engine.warnings:
        if fmt != "json":
            print_warnings([w])
    if kind == "metrics":
        if metric_name is not None:
            _show_detail(fmt, engine.metric(metric_name))
            return
        rows = engine.metrics()
        if fmt == "table":
            rows = [{**r, "window": _window_label(r)} for r in rows]
        _emit_rows(
            fmt,
            rows,
            _columns(
                rows,
                ["name", "kind", "datasets", "time_dimension"],
                ["window", "derive_family", "attributable", "description"],
            ),
        )
    elif kind == "dimensions":
        rows = engine.dimensions(metric_name)
        if not show_all:
            rows = [r for r in rows if r.get("is_dimension", True)]
        # metric_time rows (one per time axis) carry the grains they allow and their metrics
        preferred = ["name", "is_time", "time_granularity", "grains", "datatype", "source"]
        if show_all:
            preferred.insert(1, "is_dimension")
        optional = [
            "time_axis",
            "metrics",
            "time_format",
            "time_storage",
            "conformity_class",
            "conformed_with",
            "description",
        ]
        _emit_rows(fmt, rows, _columns(rows, preferred, optional))
    else:
        if dataset_name is not None:
            _show_dataset(fmt, engine.dataset(dataset_name))
            return
        rows = engine.datasets()
        _emit_rows(
            fmt,
            rows,
            _columns(
                rows,
                ["name", "source", "primary_key", "fields", "primary_time_dimension"],
                ["description"],
            ),
        )


def _window_label(metric: Mapping[str, Any]) -> str | None:
    parts = [metric.get("window_family"), metric.get("window_function")]
    return "/".join(str(x) for x in parts if x) or None


def _show_detail(fmt: str, item: dict[str, Any]) -> None:
    if fmt == "json":
        echo_json(item)
    elif fmt == "csv":
        print_csv(["key", "value"], [{"key": k, "value": v} for k, v in item.items()])
    else:
        print_kv(item.items())


def _show_dataset(fmt: str, ds: dict[str, Any]) -> None:
    if fmt != "table":
        _show_detail(fmt, ds)
        return
    print_kv([(k, v) for k, v in ds.items() if k not in ("fields", "relationships")])
    click.echo()
    fields = ds.get("fields") or []
    print_table(
        _columns(
            fields,
            ["name", "is_time", "datatype", "expression"],
            ["time_format", "description"],  # D-FORMAT layouts, when a field declares one
        ),
        fields,
        title="fields",
        null="",
    )
    rels = ds.get("relationships") or []
    if rels:
        click.echo()
        print_table(
            _columns(rels, ["name", "to", "cardinality", "join_type", "columns"]),
            rels,
            title="relationships",
        )


# -- info ---------------------------------------------------------------------------------------
def info_dict() -> dict[str, Any]:
    import dosi
    from dosi.ext import IMPACTS, capabilities

    caps = capabilities()
    return {
        "engine": "dosi",
        "engine_version": dosi.__version__,
        "spec_version": dosi.SPEC_VERSION,
        "datus_ext_version": dosi.DATUS_EXT_VERSION,
        "modes": ["datus", "basic"],
        "impacts": dict(IMPACTS),
        **caps,
    }


@cli.command(epilog=COMMAND_EPILOG)
@_format_option(TEXT_FORMATS)
def info(fmt: str) -> None:
    """Engine version, the DATUS extension version and the capability registry.

    Lists every DATUS payload key with its extension, carriers, the version that added it, its
    ignore impact (what an engine without it gets wrong) and that fallback; then the history.
    """
    fmt = _fmt(fmt)
    data = info_dict()
    if fmt == "json":
        echo_json(data)
        return
    click.echo(f"dosi {data['engine_version']}")
    click.echo(f"Ossie spec:        {data['spec_version']}")
    click.echo(f"datus-ext version: {data['datus_ext_version']}")
    click.echo("modes:             --osi-datus (default), --osi-basic")
    click.echo()
    rows = _key_rows(data.get("keys"))
    print_table(
        ["key", "extension", "carriers", "since", "impact", "implemented", "fallback"],
        rows,
        title="capabilities (DATUS payload keys)",
        null="",
    )
    click.echo()
    print_table(
        ["impact", "meaning"],
        [{"impact": k, "meaning": v} for k, v in data["impacts"].items()],
        title="ignore impacts",
    )
    click.echo()
    hist = [
        {
            "version": h.get("version"),
            "date": h.get("date"),
            "keys": h.get("added", h.get("keys")) or None,
            "note": h.get("note"),
        }
        for h in data.get("history") or []
    ]
    print_table(["version", "date", "keys", "note"], hist, title="history", null="")


def _key_rows(keys: Any) -> list[dict[str, Any]]:
    """Registry rows, whether `keys` is a list of rows or a {key: row} mapping."""
    if isinstance(keys, Mapping):
        return [{"key": k, **v} for k, v in keys.items()]
    return [dict(r) for r in keys or []]


# -- compile / explain / query ------------------------------------------------------------------
@cli.command("compile", epilog=COMMAND_EPILOG)
@_query_options
@click.option(
    "--dialect",
    "-d",
    default="duckdb",
    show_default=True,
    metavar="NAME",
    help="SQL dialect (duckdb, postgres, snowflake, bigquery, databricks, trino, ...).",
)
@click.option("--pretty", is_flag=True, help="Indent the SQL.")
@_model_options
@_format_option(TEXT_FORMATS)
def compile_(
    dialect: str, pretty: bool, model: str | None, mode: str | None, fmt: str, **kw: Any
) -> None:
    """Compile a metric query to SQL without running it.

    Give the query as --query JSON / --query-file FILE, or with the query flags
    (-M revenue -g metric_time:month --start 2025-01-01 ...).
    """
    fmt = _fmt(fmt)
    query = _query_from(kw)
    engine = _engine(model, mode)
    result = engine.compile(query, dialect=dialect, pretty=pretty)
    if fmt == "json":
        echo_json(result)
        return
    sql = result["sql"]
    click.echo(sql if sql.rstrip().endswith(";") else sql.rstrip() + ";")
    print_warnings(result.get("warnings") or [])


@cli.command(epilog=COMMAND_EPILOG)
@_query_options
@click.option("--sql", "show_sql", is_flag=True, help="Also print the compiled (pretty) SQL.")
@_model_options
@_format_option(TEXT_FORMATS)
def explain(show_sql: bool, model: str | None, mode: str | None, fmt: str, **kw: Any) -> None:
    """Show the query plan: the tree of plan nodes (scans, joins, aggregates, merge, windows,
    order), and the output columns; --format json adds the tree as JSON (`plan_tree`)."""
    fmt = _fmt(fmt)
    query = _query_from(kw)
    engine = _engine(model, mode)
    plan = engine.explain(query)
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


@cli.command(epilog=COMMAND_EPILOG)
@_query_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Cancel the query after this many seconds (exit 4).",
)
@click.option("--show-sql", is_flag=True, help="Print the SQL that runs to stderr.")
@result_options
@_db_options
@_model_options
@_format_option(RESULT_FORMATS)
def query(
    timeout: float | None,
    show_sql: bool,
    output: str | None,
    chart: str | None,
    spark: bool,
    db: str | None,
    connections_file: str | None,
    connection: str | None,
    model: str | None,
    mode: str | None,
    fmt: str,
    **kw: Any,
) -> None:
    """Run a metric query on DuckDB and print the rows.

    --format table prints a table (warnings on stderr), csv a header and rows, json the whole
    result: dialect, sql, outputs, warnings, requested_columns, columns, rows, row_count;
    parquet and arrow (IPC stream) write the Arrow table. --output FILE writes the result to a
    file, --chart FILE draws it (.svg or .png), --spark prints a sparkline per metric.
    """
    fmt = _fmt(fmt)
    q = _query_from(kw)
    engine = _engine(model, mode, connections_file, connection)
    db_path = _resolve_db(db)
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
        with spinner("querying"):
            result = engine.execute(q, connection=connection, timeout_secs=timeout, db_path=db_path)
    except ExecuteError as err:
        _cli_hint(err)
        raise
    finally:
        engine.close()
    emit_result(
        fmt, result, output=output, chart=chart, spark=spark, scales=_decimal_scales(result)
    )


def _cli_hint(err: ExecuteError) -> None:
    """Say the engine's hints in command-line terms (--db, --timeout)."""
    hint = err.hint or ""
    hint = hint.replace("pass db_path= an existing", "pass --db an existing")
    hint = hint.replace("raise timeout_secs", "raise --timeout").replace("(db_path)", "(--db)")
    err.hint = hint or None


def _print_result(fmt: str, result: Mapping[str, Any]) -> None:
    if fmt == "json":
        echo_json(dict(result))
        return
    columns, rows = result["columns"], result["rows"]
    if fmt == "csv":
        print_csv(columns, rows)
    else:
        print_table(columns, rows, scales=_decimal_scales(result))
        n = result["row_count"]
        click.echo(f"({n} row{'s' if n != 1 else ''})")
    print_warnings(result.get("warnings") or [])


# -- demo ---------------------------------------------------------------------------------------
@cli.command(epilog=COMMAND_EPILOG)
@click.option(
    "--example-dir",
    metavar="DIR",
    default=None,
    help="The shop example directory (default: examples/shop of this checkout).",
)
@click.option(
    "--db",
    metavar="PATH",
    default=None,
    help="Where the demo database lives (default: <example-dir>/data/shop.duckdb).",
)
@click.option("--rebuild", is_flag=True, help="Rebuild the demo database even if it exists.")
@_format_option(("table", "text", "json"))
def demo(example_dir: str | None, db: str | None, rebuild: bool, fmt: str) -> None:
    """Build the shop example database (once) and run showcase queries on it.

    Revenue by region, month over month, a 3-month rolling average, year to date, a rank of
    channels, and two facts (revenue and refunds) merged on one time axis. Each query is
    printed as JSON and as the equivalent `dosi query` flags, followed by its rows.
    """
    from dosi.cli_demo import SHOWCASE, default_db, ensure_db, find_example_dir
    from dosi.cli_query import command_line
    from dosi.engine import Engine

    fmt = _fmt(fmt)
    ex = find_example_dir(example_dir)
    db_path = Path(db).expanduser() if db else default_db(ex)
    if ensure_db(ex, db_path, rebuild) and fmt != "json":
        click.echo(f"built the demo database {_rel(db_path)}", err=True)
    model_path = ex / "model.yaml"
    engine = Engine(model_path=model_path)
    prefix = ["-m", _rel(model_path), "--db", _rel(db_path)]
    out = []
    try:
        for i, (title, note, q) in enumerate(SHOWCASE, 1):
            result = engine.execute(q, db_path=db_path)
            if fmt == "json":
                out.append(
                    {
                        "title": title,
                        "note": note,
                        "query": q,
                        "command": command_line(q, prefix=prefix),
                        "result": dict(result),
                    }
                )
                continue
            click.echo(click.style(f"{i}. {title}", bold=True))
            click.echo(f"   {note}")
            click.echo(f"   query: {dumps(q, indent=None)}")
            click.echo(f"   cli:   {command_line(q, prefix=prefix)}")
            click.echo()
            _print_result("table", result)
            click.echo()
    finally:
        engine.close()
    if fmt == "json":
        echo_json({"model": str(model_path), "db": str(db_path), "queries": out})
    else:
        click.echo(f"model: {_rel(model_path)}   database: {_rel(db_path)}")
        click.echo("try:   dosi list metrics -m " + _rel(model_path))


def _decimal_scales(result: Any) -> dict[str, int]:
    """{column: scale} of the DECIMAL columns of a result's Arrow table."""
    import pyarrow as pa

    table = getattr(result, "arrow", None)
    if table is None:
        return {}
    return {f.name: f.type.scale for f in table.schema if pa.types.is_decimal(f.type)}


def _rel(path: Path) -> str:
    """`path` relative to the working directory when it lies below it, else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


register(
    cli,
    SimpleNamespace(
        epilog=COMMAND_EPILOG,
        model_options=_model_options,
        db_options=_db_options,
        format_option=_format_option,
        fmt=_fmt,
        engine=_engine,
        resolve_db=_resolve_db,
        resolve_model=_resolve_model,
        resolve_mode=_resolve_mode,
        load_connections=_load_connections,
    ),
)
register_authoring(  # import cube|lookml, export ossie, init, schema
    cli, model_text=_model_text, resolve_model=_resolve_model, load_connections=_load_connections
)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (`dosi`)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="dosi")


__all__ = ["cli", "info_dict", "main"]
