"""`dosi validate`, `dosi list` and `dosi info`: what the model holds and what the engine
supports (the capability registry), without running anything."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

import dosi
from dosi.engine import Engine
from dosi.errors import ModelError
from dosi.ext import IMPACTS, capabilities
from dosi.frontends.cli.engine_input import (
    load_connections,
    open_engine,
    read_model,
    resolve_mode,
    resolve_model,
)
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.options import (
    DATA_FORMATS,
    TEXT_FORMATS,
    cli_state,
    format_option,
    model_options,
    use_format,
)
from dosi.frontends.cli.output import (
    EXIT_MODEL,
    CliError,
    echo_json,
    print_csv,
    print_diagnostics,
    print_kv,
    print_table,
    print_warnings,
)
from dosi.model.versions import CURRENT as CURRENT_OSSIE
from dosi.query.features import query_features


@click.command(epilog=COMMAND_EPILOG)
@click.option(
    "--db",
    "db",
    metavar="PATH",
    default=None,
    help="Also check the model against this DuckDB database: sources, columns, types.",
)
@click.option(
    "--connections",
    "connections_file",
    metavar="FILE",
    default=None,
    help="Also check the model against a warehouse of this connections file.",
)
@click.option(
    "--connection",
    "connection",
    metavar="NAME",
    default=None,
    help="Which connection of --connections to check against (default: its default one).",
)
@model_options
@format_option(TEXT_FORMATS)
def validate(
    db: str | None,
    connections_file: str | None,
    connection: str | None,
    model: str | None,
    mode: str | None,
    fmt: str,
) -> None:
    """Validate a model: every problem with its path and line, and any warnings.

    Exits 0 when valid (warnings allowed), 3 when not. Without --db / --connections it checks
    the model only (offline, and says so): a missing table or column shows at the first query.
    With one, it also checks the warehouse: every dataset's source exists and every column a
    field, key or relationship names exists with a compatible type (each problem with the
    dataset, the column and the closest real names).
    """
    fmt = use_format(fmt)
    path = resolve_model(model)
    resolved_mode = resolve_mode(mode)
    warehouse = db is not None or connections_file is not None or connection is not None
    text = ""
    try:
        text = read_model(path)
        result = dosi.validate(text, resolved_mode, trust_sql=cli_state().trust_sql)
    except ModelError as err:  # unreadable file
        result = {
            "valid": False,
            "stage": err.code,
            "issues": [d.to_dict() for d in err.issues],
            "compile_errors": [],
            "warnings": [],
        }
    result["checked"] = "model"
    if result["valid"] and warehouse:
        engine = Engine(
            model_text=text,
            mode=resolved_mode,
            connections=load_connections(connections_file),
            trust_sql=cli_state().trust_sql,
        )
        try:
            sources = engine.validate_sources(connection=connection, db_path=db)
        finally:
            engine.close()
        result["checked"] = "model and warehouse"
        result["sources"] = sources
        result["valid"] = sources["valid"]
    if fmt == "json":
        echo_json(result)
    else:
        _print_validation(result, "stdin" if path == "-" else path, resolved_mode, warehouse)
    if not result["valid"]:
        sys.exit(EXIT_MODEL)


def _print_validation(result: dict[str, Any], where: str, mode: str, warehouse: bool) -> None:
    warnings = result.get("warnings") or []
    sources = result.get("sources")
    if result["valid"]:
        note = f", {len(warnings)} warning(s)" if warnings else ""
        version = result.get("version", CURRENT_OSSIE)
        read = f"Ossie {version}" + (
            f", upgraded in memory to {CURRENT_OSSIE}" if version != CURRENT_OSSIE else ""
        )
        click.echo(
            click.style("OK", fg="green", bold=True)
            + f": {where} is a valid model ({read}; {mode} mode{note})"
        )
        if sources is not None:
            click.echo(
                f"checked against the warehouse ({sources['engine']}): "
                f"{len(sources['datasets'])} dataset source(s) and their columns exist"
            )
        else:
            click.echo(
                "checked offline (the model only); --db PATH or --connections FILE also "
                "checks its tables and columns on the warehouse"
            )
    elif sources is not None:
        issues = sources["issues"]
        click.echo(
            click.style("INVALID", fg="red", bold=True)
            + f": {where} does not match the warehouse ({sources['engine']}): "
            f"{len(issues)} problem(s)"
        )
        print_diagnostics(issues, err=False, label="error")
    else:
        issues = result.get("issues") or []
        stage = result.get("stage")
        click.echo(
            click.style("INVALID", fg="red", bold=True)
            + f": {where} has {len(issues)} problem(s) ("
            + (f"{stage}; " if stage else "")
            + f"{mode} mode)"
        )
        print_diagnostics(issues, err=False, label="error")
        if warehouse:
            click.echo("the warehouse was not checked: fix the model first")
    print_diagnostics(warnings, err=False, label="warning")


# -- list ---------------------------------------------------------------------------------------
_LIST_KINDS = {
    "metrics": "metrics",
    "metric": "metrics",
    "dimensions": "dimensions",
    "dimension": "dimensions",
    "datasets": "datasets",
    "dataset": "datasets",
}


#: what `dosi list KIND` shows by default (fits a terminal); --wide adds the rest of the
#: wide set, --columns picks any keys, -f json / csv give every key of every entry
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "metrics": ("name", "kind", "window", "description"),
    "dimensions": ("name", "datatype", "grains", "description"),
    "datasets": ("name", "source", "primary_key", "primary_time_dimension", "description"),
}
WIDE_COLUMNS: dict[str, tuple[str, ...]] = {
    "metrics": (
        "name",
        "kind",
        "datasets",
        "time_dimension",
        "window",
        "derive_family",
        "attributable",
        "description",
    ),
    "dimensions": (
        "name",
        "is_dimension",
        "is_time",
        "time_granularity",
        "grains",
        "datatype",
        "source",
        "time_axis",
        "metrics",
        "time_format",
        "time_storage",
        "conformity_class",
        "conformed_with",
        "description",
    ),
    "datasets": (
        "name",
        "source",
        "primary_key",
        "fields",
        "primary_time_dimension",
        "description",
    ),
}


def _columns(
    rows: Sequence[Mapping[str, Any]], preferred: Sequence[str], optional: Sequence[str] = ()
) -> list[str]:
    keys = {k for r in rows for k in r}
    return [c for c in preferred if c in keys or not rows] + [c for c in optional if c in keys]


def _all_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def chosen_columns(
    kind: str, rows: Sequence[Mapping[str, Any]], columns: str | None, wide: bool
) -> list[str]:
    """The table's columns: --columns as given (each must be a key some entry has), else
    the wide set (--wide) or the default one, less the columns no entry fills."""
    if columns is not None:
        asked = [c.strip() for c in columns.split(",") if c.strip()]
        known = _all_columns(rows) or list(WIDE_COLUMNS[kind])
        unknown = [c for c in asked if c not in known]
        if unknown or not asked:
            raise CliError(
                "unknown_column",
                f"--columns names what `dosi list {kind}` has not: {', '.join(unknown)}"
                if unknown
                else "--columns needs at least one column",
                candidates=known,
                hint="pick from the candidates (comma-separated), or use --wide / -f json",
            )
        return asked
    wanted = WIDE_COLUMNS[kind] if wide else DEFAULT_COLUMNS[kind]
    filled = {k for r in rows for k, v in r.items() if v not in (None, "", [], {})}
    return [c for c in wanted if c in filled or c == "name"]


def _emit_rows(
    fmt: str, rows: list[dict[str, Any]], table_cols: Sequence[str], picked: bool = False
) -> None:
    """JSON and CSV carry every key (or only --columns' when given); a table fits the
    terminal, cutting long text with an ellipsis rather than folding it over lines."""
    if fmt == "json":
        echo_json([{c: r.get(c) for c in table_cols} for r in rows] if picked else rows)
    elif fmt == "csv":
        print_csv(list(table_cols) if picked else _all_columns(rows) or list(table_cols), rows)
    else:
        print_table(table_cols, rows, null="", fit=True)


@click.command("list", epilog=COMMAND_EPILOG)
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
@click.option(
    "--columns",
    "-c",
    "columns",
    metavar="COL[,COL]",
    default=None,
    help="The columns to show (any key of -f json's entries), e.g. name,kind,datasets.",
)
@click.option(
    "--wide",
    is_flag=True,
    help="Show the wide column set (datasets, time axes, formats, conformity, ...) instead "
    "of the short default.",
)
@model_options
@format_option(DATA_FORMATS)
def list_(
    kind: str,
    metric_name: str | None,
    dataset_name: str | None,
    show_all: bool,
    columns: str | None,
    wide: bool,
    model: str | None,
    mode: str | None,
    fmt: str | None,
) -> None:
    """List the model's metrics, dimensions or datasets (KIND, default metrics).

    The table shows a short default set of columns that fits the terminal; --wide shows
    more, --columns picks them, and -f json / -f csv give every key of every entry.
    """
    fmt = use_format(fmt)
    kind = _LIST_KINDS[kind.lower()]
    if dataset_name is not None and kind != "datasets":
        raise CliError("conflicting_options", "--dataset applies to `dosi list datasets`")
    if metric_name is not None and kind == "datasets":
        raise CliError(
            "conflicting_options",
            "--metric applies to `dosi list metrics` and `dosi list dimensions`",
        )
    if columns is not None and wide:
        raise CliError("conflicting_options", "--columns and --wide: pass one of them")
    engine = open_engine(model, mode)
    for w in engine.warnings:
        if fmt != "json":
            print_warnings([w])
    if kind == "metrics":
        if metric_name is not None:
            _show_detail(fmt, engine.metric(metric_name))
            return
        rows = engine.metrics()
        if fmt == "table" or columns is not None:
            rows = [{**r, "window": _window_label(r)} for r in rows]
    elif kind == "dimensions":
        rows = engine.dimensions(metric_name)
        if not show_all:
            rows = [r for r in rows if r.get("is_dimension", True)]
        elif columns is None and not wide:
            wide = True  # --all is about is_dimension: show that column
    else:
        if dataset_name is not None:
            _show_dataset(fmt, engine.dataset(dataset_name))
            return
        rows = engine.datasets()
    shown = chosen_columns(kind, rows, columns, wide)
    if kind == "dimensions" and not show_all and columns is None and "is_dimension" in shown:
        shown.remove("is_dimension")  # every listed row is one: the column says something
    _emit_rows(fmt, rows, shown, picked=columns is not None)


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

    caps = capabilities()
    return {
        "engine": "dosi",
        "engine_version": dosi.__version__,
        "spec_version": dosi.SPEC_VERSION,
        "datus_ext_version": dosi.DATUS_EXT_VERSION,
        "modes": ["datus", "basic"],
        "impacts": dict(IMPACTS),
        "query_features": query_features(),
        **caps,
    }


@click.command(epilog=COMMAND_EPILOG)
@format_option(TEXT_FORMATS)
def info(fmt: str) -> None:
    """Engine version, the DATUS extension version and the capability registry.

    Lists every DATUS payload key with its extension, carriers, the version that added it, its
    ignore impact (what an engine without it gets wrong) and that fallback; then the history.
    """
    fmt = use_format(fmt)
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
    print_table(["key", "queries", "what"], data["query_features"], title="query features")
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
