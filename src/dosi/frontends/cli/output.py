"""Rendering for the `dosi` command line: tables, CSV, JSON and structured errors.

Everything here writes through `click.echo` so `click.testing.CliRunner` captures it; tables use
rich on a terminal and a plain aligned text table otherwise (pipes, files, tests), so nothing is
ever wrapped or truncated when the output is consumed by another program.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from dosi.errors import (
    AccessError,
    ArgumentError,
    ExecuteError,
    ModelError,
    OsiError,
    QueryError,
)
from dosi.execute.values import decimal_text, json_decimal
from dosi.frontends.contract import csv_cell

# Exit codes (documented in the `dosi --help` epilog).
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_QUERY = 2
EXIT_MODEL = 3
EXIT_EXECUTE = 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT (128 + 2)

NULL_TEXT = "NULL"


class CliError(OsiError):
    """A bad command line (missing model, conflicting options, ...): exit code 2."""

    kind = "usage_error"


class OutputWriteError(OsiError):
    """Writing the output failed after it started (a full disk, an I/O error): exit code 4."""

    kind = "output_error"


def exit_code_for(err: BaseException) -> int:
    if isinstance(err, ModelError):
        return EXIT_MODEL
    if isinstance(err, (ExecuteError, OutputWriteError)):
        return EXIT_EXECUTE
    if isinstance(err, (QueryError, CliError, ArgumentError, AccessError)):
        return EXIT_QUERY
    return EXIT_INTERNAL


# -- JSON ---------------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """A copy of `value` that `json.dumps` turns into strictly valid JSON (no NaN / Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return json_decimal(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def dumps(value: Any, indent: int | None = 2) -> str:
    return json.dumps(jsonable(value), indent=indent, ensure_ascii=False, allow_nan=False)


def echo_json(value: Any) -> None:
    click.echo(dumps(value))


# -- cell formatting ----------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    if isinstance(v, _Shown):
        return True
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def cell_text(v: Any, scale: int | None = None) -> str:
    """Display text of one value in a table (JSON and CSV keep full precision).

    Decimals (`decimal.Decimal` in rows) print their exact digits at their scale, so money
    reads 135697.40; `scale` gives a float column read from a DECIMAL that many digits."""
    if v is None:
        return NULL_TEXT
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        if scale is not None:
            return f"{v:.{scale}f}"
        if v.is_integer() and abs(v) < 1e15:
            return repr(v)
        if abs(v) < 1e15:
            return repr(round(v, 6))
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return decimal_text(v) if v.is_finite() else str(v)
    if isinstance(v, (list, tuple)):
        if all(not isinstance(x, (dict, list, tuple)) for x in v):
            return ", ".join(cell_text(x) for x in v)
        return dumps(v, indent=None)
    if isinstance(v, dict):
        return dumps(v, indent=None)
    return str(v)


def csv_text(v: Any) -> str:
    """CSV value: empty for NULL, exact digits, lists joined with commas, objects as JSON."""
    return csv_cell(v)


# -- tables -------------------------------------------------------------------------------------
def stdout_is_terminal() -> bool:
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError):
        return False


_MIDNIGHT = re.compile(r"\d{4}-\d{2}-\d{2} 00:00:00")


def fixed(v: float | decimal.Decimal, precision: int) -> str:
    """`v` with exactly `precision` digits after the point (`--precision`): decimals rounded
    from their exact digits, floats from their binary value, half to even both."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, decimal.Decimal) and not v.is_finite():
        return str(v)
    return format(v, f".{precision}f")


def _display_rows(
    columns: Sequence[str],
    rows: list[Mapping[str, Any]],
    scales: Mapping[str, int],
    precision: int | None = None,
) -> list[dict[str, Any]]:
    """Rows with cells pre-rendered for display: decimals at their scale (or every
    non-integer number at `precision`), and a timestamp column whose values are all
    midnights (a date truncated to month) shown as dates."""
    midnight = {
        c
        for c in columns
        if any(isinstance(r.get(c), str) for r in rows)
        and all(
            r.get(c) is None or (isinstance(r.get(c), str) and _MIDNIGHT.fullmatch(r[c]))
            for r in rows
        )
    }
    out = []
    for r in rows:
        d: dict[str, Any] = {}
        for c in columns:
            v = r.get(c)
            if v is not None and c in midnight:
                v = v[:10]
            elif precision is not None and isinstance(v, (float, decimal.Decimal)):
                v = _Shown(fixed(v, precision))
            elif isinstance(v, float) and c in scales:
                v = _Shown(cell_text(v, scales[c]))
            d[c] = v
        out.append(d)
    return out


class _Shown(str):
    """A number already rendered for display (still right-aligned as a number)."""


def print_table(
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    title: str | None = None,
    null: str = NULL_TEXT,
    scales: Mapping[str, int] | None = None,
    precision: int | None = None,
    fit: bool = False,
) -> None:
    """Rows (dicts) as a table: rich on a terminal, plain aligned text otherwise.

    `null` is how a missing value shows: NULL for a NULL in data (every command spells it
    so), blank for an attribute a catalog entry does not have; `scales` gives DECIMAL columns
    their digits after the point, `precision` every non-integer number. `fit` (catalog
    listings) keeps a terminal table one line per row: the first column whole, long text cut
    with an ellipsis (piped output is never cut)."""
    rows = _display_rows(columns, list(rows), scales or {}, precision)
    numeric = [
        any(_is_number(r.get(c)) for r in rows)
        and all(r.get(c) is None or _is_number(r.get(c)) for r in rows)
        for c in columns
    ]
    if stdout_is_terminal():
        _rich_table(columns, rows, numeric, title, null, fit)
    else:
        _plain_table(columns, rows, numeric, title, null)


def _rich_table(
    columns: Sequence[str],
    rows: list[Mapping[str, Any]],
    numeric: list[bool],
    title: str | None,
    null: str,
    fit: bool = False,
) -> None:
    table = Table(title=title, title_justify="left", header_style="bold", show_lines=False)
    console = Console(file=sys.stdout, soft_wrap=False)
    widths = _fitted_widths(columns, rows, console.width) if fit else None
    for i, (c, num) in enumerate(zip(columns, numeric, strict=True)):
        justify = "right" if num else "left"
        if widths is None:
            table.add_column(c, justify=justify, overflow="fold")
        else:
            table.add_column(
                c,
                justify=justify,
                no_wrap=True,
                overflow="ellipsis",
                min_width=widths[i],
                max_width=widths[i],
            )
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            cells.append(Text(null, style="dim") if v is None else Text(cell_text(v)))
        table.add_row(*cells)
    console.print(table)


def _fitted_widths(columns: Sequence[str], rows: list[Mapping[str, Any]], width: int) -> list[int]:
    """Column widths that fit `width` characters of terminal: the first column whole, the
    others at their natural width under one common cap, as high as fits (the widest text is
    cut first), never below 3."""
    natural = [
        max([len(c), *(len(cell_text(r.get(c))) for r in rows if r.get(c) is not None)])
        for c in columns
    ]
    room = width - (3 * len(columns) + 1) - natural[0]  # rich's borders and padding
    rest = natural[1:]
    cap = max(rest, default=0)
    while cap > 3 and sum(min(w, cap) for w in rest) > room:
        cap -= 1
    return [natural[0], *(min(w, max(cap, 3)) for w in rest)]


def _plain_table(
    columns: Sequence[str],
    rows: list[Mapping[str, Any]],
    numeric: list[bool],
    title: str | None,
    null: str,
) -> None:
    cells = [[null if r.get(c) is None else cell_text(r.get(c)) for c in columns] for r in rows]
    widths = [len(c) for c in columns]
    for line in cells:
        for i, text in enumerate(line):
            widths[i] = max(widths[i], len(text))

    def fmt(values: Sequence[str], header: bool = False) -> str:
        parts = []
        for i, text in enumerate(values):
            right = numeric[i] and not header
            parts.append(text.rjust(widths[i]) if right else text.ljust(widths[i]))
        return " | ".join(parts).rstrip()

    out = io.StringIO()
    if title:
        out.write(title + "\n")
    out.write(fmt(list(columns), header=True) + "\n")
    out.write("-+-".join("-" * w for w in widths) + "\n")
    for line in cells:
        out.write(fmt(line) + "\n")
    click.echo(out.getvalue(), nl=False)


def print_kv(pairs: Iterable[tuple[str, Any]], title: str | None = None) -> None:
    """A two-column key / value table (one metric or dataset in detail)."""
    rows = [{"key": k, "value": cell_text(v) if v is not None else None} for k, v in pairs]
    print_table(["key", "value"], rows, title, null="")


def print_csv(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([csv_text(r.get(c)) for c in columns])
    click.echo(out.getvalue(), nl=False)


# -- diagnostics and errors ---------------------------------------------------------------------
def diagnostic_line(d: Mapping[str, Any]) -> str:
    """`[code] path (line N): message` for one diagnostic dict."""
    where = d.get("path") or ""
    if d.get("line") is not None:
        where = f"{where} (line {d['line']})".strip()
    return f"[{d.get('code')}] {where + ': ' if where else ''}{d.get('message')}"


def print_diagnostics(
    diags: Sequence[Mapping[str, Any]], *, err: bool, label: str | None = None
) -> None:
    for d in diags:
        severity = label or d.get("severity") or "error"
        color = "yellow" if severity == "warning" else "red"
        click.echo(click.style(f"{severity}: ", fg=color, bold=True) + diagnostic_line(d), err=err)
        if d.get("candidates"):
            click.echo(f"    did you mean: {', '.join(map(str, d['candidates']))}", err=err)
        if d.get("hint"):
            click.echo(f"    hint: {d['hint']}", err=err)


def print_warnings(warnings: Sequence[Mapping[str, Any]]) -> None:
    """Warnings of a compile / query go to stderr so stdout stays machine-readable."""
    print_diagnostics(warnings, err=True, label="warning")


def report_error(err: OsiError, fmt: str) -> int:
    """Print a structured error (JSON on stdout under --format json, else text on stderr)."""
    code = exit_code_for(err)
    if fmt == "json":
        echo_json({"error": err.to_dict()})
        return code
    if isinstance(err, ModelError):
        n = len(err.issues)
        head = "the model is invalid" + (f" ({n} problems)" if n > 1 else "")
        click.echo(click.style("error: ", fg="red", bold=True) + head, err=True)
        for d in err.issues:
            dd = d.to_dict()
            click.echo("  " + diagnostic_line(dd), err=True)
            if dd.get("candidates"):
                click.echo(f"      did you mean: {', '.join(dd['candidates'])}", err=True)
            if dd.get("hint"):
                click.echo(f"      hint: {dd['hint']}", err=True)
        return code
    click.echo(
        click.style("error: ", fg="red", bold=True) + f"[{err.code}] {err.message}", err=True
    )
    if err.metrics:
        click.echo(f"  metrics: {', '.join(err.metrics)}", err=True)
    if err.missing_dimensions:
        click.echo(f"  missing dimensions: {', '.join(err.missing_dimensions)}", err=True)
    if err.candidates:
        click.echo(f"  did you mean: {', '.join(map(str, err.candidates))}", err=True)
    if err.hint:
        click.echo(f"  hint: {err.hint}", err=True)
    if err.suggested_retry:
        click.echo(f"  suggested retry: {dumps(err.suggested_retry, indent=None)}", err=True)
    if isinstance(err.detail, Mapping) and err.detail.get("sql"):
        click.echo(f"  sql: {err.detail['sql']}", err=True)
    return code


def report_internal(exc: BaseException, fmt: str) -> int:
    message = f"internal error: {type(exc).__name__}: {exc}"
    hint = "this is a bug in dosi; please report it (set DOSI_DEBUG=1 to see the traceback)"
    if fmt == "json":
        echo_json(
            {
                "error": {
                    "error": "internal_error",
                    "code": "internal",
                    "message": message,
                    "metrics": [],
                    "candidates": [],
                    "hint": hint,
                    "suggested_retry": None,
                    "detail": None,
                }
            }
        )
    else:
        click.echo(click.style("error: ", fg="red", bold=True) + message, err=True)
        click.echo(f"  hint: {hint}", err=True)
    return EXIT_INTERNAL
