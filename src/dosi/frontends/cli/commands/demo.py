"""`dosi demo`: build the shop example database (once) and run a few showcase queries."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from dosi.engine import Engine
from dosi.frontends.cli.epilog import COMMAND_EPILOG
from dosi.frontends.cli.options import format_option, use_format
from dosi.frontends.cli.output import CliError, dumps, echo_json
from dosi.frontends.cli.query_input import command_line, invoked_as, shown_path
from dosi.frontends.cli.results import print_result

SHOWCASE: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "Revenue by region",
        "orders -> customers -> regions over LEFT joins; orphan orders and customers without "
        "a region land in the NULL group",
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["regions.region_name"],
            "order_by": [{"key": "revenue", "desc": True}],
        },
    ),
    (
        "Revenue month over month",
        "D-WINDOW pop: percent change against the previous calendar month (2025-08 is NULL: "
        "2025-07 had no orders)",
        {
            "metrics": ["revenue", "revenue_mom"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
        },
    ),
    (
        "3-month rolling average",
        "D-WINDOW rolling: the current and two previous buckets",
        {
            "metrics": ["revenue", "revenue_rolling_3m"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2025-01-01", "end": "2026-01-01"},
        },
    ),
    (
        "Year to date",
        "D-WINDOW cumulative with a yearly reset; 2024-06 accumulates from 2024-01 although "
        "the range starts in June",
        {
            "metrics": ["revenue", "revenue_ytd"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-06-01", "end": "2025-03-01"},
        },
    ),
    (
        "Rank of channels",
        "D-WINDOW rank: dense rank by revenue, no time axis needed",
        {
            "metrics": ["revenue", "revenue_rank"],
            "group_by": ["orders.channel"],
            "order_by": [{"key": "revenue_rank", "desc": False}],
        },
    ),
    (
        "Two facts on one time axis: revenue and refunds",
        "orders by order_date merged with refunds by refund_date; 2024-02 has refunds but no "
        "orders, refund_total fills 0 (D-FILL)",
        {
            "metrics": ["revenue", "refund_total", "refund_count"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2024-12-01"},
        },
    ),
)


def _is_example_dir(path: Path) -> bool:
    return (path / "model.yaml").is_file() and (path / "generate.py").is_file()


def find_example_dir(explicit: str | None) -> Path:
    """The shop example: --example-dir, else next to the source tree, else under the cwd."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not _is_example_dir(path):
            raise CliError(
                "example_not_found",
                f"{path} does not hold the shop example (model.yaml and generate.py)",
                hint="point --example-dir at examples/shop of a dosi checkout",
            )
        return path.resolve()
    here = Path(__file__).resolve()
    candidates = [p / "examples" / "shop" for p in here.parents]
    cwd = Path.cwd().resolve()
    candidates += [cwd / "examples" / "shop", cwd / "shop", cwd]
    for c in candidates:
        if _is_example_dir(c):
            return c
    raise CliError(
        "example_not_found",
        "cannot find the shop example (examples/shop with model.yaml and generate.py)",
        hint="run from a dosi checkout (pip install -e .), or pass --example-dir PATH",
    )


def load_generator(example_dir: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("dosi_shop_generate", example_dir / "generate.py")
    if spec is None or spec.loader is None:  # pragma: no cover - checked by _is_example_dir
        raise CliError("example_not_found", f"cannot import {example_dir / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_db(example_dir: Path) -> Path:
    """examples/shop/data/shop.duckdb when writable, else a per-user temp location."""
    data = example_dir / "data"
    try:
        data.mkdir(parents=True, exist_ok=True)
        if os.access(data, os.W_OK) or (data / "shop.duckdb").exists():
            return data / "shop.duckdb"
    except OSError:
        pass
    return Path(tempfile.gettempdir()) / "dosi-demo" / "shop.duckdb"


def ensure_db(example_dir: Path, db: Path, rebuild: bool) -> bool:
    """Build the scale-1 database when it is missing (or on --rebuild); True when built."""
    if db.exists() and not rebuild:
        return False
    db.parent.mkdir(parents=True, exist_ok=True)
    load_generator(example_dir).build(db)
    return True


@click.command(epilog=COMMAND_EPILOG)
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
@format_option(("table", "text", "json"))
def demo(example_dir: str | None, db: str | None, rebuild: bool, fmt: str) -> None:
    """Build the shop example database (once) and run showcase queries on it.

    Revenue by region, month over month, a 3-month rolling average, year to date, a rank of
    channels, and two facts (revenue and refunds) merged on one time axis. Each query is
    printed as JSON and as the equivalent `dosi query` flags, followed by its rows.
    """
    fmt = use_format(fmt)
    ex = find_example_dir(example_dir)
    db_path = Path(db).expanduser() if db else default_db(ex)
    if ensure_db(ex, db_path, rebuild) and fmt != "json":
        click.echo(f"built the demo database {_rel(db_path)}", err=True)
    model_path = ex / "model.yaml"
    engine = Engine(model_path=model_path)
    prefix = ["-m", _rel(model_path), "--db", _rel(db_path)]
    program = invoked_as()
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
                        "command": command_line(q, prefix=prefix, program=program),
                        "result": dict(result),
                    }
                )
                continue
            click.echo(click.style(f"{i}. {title}", bold=True))
            click.echo(f"   {note}")
            click.echo(f"   query: {dumps(q, indent=None)}")
            click.echo(f"   cli:   {command_line(q, prefix=prefix, program=program)}")
            click.echo()
            print_result("table", result)
            click.echo()
    finally:
        engine.close()
    if fmt == "json":
        echo_json({"model": str(model_path), "db": str(db_path), "queries": out})
    else:
        click.echo(f"model: {_rel(model_path)}   database: {_rel(db_path)}")
        for line in next_steps(program, _rel(model_path), _rel(db_path)):
            click.echo(line)


def next_steps(program: list[str], model: str, db: str) -> list[str]:
    """What to try next, spelled with `program` (how this dosi was started) so each line runs
    as printed from this directory; a venv's activate script, when dosi runs from one."""
    dosi = " ".join(shlex.quote(p) for p in program)
    m, d = shlex.quote(model), shlex.quote(db)
    lines = [
        "try:",
        f"  {dosi} list metrics -m {m}",
        f"  {dosi} query -m {m} --db {d} -M revenue -g orders.channel -o revenue.csv",
        f"  {dosi} query -m {m} --db {d} -M revenue -g metric_time:quarter -f json",
    ]
    activate = Path(program[0]).parent / "activate"
    if len(program) == 1 and "/" in program[0] and activate.is_file():
        lines.append(f"or put dosi on PATH first: source {shlex.quote(str(activate))}")
    lines.append(
        f"other engines' clients install on demand: {extra_install('postgres')} "
        "(or mysql, chdb, clickhouse, spark, datafusion: docs/engines.md)"
    )
    lines.append(docs_line())
    return lines


def docs_line() -> str:
    """Where the documentation is: the site's preview commands in a checkout (mkdocs.yml
    beside pyproject.toml), else the pages' folder."""
    if not (Path.cwd() / "mkdocs.yml").is_file():
        return "the documentation: docs/index.md of the dosi repository"
    py = shlex.quote(shown_path(Path(sys.executable)))
    return (
        f"the documentation: docs/index.md, or as a site with search: {extra_install('docs')} "
        f"&& {py} -m mkdocs serve (http://127.0.0.1:8000; `mkdocs build` writes it to site/)"
    )


def extra_install(extra: str) -> str:
    """The pip line that adds one extra: into this checkout's editable install when run from
    one (this interpreter's pip), else from the package index."""
    if (Path.cwd() / "pyproject.toml").is_file() and (Path.cwd() / "src" / "dosi").is_dir():
        py = shlex.quote(shown_path(Path(sys.executable)))
        return f"{py} -m pip install -e '.[{extra}]'"
    return f"pip install 'dosi[{extra}]'"


def _rel(path: Path) -> str:
    """`path` relative to the working directory when it lies below it, else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
