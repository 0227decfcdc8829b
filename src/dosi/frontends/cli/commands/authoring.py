"""`dosi import <tool>` and `dosi export <tool>`: other tools' semantic models in and out.

`dosi import cube|lookml PATH` and `dosi export ossie` write the model (checked to load) to
stdout or `-o FILE` (`--force` to replace it), warnings on stderr, or with `-f json` one
object holding model and warnings (`dosi.frontends.cli.writing`).
`dosi import dbt PROJECT_DIR|semantic_manifest.json -o model.yaml [--queries DIR]` writes the
Ossie model (warnings on stderr, each naming the dbt object and why it did not carry; `-f json`
prints them as JSON) and, with `--queries`, each saved query as a dosi query file;
`dosi export dbt -m model.yaml -o semantic.yml` writes dbt semantic-layer YAML. Each tool is
one subcommand of `import_group` / `export_group`.
Exit codes as everywhere: 0 written (warnings allowed), 3 the input is not a model the command
can read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from dosi.errors import ArgumentError, Diagnostic, ModelError, OsiError
from dosi.exporters.dbt import export_dbt
from dosi.exporters.ossie import export_ossie
from dosi.frontends.cli.engine_input import read_model, resolve_model
from dosi.frontends.cli.output import (
    EXIT_MODEL,
    CliError,
    echo_json,
    print_diagnostics,
    report_error,
)
from dosi.frontends.cli.writing import emit_converted, model_output_options
from dosi.frontends.extras import EXTRAS, load_extra
from dosi.importers.cube import import_cube
from dosi.model.loader import parse_document, read_model_text

DBT = "dosi.importers.dbt"
LOOKML = "dosi.importers.lookml"


def _importer(module: str) -> ModuleType:
    """An importer whose parser is an optional extra, loaded when its command runs (so the
    core install's `dosi` starts without it)."""
    try:
        return load_extra(module)
    except ImportError as exc:
        raise CliError(
            "missing_extra",
            f"this importer needs the package {exc.name or exc}",
            hint=f"pip install 'dosi[{EXTRAS[module]}]'",
        ) from None


_FORMAT = click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: warnings on stderr; json: a report on stdout.",
)


@click.group("import")
def import_group() -> None:
    """Import another tool's semantic model as an Ossie model with DATUS extensions."""


@click.group("export")
def export_group() -> None:
    """Export an Ossie model to another tool's semantic-model format."""


@import_group.command("cube")
@click.argument("path", type=click.Path(exists=True))
@click.option("--view", metavar="NAME", help="Import one view: its members, under its names.")
@click.option(
    "--dialect", metavar="NAME", help="The warehouse dialect of the project's SQL (sqlglot)."
)
@click.option("--name", metavar="NAME", help="The semantic model's name.")
@model_output_options
def import_cube_command(
    path: str, view: str | None, dialect: str | None, name: str | None, fmt: str,
    output: str | None, force: bool,
) -> None:  # fmt: skip
    """A Cube project (its YAML model folder, or one file)."""
    try:
        converted = import_cube(path, view=view, dialect=dialect, name=name)
    except KeyError:
        raise ArgumentError(f"the Cube project has no view `{view}`") from None
    emit_converted(converted, fmt.lower(), output, force)


@import_group.command("lookml")
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--dialect",
    metavar="NAME",
    help="The warehouse dialect of the project's SQL, e.g. bigquery.",
)
@click.option("--name", metavar="NAME", help="The semantic model's name.")
@model_output_options
def import_lookml_command(
    path: str, dialect: str | None, name: str | None, fmt: str, output: str | None, force: bool
) -> None:
    """A LookML project (its .lkml files: views and explores)."""
    emit_converted(
        _importer(LOOKML).import_lookml(path, dialect=dialect, name=name),
        fmt.lower(),
        output,
        force,
    )


@export_group.command("ossie")
@click.option("--model", "-m", "model", metavar="PATH", default=None, help="The model file.")
@click.option(
    "--keep-datus",
    is_flag=True,
    help="Keep the DATUS entries, completing each one's v and requires.",
)
@click.option(
    "--allow-silent",
    is_flag=True,
    help="Drop silent-impact and required keys too (each a warning); refused otherwise.",
)
@model_output_options
def export_ossie_command(
    model: str | None, keep_datus: bool, allow_silent: bool, fmt: str, output: str | None,
    force: bool,
) -> None:  # fmt: skip
    """Plain Ossie for consumers that ignore the DATUS extensions."""
    text = read_model(resolve_model(model))
    converted = export_ossie(text, keep_datus=keep_datus, allow_silent=allow_silent)
    emit_converted(converted, fmt.lower(), output, force)


@import_group.command("dbt")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the model to this file (default: stdout).",
)
@click.option(
    "--schema",
    default=None,
    help="Warehouse schema of the dbt models' tables (fills `$source_schema` and the "
    "schema of `ref()` models).",
)
@click.option("--name", default=None, help="Name of the Ossie semantic model.")
@click.option(
    "--queries",
    "queries_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each saved query as DIR/<name>.json, a dosi query "
    "that `dosi query --query-file` runs.",
)
@_FORMAT
def import_dbt_command(
    source: Path,
    output: Path | None,
    schema: str | None,
    name: str | None,
    queries_dir: Path | None,
    fmt: str,
) -> None:
    """Import a dbt semantic layer (a project folder, or target/semantic_manifest.json).

    Semantic models become datasets, entities keys and relationships, dimensions and measures
    fields, metrics Ossie metrics with DATUS payloads, saved queries dosi queries; what does
    not carry is a warning naming the object and the reason.
    """
    try:
        converted = _importer(DBT).import_dbt(source, schema=schema, name=name)
    except OsiError as err:
        report_error(err, fmt)
        sys.exit(EXIT_MODEL)
    text = converted.yaml()
    warnings = [w.to_dict() for w in converted.warnings]
    _write(text, output)
    model = converted.plain()["semantic_model"][0]
    if queries_dir is not None:
        _write_queries(queries_dir, model)
    if fmt == "json":
        echo_json(_report(output, warnings, model))
    else:
        print_diagnostics(warnings, err=True, label="warning")
        if output is not None:
            click.echo(
                f"wrote {output}: {len(model.get('datasets') or [])} datasets, "
                f"{len(model.get('metrics') or [])} metrics, {len(warnings)} warning(s)",
                err=True,
            )


@export_group.command("dbt")
@click.option(
    "-m",
    "--model",
    "model_path",
    type=click.Path(exists=True, path_type=Path),
    required=True,
    help="The Ossie model to export.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the dbt YAML to this file (default: stdout).",
)
@_FORMAT
def export_dbt_command(model_path: Path, output: Path | None, fmt: str) -> None:
    """Export an Ossie model as dbt semantic-layer YAML (semantic_models and metrics).

    What has no dbt form (rank and value windows, D-LOD, composite keys, SQL sources) is left
    out with a warning.
    """
    try:
        document = yaml_document(read_model_text(model_path))
        exported = export_dbt(document)
    except OsiError as err:
        report_error(err, fmt)
        sys.exit(EXIT_MODEL)
    _write(exported.yaml(), output)
    warnings = [w.to_dict() for w in exported.warnings]
    if fmt == "json":
        echo_json(
            {
                "output": str(output) if output else None,
                "warnings": warnings,
                "semantic_models": len(exported.data["semantic_models"]),
                "metrics": len(exported.data["metrics"]),
            }
        )
    else:
        print_diagnostics(warnings, err=True, label="warning")


def yaml_document(text: str) -> dict[str, Any]:
    """The model file as a document, read by the model loader (its limits and checks)."""
    doc = parse_document(text)
    if not isinstance(doc, dict):
        raise ModelError([Diagnostic("invalid_model", "the model file is not a YAML mapping")])
    return doc


def _write_queries(folder: Path, model: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for ext in model.get("custom_extensions") or ():
        if ext.get("vendor_name") != "DBT":
            continue
        for q in json.loads(ext["data"]).get(_importer(DBT).SAVED_QUERIES_KEY) or ():
            (folder / f"{q['name']}.json").write_text(json.dumps(q["query"], indent=2) + "\n")


def _write(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")


def _report(
    output: Path | None, warnings: list[dict[str, Any]], model: dict[str, Any]
) -> dict[str, Any]:
    return {
        "output": str(output) if output else None,
        "datasets": len(model.get("datasets") or []),
        "relationships": len(model.get("relationships") or []),
        "metrics": len(model.get("metrics") or []),
        "warnings": warnings,
    }
