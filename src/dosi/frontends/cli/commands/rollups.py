"""`dosi rollups build | refresh | status | drop` (issue 28 item 3): the declared rollups of
a model (its `<model>.rollups.yaml`, or --rollups FILE) built from the DuckDB database into
their store, refreshed when stale, listed, dropped. Each prints the status table (or JSON)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from dosi.engine import Engine
from dosi.frontends.cli.engine_input import open_engine, resolve_db
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.options import db_options, format_option, model_options
from dosi.frontends.cli.output import echo_json, print_table


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--rollups",
        "rollups_file",
        default=None,
        metavar="FILE",
        help="The rollup file (default: <model>.rollups.yaml beside the model).",
    )(f)
    f = db_options(f)
    f = model_options(f)
    return format_option(("table", "json"))(f)


def _run(
    action: Callable[[Engine, list[str] | None, str | None, str | None], dict[str, Any]],
    names: tuple[str, ...],
    kw: dict[str, Any],
) -> None:
    engine = open_engine(
        kw["model"], kw["mode"], kw["connections_file"], kw["connection"], kw["rollups_file"]
    )
    try:
        out = action(engine, list(names) or None, kw["connection"], resolve_db(kw["db"]))
    finally:
        engine.close()
    if kw["fmt"] == "json":
        echo_json(out)
        return
    columns = ["name", "state", "rows", "built_at", "reason"]
    print_table(columns, [{c: r.get(c) for c in columns} for r in out["rollups"]])


@click.group("rollups", epilog=COMMAND_EPILOG)
def rollups() -> None:
    """Declared rollups (pre-aggregations): build, refresh, status, drop
    (docs/rollups-and-cache.md)."""


@rollups.command("build", epilog=COMMAND_EPILOG)
@click.argument("names", nargs=-1)
@_common
def build(names: tuple[str, ...], **kw: Any) -> None:
    """Build every rollup (or NAMES) from the database into a new store, swapped in at once."""
    _run(lambda e, n, c, d: e.rollups_build(n, c, d), names, kw)


@rollups.command("refresh", epilog=COMMAND_EPILOG)
@click.argument("names", nargs=-1)
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Incremental: recompute only the time buckets from DATE on (a bucket's first day); "
    "older stored rows are kept as they are.",
)
@_common
def refresh(names: tuple[str, ...], since: str | None, **kw: Any) -> None:
    """Rebuild the rollups that are missing or stale (their data or declaration changed)."""
    _run(lambda e, n, c, d: e.rollups_refresh(n, c, d, since=since), names, kw)


@rollups.command("status", epilog=COMMAND_EPILOG)
@_common
def status(**kw: Any) -> None:
    """Each declared rollup: fresh, stale or missing (why), its rows and build time."""
    _run(lambda e, n, c, d: e.rollups_status(c, d), (), kw)


@rollups.command("drop", epilog=COMMAND_EPILOG)
@click.argument("names", nargs=-1)
@_common
def drop(names: tuple[str, ...], **kw: Any) -> None:
    """Drop every rollup (or NAMES) from the store; queries read the fact table."""
    _run(lambda e, n, c, d: e.rollups_drop(n, c, d), names, kw)
