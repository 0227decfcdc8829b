"""From the command line to an Engine: the model (--model, $DOSI_MODEL, or stdin), the mode,
the connections file and the database a command runs on (--db, $DOSI_DB).

Every reading is bounded and every failure is a structured error (`CliError`, `ModelError`)
with the fix in its hint."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import yaml

from dosi.engine import Engine, rollups_beside
from dosi.errors import Diagnostic, ModelError
from dosi.execute.connections import parse_connections
from dosi.frontends.cli.options import cli_state
from dosi.frontends.cli.output import CliError
from dosi.model.loader import read_model_text

MAX_CONNECTIONS_BYTES = 1_000_000


def resolve_model(model: str | None) -> str:
    """The command's --model, else the group's, else $DOSI_MODEL."""
    model = model or cli_state().model or os.environ.get("DOSI_MODEL") or None
    if not model:
        raise CliError(
            "missing_model",
            "no model given",
            hint="pass --model PATH (or -m PATH), or set DOSI_MODEL",
        )
    return model


def resolve_mode(mode: str | None) -> str:
    """datus unless --osi-basic is given (on the command or the group)."""
    return mode or cli_state().mode or "datus"


def resolve_db(db: str | None) -> str | None:
    """The command's --db, else the group's, else $DOSI_DB (None: no database given)."""
    return db or cli_state().db or os.environ.get("DOSI_DB") or None


def read_model(model: str) -> str:
    """The model text of a path, or of stdin for `-`."""
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


def load_connections(path: str | None) -> Any:
    """Profiles from a connections file or an agent.yml `datasources:` section; relative
    paths resolve against the file's folder (dosi.execute.connections)."""
    if path is None:
        return None
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


def open_engine(
    model: str | None,
    mode: str | None,
    connections: str | None = None,
    connection: str | None = None,
    rollups: str | None = None,
) -> Engine:
    """The command's model compiled into an Engine, with the group's --trust-sql,
    --allow-extensions and --memory-limit, and its rollup file (`rollups`, else
    `<model>.rollups.yaml` beside the model when there is one)."""
    path = resolve_model(model)
    text = read_model(path)
    conns = load_connections(connections)
    state = cli_state()
    return Engine(
        model_text=text,
        mode=resolve_mode(mode),
        connections=conns,
        trust_sql=state.trust_sql,
        allow_extensions=state.allow_extensions,
        memory_limit=state.memory_limit,
        rollups=rollups if rollups is not None else rollups_beside(path),
    )


def need_database(engine: Engine, db_path: str | None, connection: str | None) -> None:
    """As `dosi query`: running needs --db, or --connections with a default profile."""
    if db_path is None and connection is None and engine.connections.path_for(None) is None:
        engine.close()
        raise CliError(
            "no_connection",
            "no database to run on: pass --db PATH (or set DOSI_DB), or --connections FILE "
            "with a default profile (or --connection NAME)",
            hint="`--db :memory:` runs on an empty in-memory DuckDB",
        )
