"""The `dosi` group: the group options, `--version`, and every command of the command line,
registered once (`COMMANDS`).

Every command loads the model given by `--model` (or `DOSI_MODEL`), in DATUS mode unless
`--osi-basic` is passed, and reports failures as the engine's structured errors with distinct
exit codes (see `EPILOG`). No Python traceback reaches the user.
"""

from __future__ import annotations

import errno
import os
import traceback
from collections.abc import Sequence
from typing import Any

import click

import dosi
from dosi.errors import OsiError
from dosi.frontends.cli.commands.access import access_group
from dosi.frontends.cli.commands.analysis import attribute, lineage, select
from dosi.frontends.cli.commands.authoring import export_group, import_group
from dosi.frontends.cli.commands.catalog import info, list_, validate
from dosi.frontends.cli.commands.demo import demo
from dosi.frontends.cli.commands.init import init, schema
from dosi.frontends.cli.commands.query import compile_, explain, query
from dosi.frontends.cli.commands.rollups import rollups
from dosi.frontends.cli.commands.serve import mcp, serve
from dosi.frontends.cli.commands.sql import pg, sql
from dosi.frontends.cli.epilog import EPILOG
from dosi.frontends.cli.options import CliState, model_options
from dosi.frontends.cli.output import EXIT_INTERRUPTED, report_error, report_internal


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
        ):
            raise
        except KeyboardInterrupt:  # Ctrl-C: the running query was cancelled (cli.running)
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except OsiError as err:
            ctx.exit(report_error(err, ctx.ensure_object(CliState).fmt))
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
        return report_internal(exc, ctx.ensure_object(CliState).fmt)


def _version() -> str:
    return (
        f"dosi {dosi.__version__} (Ossie {dosi.SPEC_VERSION}, datus-ext {dosi.DATUS_EXT_VERSION})"
    )


@click.group(cls=DosiGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@model_options
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
    state = ctx.ensure_object(CliState)
    state.model, state.mode, state.db = model, mode, db


#: every `dosi` subcommand; `dosi --help` lists them by name
COMMANDS: tuple[click.Command, ...] = (
    validate,
    list_,
    info,
    compile_,
    explain,
    query,
    sql,
    select,
    lineage,
    attribute,
    serve,
    mcp,
    pg,
    import_group,
    export_group,
    init,
    schema,
    demo,
    access_group,
    rollups,
)
for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (`dosi`)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="dosi")


__all__ = ["COMMANDS", "cli", "main"]
