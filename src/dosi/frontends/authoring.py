"""The authoring commands of the `dosi` CLI: `import cube|lookml`, `export ossie`, `init` and
`schema`. Each writes a model (or the schema) to stdout or `--output`, warnings to stderr
(or, with `--format json`, one JSON object holding both); failures are the engine's
structured errors, which the `dosi` group turns into exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dosi.errors import ArgumentError, Diagnostic, ModelError
from dosi.exporters.ossie import export_ossie
from dosi.importers.common import Converted
from dosi.importers.cube import import_cube
from dosi.importers.lookml import import_lookml
from dosi.model.json_schema import CARRIER_DEFS, payload_schema, schema_text
from dosi.scaffold.connect import profile_for_uri
from dosi.scaffold.run import scaffold_model

FORMATS = ("yaml", "json")


def _warn(diags: tuple[Diagnostic, ...] | list[Diagnostic]) -> None:
    for d in diags:
        where = f"{d.path}: " if d.path else ""
        click.echo(
            click.style("warning: ", fg="yellow", bold=True) + f"[{d.code}] {where}{d.message}",
            err=True,
        )
        if d.hint:
            click.echo(f"    hint: {d.hint}", err=True)


def _write(text: str, output: str | None, force: bool) -> None:
    if output is None or output == "-":
        click.echo(text, nl=False)
        return
    path = Path(output).expanduser()
    if path.exists() and not force:
        raise ArgumentError(
            f"{output} exists; not overwriting it",
            hint="pass --force to replace it, or choose another --output",
        )
    path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


def _emit(converted: Converted, fmt: str, output: str | None, force: bool) -> None:
    """The model (checked to load), as YAML with warnings on stderr, or as JSON."""
    errors = converted.check()
    if errors:  # a converter bug: never write a model that does not load
        raise ModelError(errors, list(converted.warnings))
    if fmt == "json":
        body = {
            "model": converted.plain(),
            "warnings": [d.to_dict() for d in converted.warnings],
        }
        _write(json.dumps(body, indent=2, ensure_ascii=False) + "\n", output, force)
        return
    _write(converted.yaml(), output, force)
    _warn(converted.warnings)


def _output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--force", is_flag=True, help="Overwrite an existing --output file.")(f)
    f = click.option(
        "--output", "-o", metavar="FILE", default=None, help="Write here instead of stdout."
    )(f)
    f = click.option(
        "--format",
        "-f",
        "fmt",
        type=click.Choice(FORMATS, case_sensitive=False),
        default="yaml",
        show_default=True,
        help="yaml (the model, warnings on stderr) or json ({model, warnings}).",
    )(f)
    return f


def register(
    group: click.Group,
    *,
    model_text: Callable[[str], str],
    resolve_model: Callable[[str | None], str],
    load_connections: Callable[[str | None], Any],
) -> None:
    """Add the authoring commands to the `dosi` group."""

    @group.group("import")
    def import_() -> None:
        """Import another tool's semantic model as an Ossie model with DATUS extensions."""

    @import_.command("cube")
    @click.argument("path", type=click.Path(exists=True))
    @click.option("--view", metavar="NAME", help="Import one view: its members, under its names.")
    @click.option(
        "--dialect", metavar="NAME", help="The warehouse dialect of the project's SQL (sqlglot)."
    )
    @click.option("--name", metavar="NAME", help="The semantic model's name.")
    @_output_options
    def import_cube_cmd(
        path: str, view: str | None, dialect: str | None, name: str | None, fmt: str,
        output: str | None, force: bool,
    ) -> None:  # fmt: skip
        """A Cube project (its YAML model folder, or one file)."""
        try:
            converted = import_cube(path, view=view, dialect=dialect, name=name)
        except KeyError:
            raise ArgumentError(f"the Cube project has no view `{view}`") from None
        _emit(converted, fmt.lower(), output, force)

    @import_.command("lookml")
    @click.argument("path", type=click.Path(exists=True))
    @click.option(
        "--dialect",
        metavar="NAME",
        help="The warehouse dialect of the project's SQL, e.g. bigquery.",
    )
    @click.option("--name", metavar="NAME", help="The semantic model's name.")
    @_output_options
    def import_lookml_cmd(
        path: str, dialect: str | None, name: str | None, fmt: str, output: str | None, force: bool
    ) -> None:
        """A LookML project (its .lkml files: views and explores)."""
        _emit(import_lookml(path, dialect=dialect, name=name), fmt.lower(), output, force)

    @group.group("export")
    def export() -> None:
        """Write the model for another consumer."""

    @export.command("ossie")
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
    @_output_options
    def export_ossie_cmd(
        model: str | None, keep_datus: bool, allow_silent: bool, fmt: str, output: str | None,
        force: bool,
    ) -> None:  # fmt: skip
        """Plain Ossie for consumers that ignore the DATUS extensions."""
        text = model_text(resolve_model(model))
        converted = export_ossie(text, keep_datus=keep_datus, allow_silent=allow_silent)
        _emit(converted, fmt.lower(), output, force)

    @group.command("init")
    @click.option("--db", "db", metavar="URI", help="A database file or URI (postgresql://, ...).")
    @click.option("--connections", "connections_file", metavar="FILE", help="Connections YAML.")
    @click.option("--connection", metavar="NAME", help="Which connection of --connections.")
    @click.option("--schema", metavar="NAME", help="The schema (database) to scaffold.")
    @click.option(
        "--tables", metavar="T1,T2", help="Only these tables (comma-separated, repeatable).",
        multiple=True,
    )  # fmt: skip
    @click.option(
        "--match-ids",
        is_flag=True,
        help="Infer undeclared keys: unique `id` columns and `<table>_id` references.",
    )
    @click.option("--name", metavar="NAME", help="The semantic model's name.")
    @_output_options
    @click.pass_context
    def init(
        ctx: click.Context, db: str | None, connections_file: str | None, connection: str | None,
        schema: str | None, tables: tuple[str, ...], match_ids: bool, name: str | None, fmt: str,
        output: str | None, force: bool,
    ) -> None:  # fmt: skip
        """Scaffold a model from a warehouse's catalog: one dataset per table, a row count
        per table, sums of measure-like columns, keys and relationships as declared."""
        db = db or (ctx.parent.params.get("db") if ctx.parent else None)
        if connections_file is not None:
            conns = load_connections(connections_file)
            profile = conns.profile(connection)
            if profile is None:
                raise ArgumentError(
                    "the connections file has no default connection",
                    hint="pass --connection NAME",
                    candidates=list(conns.profiles),
                )
        elif db:
            profile = profile_for_uri(db)
        else:
            raise ArgumentError(
                "dosi init needs a database", hint="pass --db URI or --connections FILE"
            )
        names = [t.strip() for group_ in tables for t in group_.split(",") if t.strip()]
        converted = scaffold_model(profile, schema, names, match_ids, name)
        _emit(converted, fmt.lower(), output, force)
        metrics = converted.plain()["semantic_model"][0].get("metrics") or []
        if fmt.lower() == "yaml" and metrics:
            where = output or "model.yaml"
            click.echo(
                f"next: dosi query -m {where} --db {db or '<database>'} -M {metrics[0]['name']}",
                err=True,
            )

    @group.command("schema")
    @click.option(
        "--payload",
        type=click.Choice(sorted(CARRIER_DEFS)),
        default=None,
        help="Only the DATUS payload schema of one carrier.",
    )
    @click.option("--output", "-o", metavar="FILE", default=None, help="Write here.")
    @click.option("--force", is_flag=True, help="Overwrite an existing --output file.")
    def schema_cmd(payload: str | None, output: str | None, force: bool) -> None:
        """Print the model's JSON Schema (Ossie plus every DATUS payload), for editors."""
        text = (
            schema_text()
            if payload is None
            else json.dumps(payload_schema(payload), indent=2, ensure_ascii=False) + "\n"
        )
        _write(text, output, force)
        if output is None and sys.stdout.isatty():
            click.echo(
                "hint: save it and point editors at it: # yaml-language-server: $schema=<path>",
                err=True,
            )
