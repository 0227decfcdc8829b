"""Parsing model and query SQL snippets into sqlglot trees.

Only single scalar expressions are accepted: a second statement, a subquery or DDL can never
reach the generated SQL (injection is impossible by construction).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

# Ossie dialect enum -> sqlglot reader. ANSI_SQL reads with sqlglot's generic dialect.
OSI_READERS: dict[str, str | None] = {
    "ANSI_SQL": None,
    "SNOWFLAKE": "snowflake",
    "DATABRICKS": "databricks",
    "BIGQUERY": "bigquery",
}

# Engine target dialect -> the Ossie dialect entry that matches it, when one does.
TARGET_TO_OSI: dict[str, str] = {
    "snowflake": "SNOWFLAKE",
    "databricks": "DATABRICKS",
    "spark": "DATABRICKS",
    "bigquery": "BIGQUERY",
}

_FORBIDDEN = (
    exp.Subquery,
    exp.Select,
    exp.Union,
    exp.Insert,
    exp.Delete,
    exp.Update,
    exp.Drop,
    exp.Create,
    exp.Command,
    exp.Placeholder,
    exp.Parameter,
)


class SqlSnippetError(ValueError):
    """A snippet that is not one plain scalar expression."""


def parse_scalar(text: str, read: str | None = None) -> exp.Expression:
    if not isinstance(text, str) or not text.strip():
        raise SqlSnippetError("the expression is empty")
    try:
        stmts = sqlglot.parse(text, read=read)
    except (ParseError, TokenError) as exc:
        raise SqlSnippetError(f"cannot parse `{text}`: {_first_line(exc)}") from None
    stmts = [s for s in stmts if s is not None]
    if len(stmts) != 1:
        raise SqlSnippetError(f"`{text}` holds {len(stmts)} statements; write one expression")
    node = stmts[0]
    for bad in node.find_all(*_FORBIDDEN):
        kind = type(bad).__name__.lower()
        raise SqlSnippetError(f"`{text}` contains a {kind}; only scalar expressions are allowed")
    if isinstance(node, exp.Alias):
        raise SqlSnippetError(f"`{text}` carries an alias; write the bare expression")
    return node


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def has_window(node: exp.Expression) -> bool:
    return node.find(exp.Window) is not None


def strip_parens(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node
