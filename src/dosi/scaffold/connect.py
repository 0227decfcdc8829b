"""`dosi init --db URI`: which engine a URI or a database file names.

`postgresql://`, `mysql://`, `mariadb://`, `clickhouse://`, `chdb://`, `sqlite:///`,
`duckdb:///` and `sc://` (Spark Connect) name their engine, as does a libpq keyword string
(`host=... dbname=...`); a plain path is a DuckDB or
SQLite file, told apart by the file's own header (`.duckdb` / `.sqlite` suffixes decide
when the file does not exist yet).
"""

from __future__ import annotations

import re
from pathlib import Path

from dosi.errors import ArgumentError, ExecuteError
from dosi.execute.connections import TYPE_ALIASES, Profile
from dosi.scaffold.catalog import PATH_PREFIXES

_SCHEMES: dict[str, str] = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mariadb",
    "clickhouse": "clickhouse",
    "clickhouses": "clickhouse",
    "chdb": "chdb",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "sc": "spark",
    "spark": "spark",
}
_SQLITE_MAGIC = b"SQLite format 3\x00"
_KEYWORD_DSN = re.compile(r"^\s*(host|dbname|user|port|service)\s*=")


def _file_kind(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        head = b""
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    if len(head) >= 12 and head[8:12] == b"DUCK":
        return "duckdb"
    if path.suffix.lower() in (".sqlite", ".sqlite3", ".db3"):
        return "sqlite"
    return "duckdb"


def profile_for_uri(uri: str) -> Profile:
    """The connection profile `--db URI` stands for."""
    text = uri.strip()
    if not text:
        raise ArgumentError("--db is empty", hint="pass a database file or URI")
    scheme = text.split("://", 1)[0].lower() if "://" in text else None
    if scheme is not None:
        kind = _SCHEMES.get(scheme) or TYPE_ALIASES.get(scheme)
        if kind is None:
            raise ArgumentError(
                f"--db {scheme}:// names no engine dosi init can read",
                candidates=sorted(_SCHEMES),
                hint="e.g. postgresql://user@host:5432/db or a DuckDB / SQLite file path",
            )
        for prefix in PATH_PREFIXES.get(kind, ()):  # the runner opens the path behind it
            text = text.removeprefix(prefix)
        return Profile("db", kind, text)
    if text.startswith("local[") or text == "local":
        return Profile("db", "spark", text)
    if _KEYWORD_DSN.match(text):  # libpq keyword form: host=... dbname=...
        return Profile("db", "postgres", text)
    path = Path(text).expanduser()
    if not path.exists():
        raise ExecuteError(
            "config",
            f"database file `{text[:200]}` does not exist",
            hint="pass an existing DuckDB or SQLite file, or a URI such as postgresql://...",
        )
    return Profile("db", _file_kind(path), str(path))
