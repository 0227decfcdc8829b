"""What a statement is, before anything runs: a semantic query over the virtual table, a
catalog query, or one of the session commands clients send (SET, SHOW, BEGIN, DECLARE ...
CURSOR, FETCH, ...). Nothing here executes client SQL anywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from dosi.errors import QueryError
from dosi.query.semantic_sql import SCHEMA, parse

_COMMENT = re.compile(r"^\s*(?:--[^\n]*\n|/\*.*?\*/|\s)*", re.S)
_WRITES = (
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "CREATE",
    "DROP",
    "ALTER",
    "TRUNCATE",
    "GRANT",
    "REVOKE",
    "COPY",
    "VACUUM",
    "ANALYZE",
    "CLUSTER",
    "REINDEX",
    "COMMENT",
    "REFRESH",
    "LOCK",
    "CALL",
    "DO",
    "IMPORT",
    "SECURITY",
    "REASSIGN",
    "LOAD",
)
DECLARE = re.compile(
    r"^DECLARE\s+(?P<name>\"(?:[^\"]|\"\")+\"|[^\s]+)\s+(?P<opts>(?:BINARY\s+|INSENSITIVE\s+|"
    r"ASENSITIVE\s+|NO\s+SCROLL\s+|SCROLL\s+)*)CURSOR\s+(?:(?P<hold>WITH|WITHOUT)\s+HOLD\s+)?"
    r"FOR\s+(?P<query>.*)$",
    re.I | re.S,
)
FETCH = re.compile(
    r"^(?P<verb>FETCH|MOVE)\s+(?:(?P<dir>NEXT|PRIOR|FIRST|LAST|ALL|FORWARD|BACKWARD|"
    r"ABSOLUTE|RELATIVE)\s*)?(?P<count>[+-]?\d+|ALL)?\s*(?:FROM|IN)?\s*"
    r"(?P<name>\"(?:[^\"]|\"\")+\"|[^\s;]+)\s*;?$",
    re.I | re.S,
)
COPY_OUT = re.compile(
    r"^COPY\s*\((?P<query>.*)\)\s*TO\s+STDOUT\b\s*(?:WITH\b)?\s*(?P<opts>.*)$", re.I | re.S
)
SET = re.compile(
    r"^SET\s+(?:SESSION\s+|LOCAL\s+)?(?P<name>[\w.]+)\s*(?:=|\bTO\b)\s*"
    r"(?P<value>.*?)\s*;?$",
    re.I | re.S,
)
SET_TZ = re.compile(
    r"^SET\s+(?:SESSION\s+|LOCAL\s+)?TIME\s+ZONE\s+(?P<value>.*?)\s*;?$", re.I | re.S
)


@dataclass(frozen=True)
class Statement:
    """One classified statement: `kind` and, for queries, the parsed tree."""

    kind: str  # empty, semantic, catalog, explain, copy, command
    text: str
    keyword: str = ""
    tree: exp.Expression | None = None
    inner: Statement | None = None  # COPY (query) TO STDOUT: the query
    copy_format: str = "text"  # text, csv, binary


def strip(text: str) -> str:
    return _COMMENT.sub("", text, count=1).strip()


def split(text: str) -> list[str]:
    """The statements of a simple-query string (semicolons outside strings and comments)."""
    try:
        tokens = sqlglot.tokenize(text, read="postgres")
    except (TokenError, ValueError):
        return [text]
    out, start = [], 0
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            out.append(text[start : t.end])
            start = t.end + 1
    out.append(text[start:])
    return [s for s in out if strip(s).rstrip(";").strip()] or [""]


def unquote(name: str) -> str:
    if name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()


def classify(text: str, table: str) -> Statement:
    body = strip(text).rstrip(";").strip()
    if not body:
        return Statement("empty", text)
    keyword = re.split(r"[\s(;]", body, maxsplit=1)[0].upper()
    if keyword in ("SELECT", "WITH", "VALUES", "TABLE") or body.startswith("("):
        tree = parse(body)
        return Statement("semantic" if reads_table(tree, table) else "catalog", body, keyword, tree)
    if keyword == "EXPLAIN":
        inner = re.sub(r"^EXPLAIN\s+(\([^)]*\)\s*|ANALYZE\s+|VERBOSE\s+)*", "", body, flags=re.I)
        tree = parse(inner)
        if not reads_table(tree, table):
            raise QueryError(
                "sql_unsupported",
                "EXPLAIN explains semantic queries only",
                hint=f"EXPLAIN SELECT ... FROM {table}",
            )
        return Statement("explain", inner, keyword, tree)
    if keyword == "COPY" and (hit := COPY_OUT.match(body)):
        inner = classify(hit.group("query"), table)
        if inner.kind not in ("semantic", "catalog"):
            raise QueryError("sql_unsupported", "COPY (query) TO STDOUT copies a SELECT")
        opts = hit.group("opts").lower()
        fmt = "binary" if "binary" in opts else "csv" if "csv" in opts else "text"
        return Statement("copy", body, keyword, inner.tree, inner, fmt)
    if keyword in _WRITES:
        raise QueryError(
            "read_only",
            f"{keyword} is not allowed: the semantic database is read-only",
            hint="query the semantic table with SELECT; the model defines its content",
        )
    return Statement("command", body, keyword)


def reads_table(tree: exp.Expression, table: str) -> bool:
    """The query reads the semantic table (in any schema a client may spell it with)."""
    low = table.lower()
    for t in tree.find_all(exp.Table):
        db = t.db.lower() if t.db else ""
        if t.name.lower() == low and db in ("", SCHEMA):
            return True
    return False
