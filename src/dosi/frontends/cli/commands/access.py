"""`dosi access`: the access file's tools (docs/access-policies.md). `hash` prints the stored
form of a token or password (read from stdin, never from the command line, so it stays out
of the shell history); `check` reads an access file against a model and prints, per user,
what the policies let that user see, or the error that user would get."""

from __future__ import annotations

import sys
from typing import Any

import click

from dosi.access import hash_secret, load_access, scope_for
from dosi.errors import OsiError
from dosi.frontends.cli.engine_input import open_engine
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.options import model_options
from dosi.frontends.cli.output import echo_json

#: the option every server command takes: identities and policies
access_option = click.option(
    "--access",
    "access_file",
    default=None,
    metavar="FILE",
    envvar="DOSI_ACCESS_FILE",
    help="Access file: users, API tokens (hashed) and policies ($DOSI_ACCESS_FILE; "
    "docs/access-policies.md).",
)


@click.group("access", epilog=COMMAND_EPILOG)
def access_group() -> None:
    """Identities and access policies."""


@access_group.command("hash", epilog=COMMAND_EPILOG)
@click.option(
    "--scheme",
    type=click.Choice(["sha256", "scrypt"]),
    default="sha256",
    show_default=True,
    help="sha256 for random API tokens, scrypt for passwords.",
)
def hash_(scheme: str) -> None:
    """Print the stored form of the secret read from stdin (one line)."""
    secret = sys.stdin.readline().rstrip("\r\n")
    if not secret:
        raise click.UsageError("no secret on stdin")
    click.echo(hash_secret(secret, scheme))


@access_group.command("check", epilog=COMMAND_EPILOG)
@click.argument("access_path", metavar="ACCESS_FILE")
@model_options
def check(access_path: str, model: str | None, mode: str | None) -> None:
    """What each user of ACCESS_FILE may see in the model (metrics, datasets, filtered
    datasets), or the error the user would get."""
    config = load_access(access_path)
    engine = open_engine(model, mode)
    out: dict[str, Any] = {"users": []}
    try:
        for cred in config.identities.credentials:
            row: dict[str, Any] = {"user": cred.user.name, "groups": list(cred.user.groups)}
            if config.policies is not None:
                try:
                    s = scope_for(engine.model, config.policies, cred.user)
                    row.update(
                        policies=list(s.policies),
                        metrics=sorted(s.metrics),
                        datasets=sorted(s.datasets),
                        filtered=list(s.filtered),
                    )
                except OsiError as err:
                    row["error"] = {"code": err.code, "message": err.message}
            out["users"].append(row)
    finally:
        engine.close()
    echo_json(out)
