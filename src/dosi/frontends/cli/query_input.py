"""Turning `dosi` command-line input into a query: JSON text, a file, stdin or query flags.

Flag-built queries produce exactly the JSON a caller would write, so
`dosi query -M revenue -g metric_time:month --start 2024-01-01` and
`dosi query --query '{"metrics": ["revenue"], "group_by": ["metric_time:month"],
"time_range": {"start": "2024-01-01"}}'` are the same query.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dosi.frontends.cli.output import CliError
from dosi.query.bounds import MAX_QUERY_CHARS


def split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses / brackets (`a,b` -> [a, b]; `f(1,2)` stays whole)."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth > 0:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _items(values: Iterable[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(split_top_level(v))
    return out


def order_item(text: str) -> dict[str, Any]:
    """`-revenue` / `revenue:desc` / `revenue desc` -> descending; `revenue[:asc]` ascending."""
    key = text.strip()
    desc = False
    if key.startswith("-"):
        key, desc = key[1:].strip(), True
    elif key.startswith("+"):
        key = key[1:].strip()
    head, sep, tail = key.rpartition(":")
    if sep and tail.strip().lower() in ("asc", "desc"):
        key, desc = head.strip(), tail.strip().lower() == "desc"
    else:
        low = key.lower()
        for suffix, flag in ((" desc", True), (" asc", False)):
            if low.endswith(suffix):
                key, desc = key[: -len(suffix)].strip(), flag
                break
    if not key:
        raise CliError(
            "invalid_query",
            f"empty --order-by item `{text}`",
            hint="e.g. --order-by=-revenue or --order-by revenue:desc",
        )
    return {"key": key, "desc": desc}


def flags_query(
    metrics: Sequence[str],
    group_by: Sequence[str],
    where: Sequence[str],
    start: str | None,
    end: str | None,
    time_dimension: str | None,
    order_by: Sequence[str],
    limit: int | None,
    param: Sequence[str] = (),
    tagged_range: Sequence[str] = (),
    context_filter: Sequence[str] = (),
    densify: str | None = None,
    week_start: str | None = None,
) -> dict[str, Any]:
    """The JSON query the flags describe (keys only when given)."""
    names = _items(metrics)
    groups = _items(group_by)
    if not names and not groups:
        raise CliError(
            "missing_query",
            "no metrics: the query flags need at least one --metric/-M (or only --group-by/-g "
            "for the distinct values of fields)",
            hint="e.g. dosi query -M revenue -g metric_time:month, or dosi query -g "
            "orders.channel (or pass --query JSON / --query-file FILE)",
        )
    query: dict[str, Any] = {"metrics": names}
    if groups:
        query["group_by"] = groups
    preds = [w.strip() for w in where if w and w.strip()]
    if len(preds) == 1:
        query["where_sql"] = preds[0]
    elif preds:
        query["where_sql"] = " AND ".join(f"({p})" for p in preds)
    context = [w.strip() for w in context_filter if w and w.strip()]
    if len(context) == 1:
        query["context_filter"] = context[0]
    elif context:
        query["context_filter"] = " AND ".join(f"({p})" for p in context)
    if start is not None or end is not None:
        tr: dict[str, Any] = {}
        if start is not None:
            tr["start"] = start
        if end is not None:
            tr["end"] = end
        if time_dimension is not None:
            tr["dimension"] = time_dimension
        query["time_range"] = tr
    elif time_dimension is not None:
        raise CliError(
            "invalid_query",
            "--time-dimension names the axis that --start / --end filter, but neither is given",
            hint="add --start and/or --end (end is exclusive), e.g. "
            "--time-dimension metric_time --start 2025-01-01",
        )
    orders = [order_item(o) for o in _items(order_by)]
    if orders:
        query["order_by"] = orders
    if limit is not None:
        query["limit"] = limit
    if param:
        query["params"] = param_flags(param)
    if tagged_range:
        query["time_ranges"] = [tagged_range_flag(t) for t in tagged_range]
    if densify is not None:
        query["densify"] = False if densify == "false" else densify
    if week_start is not None:
        query["week_start"] = week_start
    return query


def param_flags(items: Sequence[str]) -> dict[str, Any]:
    """`--param n=6 --param n=12 --param r=east` -> {"n": [6, 12], "r": "east"}: a value is
    JSON when it parses as JSON, else a string; a repeated name binds a list."""
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise CliError(
                "invalid_query",
                f"--param `{item}` is not NAME=VALUE",
                hint="e.g. --param n=6, --param region=east or --param n=[3,6,12]",
            )
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        if name in out:
            prev = out[name] if isinstance(out[name], list) else [out[name]]
            value = [*prev, *(value if isinstance(value, list) else [value])]
        out[name] = value
    return out


def tagged_range_flag(item: str) -> dict[str, Any]:
    """`h1=2024-01-01..2024-07-01` -> {"tag": "h1", "start": ..., "end": ...}."""
    tag, sep, span = item.partition("=")
    start, dots, end = span.partition("..")
    if not sep or not dots or not tag.strip():
        raise CliError(
            "invalid_query",
            f"--tagged-range `{item}` is not TAG=START..END",
            hint="e.g. --tagged-range h1=2024-01-01..2024-07-01 (end exclusive; a bound may be "
            "empty: h2=2024-07-01..)",
        )
    out: dict[str, Any] = {"tag": tag.strip()}
    if start.strip():
        out["start"] = start.strip()
    if end.strip():
        out["end"] = end.strip()
    return out


def read_query_file(path: str) -> str:
    try:
        limit = 4 * MAX_QUERY_CHARS + 1  # bounded: /dev/zero cannot exhaust memory
        if path == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with Path(path).open("rb") as fh:
                data = fh.read(limit)
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(
            "invalid_query", f"query file {path[:200]} is not UTF-8 text", hint="save it as UTF-8"
        ) from None
    except ValueError:  # a NUL byte in the path
        raise CliError("query_file_not_found", "the query file path is not a valid path") from None
    except OSError as exc:
        raise CliError(
            "query_file_not_found",
            f"cannot read query file {path}: {exc.strerror or exc}",
            hint="pass an existing JSON file, or - to read the query from stdin",
        ) from None


_FLAG_NAMES = {"metrics": "--metric", "where": "--where", "order_by": "--order-by"}


def resolve_query(
    query_json: str | None,
    query_file: str | None,
    flags: dict[str, Any],
) -> str | dict[str, Any]:
    """The query from exactly one source: --query, --query-file, or the query flags."""
    used_flags = [name for name, value in flags.items() if value not in (None, (), [], "")]
    sources = [s for s in (query_json, query_file) if s is not None]
    if len(sources) > 1:
        raise CliError("conflicting_options", "pass either --query or --query-file, not both")
    if sources and used_flags:
        flag_names = ", ".join(_FLAG_NAMES.get(n, "--" + n.replace("_", "-")) for n in used_flags)
        raise CliError(
            "conflicting_options",
            f"a --query / --query-file query cannot be combined with query flags ({flag_names})",
            hint="put everything in the JSON query, or build it from flags only",
        )
    if query_json is not None:
        if query_json == "-":
            return sys.stdin.read()
        return query_json
    if query_file is not None:
        return read_query_file(query_file)
    if not used_flags:
        raise CliError(
            "missing_query",
            "no query given",
            hint="pass --metric/-M (with --group-by, --where, --start, ...), "
            "--query JSON, or --query-file FILE (- for stdin)",
        )
    return flags_query(**flags)


def command_line(
    query: dict[str, Any],
    command: str = "query",
    prefix: Sequence[str] = (),
    program: Sequence[str] = ("dosi",),
) -> str:
    """The `dosi <command> ...` flag spelling of a JSON query (for `dosi demo`); `program` is
    how to start dosi (`invoked_as`), so the line runs as printed."""
    args: list[str] = [*program, command, *prefix]
    args += ["-M", ",".join(query["metrics"])]
    for g in query.get("group_by", []):
        args += ["-g", g if isinstance(g, str) else f"{g['field']}:{g['grain']}"]
    if query.get("where_sql"):
        args += ["--where", query["where_sql"]]
    if query.get("context_filter"):
        args += ["--context-filter", query["context_filter"]]
    tr = query.get("time_range") or {}
    for key, flag in (("start", "--start"), ("end", "--end"), ("dimension", "--time-dimension")):
        if tr.get(key) is not None:
            args += [flag, str(tr[key])]
    for o in query.get("order_by", []):
        if isinstance(o, str):
            key, desc = o, False
        else:
            key, desc = o["key"], bool(o.get("desc"))
        args.append(f"--order-by=-{key}" if desc else f"--order-by={key}")
    if query.get("limit") is not None:
        args += ["--limit", str(query["limit"])]
    if query.get("densify") is not None:
        args += ["--densify", str(query["densify"]).lower()]
    if query.get("week_start") is not None:
        args += ["--week-start", str(query["week_start"])]
    return " ".join(shlex.quote(a) for a in args)


def invoked_as(argv0: str | None = None) -> list[str]:
    """How to start dosi again the way this process was started, as words of a shell line:
    `dosi` when that name on PATH is this very program, the script's path (`.venv/bin/dosi`)
    when it is not on PATH, else this interpreter with `-m dosi`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    script = Path(argv0)
    if script.name == "dosi" and script.is_file():
        found = shutil.which("dosi")
        if found is not None and Path(found).resolve() == script.resolve():
            return ["dosi"]
        return [shown_path(script)]
    return [shown_path(Path(sys.executable)), "-m", "dosi"]


def shown_path(path: Path) -> str:
    """`path` relative to the working directory when below it (`./x` for a bare name, so the
    shell does not search PATH), else absolute."""
    try:
        rel = path.absolute().relative_to(Path.cwd())
    except ValueError:
        return str(path.absolute())
    text = str(rel)
    return text if "/" in text else f"./{text}"


def query_from(kw: dict[str, Any]) -> str | dict[str, Any]:
    """The query of a command declared with `options.query_options`; pops those options from
    the command's keyword arguments."""
    flags = {
        k: kw.pop(k)
        for k in (
            "metrics",
            "group_by",
            "where",
            "start",
            "end",
            "time_dimension",
            "order_by",
            "limit",
            "param",
            "tagged_range",
            "context_filter",
            "densify",
            "week_start",
        )
    }
    return resolve_query(kw.pop("query_json"), kw.pop("query_file"), flags)


def json_argument(text: str | None, what: str) -> Any:
    """A JSON option value (`dosi select --query`, `dosi attribute --query`; - reads stdin)."""
    if text is None:
        return None
    if text == "-":
        text = sys.stdin.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError("invalid_json", f"{what} is not valid JSON: {exc.msg}") from None
