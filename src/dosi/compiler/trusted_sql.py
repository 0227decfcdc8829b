"""Model SQL is trusted but bounded: a dataset `source` or a field / metric expression may not
write, run a statement, or read files or settings, unless the model is loaded with
`trust_sql=True` (`Engine(..., trust_sql=True)`, CLI `--trust-sql`).

Model authors write arbitrary SQL on purpose (their warehouse's functions), so this check is a
bound, not an allow-list: it names the statement kinds and the function families that reach
outside the query (files, network, settings, variables, sleeping, extensions). The DuckDB
connection dosi opens is also locked down (`dosi.execute.duckdb_runner`), a second layer.
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp

#: Statements that write, change the session or run a command: never inside model SQL.
STATEMENTS: Final[tuple[type[exp.Expression], ...]] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Copy",
        "Create",
        "Drop",
        "Alter",
        "TruncateTable",
        "Command",
        "Use",
        "Set",
        "SetItem",
        "Pragma",
        "Attach",
        "Detach",
        "Install",
        "Describe",
        "Show",
        "Transaction",
        "Commit",
        "Rollback",
        "Grant",
        "Revoke",
        "Kill",
        "Cache",
        "Uncache",
        "Refresh",
        "LoadData",
        "Analyze",
        "Export",
        "Put",
        "Get",
        "Lock",
        "Declare",
        "Execute",
        "Summarize",
    )
    if hasattr(exp, name)
)

#: Function name prefixes that read files, the network, settings or system state, or have
#: side effects (DuckDB, PostgreSQL, MySQL and others).
FUNCTION_PREFIXES: Final[tuple[str, ...]] = (
    "read_",
    "write_",
    "glob",
    "pg_",
    "lo_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "duckdb_",
    "pragma_",
    "iceberg_",
    "delta_",
    "parquet_",
    "http",
    "excel_",
    "st_read",
    "sniff_",
    "load_",
    "sleep",
    "dblink",
    "file_",
    "current_setting",
    "set_config",
    "getvariable",
    "setseed",
    "getenv",
    "which_secret",
    "query",
    "benchmark",
    "system",
    "shell",
    "json_execute",
)

#: Exact function names that read session or system state.
FUNCTION_NAMES: Final[frozenset[str]] = frozenset(
    {
        "current_schema",
        "current_schemas",
        "current_database",
        "current_catalog",
        "current_user",
        "current_role",
        "session_user",
        "user",
        "version",
        "database_size",
        "pg_backend_pid",
        "txid_current",
        "connection_id",
    }
)

#: Table names that DuckDB would read as a file (a replacement scan) or a URL.
_FILE_MARKERS: Final[tuple[str, ...]] = ("/", "\\", ":", "~")
_FILE_SUFFIXES: Final[tuple[str, ...]] = (
    ".csv",
    ".tsv",
    ".txt",
    ".json",
    ".jsonl",
    ".ndjson",
    ".parquet",
    ".arrow",
    ".xlsx",
    ".db",
    ".duckdb",
    ".sqlite",
    ".gz",
    ".zst",
)


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def untrusted_construct(tree: exp.Expression) -> str | None:
    """What in `tree` needs `trust_sql=True`, named for the error message; None if nothing."""
    for node in tree.walk():
        if isinstance(node, STATEMENTS):
            return f"a {type(node).__name__.upper()} statement"
        if isinstance(node, (exp.ReadCSV, exp.ReadParquet)):
            return f"function `{_function_name(node)}` (reads files)"
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name.startswith(FUNCTION_PREFIXES) or name in FUNCTION_NAMES:
                return f"function `{name[:64]}` (reads files, settings or system state)"
        if isinstance(node, exp.Table):
            if isinstance(node.this, exp.Literal):
                return "a file path as a table"
            name = str(node.name).lower()
            if any(m in name for m in _FILE_MARKERS) or name.endswith(_FILE_SUFFIXES):
                return f"table `{name[:64]}`, which reads as a file path"
        if isinstance(node, (exp.Placeholder, exp.Parameter, exp.SessionParameter)):
            return "a session variable or parameter"
    return None
