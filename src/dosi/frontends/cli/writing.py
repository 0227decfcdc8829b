"""Writing a converted model (an import, an export, a scaffold) or the schema: to stdout or
`--output` (never over an existing file without `--force`), warnings on stderr, or with
`--format json` one JSON object holding the model and its warnings. A converted model is
checked to load before it is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dosi.errors import ArgumentError, Diagnostic, ModelError
from dosi.importers.common import Converted

MODEL_FORMATS = ("yaml", "json")


def warn(diags: tuple[Diagnostic, ...] | list[Diagnostic]) -> None:
    """Each warning on stderr, with its hint."""
    for d in diags:
        where = f"{d.path}: " if d.path else ""
        click.echo(
            click.style("warning: ", fg="yellow", bold=True) + f"[{d.code}] {where}{d.message}",
            err=True,
        )
        if d.hint:
            click.echo(f"    hint: {d.hint}", err=True)


def write_text(text: str, output: str | None, force: bool) -> None:
    """`text` to stdout (no output, or `-`) or to the file `output`, refusing to replace one."""
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


def emit_converted(converted: Converted, fmt: str, output: str | None, force: bool) -> None:
    """The model (checked to load), as YAML with warnings on stderr, or as JSON."""
    errors = converted.check()
    if errors:  # a converter bug: never write a model that does not load
        raise ModelError(errors, list(converted.warnings))
    if fmt == "json":
        body = {
            "model": converted.plain(),
            "warnings": [d.to_dict() for d in converted.warnings],
        }
        write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", output, force)
        return
    write_text(converted.yaml(), output, force)
    warn(converted.warnings)


def model_output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--format yaml|json`, `--output FILE` and `--force`."""
    f = click.option("--force", is_flag=True, help="Overwrite an existing --output file.")(f)
    f = click.option(
        "--output", "-o", metavar="FILE", default=None, help="Write here instead of stdout."
    )(f)
    f = click.option(
        "--format",
        "-f",
        "fmt",
        type=click.Choice(MODEL_FORMATS, case_sensitive=False),
        default="yaml",
        show_default=True,
        help="yaml (the model, warnings on stderr) or json ({model, warnings}).",
    )(f)
    return f
