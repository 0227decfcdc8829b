"""`dosi init` and `dosi schema`: starting a model. `init` scaffolds one from a warehouse's
catalog (`dosi.scaffold`); `schema` prints the model's JSON Schema for editors
(`dosi.exporters.json_schema`). Both write to stdout or `--output` (`--force` to replace a
file), warnings on stderr, through `dosi.frontends.cli.writing`."""

from __future__ import annotations

import json
import sys

import click

from dosi.errors import ArgumentError
from dosi.exporters.json_schema import CARRIER_DEFS, payload_schema, schema_text
from dosi.frontends.cli.engine_input import load_connections, resolve_db
from dosi.frontends.cli.writing import emit_converted, model_output_options, write_text
from dosi.scaffold.connect import profile_for_uri
from dosi.scaffold.run import scaffold_model


@click.command("init")
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
@model_output_options
def init(
    db: str | None, connections_file: str | None, connection: str | None, schema: str | None,
    tables: tuple[str, ...], match_ids: bool, name: str | None, fmt: str, output: str | None,
    force: bool,
) -> None:  # fmt: skip
    """Scaffold a model from a warehouse's catalog: one dataset per table, a row count
    per table, sums of measure-like columns, keys and relationships as declared."""
    db = resolve_db(db)
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
    emit_converted(converted, fmt.lower(), output, force)
    metrics = converted.plain()["semantic_model"][0].get("metrics") or []
    if fmt.lower() == "yaml" and metrics:
        where = output or "model.yaml"
        click.echo(
            f"next: dosi query -m {where} --db {db or '<database>'} -M {metrics[0]['name']}",
            err=True,
        )


@click.command("schema")
@click.option(
    "--payload",
    type=click.Choice(sorted(CARRIER_DEFS)),
    default=None,
    help="Only the DATUS payload schema of one carrier.",
)
@click.option("--output", "-o", metavar="FILE", default=None, help="Write here.")
@click.option("--force", is_flag=True, help="Overwrite an existing --output file.")
def schema(payload: str | None, output: str | None, force: bool) -> None:
    """Print the model's JSON Schema (Ossie plus every DATUS payload), for editors."""
    text = (
        schema_text()
        if payload is None
        else json.dumps(payload_schema(payload), indent=2, ensure_ascii=False) + "\n"
    )
    write_text(text, output, force)
    if output is None and sys.stdout.isatty():
        click.echo(
            "hint: save it and point editors at it: # yaml-language-server: $schema=<path>",
            err=True,
        )
