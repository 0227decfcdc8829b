"""Parsing model and query SQL snippets into sqlglot trees.

Only single scalar expressions are accepted: a second statement, a subquery or DDL can never
reach the generated SQL (injection is impossible by construction).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

from dosi.compiler.trees import kept, met

# Expression dialect -> sqlglot reader. ANSI_SQL reads with sqlglot's generic dialect; MDX,
# TABLEAU and MAQL are not SQL (no reader). Names outside the Ossie enumeration that public
# models use (the Ossie DuckDB converter writes DUCKDB) read with their engine's parser.
OSSIE_SQL_READERS: dict[str, str | None] = {
    "ANSI_SQL": None,
    "SNOWFLAKE": "snowflake",
    "DATABRICKS": "databricks",
    "BIGQUERY": "bigquery",
}
OUTSIDE_READERS: dict[str, str | None] = {
    "DUCKDB": "duckdb",
    "POSTGRES": "postgres",
    "POSTGRESQL": "postgres",
    "CLICKHOUSE": "clickhouse",
    "MYSQL": "mysql",
    "MARIADB": "mysql",
    "TIDB": "mysql",
    "DORIS": "doris",
    "STARROCKS": "starrocks",
    "SQLITE": "sqlite",
    "SPARK": "spark",
    "HIVE": "hive",
    "TRINO": "trino",
    "PRESTO": "presto",
    "ATHENA": "athena",
    "ORACLE": "oracle",
    "REDSHIFT": "redshift",
    "TSQL": "tsql",
    "SQLSERVER": "tsql",
}
OSI_READERS: dict[str, str | None] = {**OSSIE_SQL_READERS, **OUTSIDE_READERS}

# Engine target dialect -> the expression dialect entries written for it, in preference order.
TARGET_TO_OSI: dict[str, tuple[str, ...]] = {
    "snowflake": ("SNOWFLAKE",),
    "databricks": ("DATABRICKS",),
    "spark": ("SPARK", "DATABRICKS"),
    "bigquery": ("BIGQUERY",),
    "duckdb": ("DUCKDB",),
    "postgres": ("POSTGRES", "POSTGRESQL"),
    "clickhouse": ("CLICKHOUSE",),
    "mysql": ("MYSQL",),
    "mariadb": ("MARIADB", "MYSQL"),
    "tidb": ("TIDB", "MYSQL"),
    "doris": ("DORIS",),
    "starrocks": ("STARROCKS",),
    "sqlite": ("SQLITE",),
    "hive": ("HIVE",),
    "trino": ("TRINO",),
    "presto": ("PRESTO",),
    "athena": ("ATHENA",),
    "oracle": ("ORACLE",),
    "redshift": ("REDSHIFT",),
    "tsql": ("TSQL", "SQLSERVER"),
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


class SqlTooComplex(SqlSnippetError):
    """A snippet over a size or nesting limit (checked before parsing, so the recursive parser
    and renderers never see it)."""

    def __init__(self, message: str, limit: str, maximum: int, actual: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.maximum = maximum
        self.actual = actual


@dataclass(frozen=True)
class SqlLimits:
    """Size and nesting bounds for one kind of SQL snippet (docs/limits.md)."""

    max_chars: int
    max_tokens: int
    max_depth: int  # nesting of parentheses, CASE, NOT / sign chains and the parsed tree
    max_nodes: int


#: Query-time predicates (where_sql): small, written by callers.
PREDICATE_LIMITS = SqlLimits(max_chars=20_000, max_tokens=8_000, max_depth=64, max_nodes=8_000)
#: Model expressions: written by model authors, still bounded.
MODEL_LIMITS = SqlLimits(max_chars=100_000, max_tokens=20_000, max_depth=64, max_nodes=20_000)

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE, TokenType.CASE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.END})
_PREFIX = frozenset({TokenType.NOT, TokenType.DASH, TokenType.PLUS, TokenType.TILDE})
# Chains the parser builds in a loop and DuckDB flattens: they do not count as nesting.
_FLAT = (exp.And, exp.Or, exp.Paren)


# One sqlglot dialect instance per reader: `Tokenizer()` and `sqlglot.parse(read=...)` build a
# new dialect object per call, which was a fifth of a large model's load (docs/performance.md,
# "Model load"). Dialect objects hold settings only, so one instance serves every parse.
_GENERIC = Dialect.get_or_raise(None)
_READERS: dict[str, Dialect] = {}


def _reader(read: str | None) -> Dialect:
    if read is None:
        return _GENERIC
    got = _READERS.get(read)
    if got is None:
        got = _READERS[read] = Dialect.get_or_raise(read)
    return got


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[:n] + f"... ({len(text)} characters)"


def check_text_limits(text: str, limits: SqlLimits, what: str = "the expression") -> list[Token]:
    """Reject a snippet over the size or nesting limits before any recursive parser runs; the
    tokens (sqlglot's generic tokenizer) are returned for a parse that reads the same way."""
    if len(text) > limits.max_chars:
        raise SqlTooComplex(
            f"{what} has {len(text)} characters; the limit is {limits.max_chars}",
            "max_chars",
            limits.max_chars,
            len(text),
        )
    try:
        tokens = Tokenizer(dialect=_GENERIC).tokenize(text)
    except (TokenError, ValueError) as exc:
        raise SqlSnippetError(f"cannot parse `{_short(text)}`: {_first_line(exc)}") from None
    if len(tokens) > limits.max_tokens:
        raise SqlTooComplex(
            f"{what} has {len(tokens)} tokens; the limit is {limits.max_tokens}",
            "max_tokens",
            limits.max_tokens,
            len(tokens),
        )
    depth = deepest = run = 0
    for tok in tokens:
        kind = tok.token_type
        if kind in _OPEN:
            depth += 1
        elif kind in _CLOSE:
            depth = max(depth - 1, 0)
        run = run + 1 if kind in _PREFIX else 0
        deepest = max(deepest, depth + run)
    if deepest > limits.max_depth:
        raise SqlTooComplex(
            f"{what} nests {deepest} levels deep; the limit is {limits.max_depth}",
            "max_depth",
            limits.max_depth,
            deepest,
        )
    return tokens


def check_tree_limits(
    node: exp.Expression, limits: SqlLimits, what: str = "the expression"
) -> None:
    """Bound a parsed (or inlined) tree: node count and nesting, walked without recursion."""
    count = 0
    stack: list[tuple[exp.Expression, int]] = [(node, 1)]
    while stack:
        cur, depth = stack.pop()
        count += 1
        if count > limits.max_nodes:
            raise SqlTooComplex(
                f"{what} has more than {limits.max_nodes} syntax nodes",
                "max_nodes",
                limits.max_nodes,
                count,
            )
        if depth > limits.max_depth:
            raise SqlTooComplex(
                f"{what} nests more than {limits.max_depth} levels deep",
                "max_depth",
                limits.max_depth,
                depth,
            )
        step = 0 if isinstance(cur, _FLAT) else 1
        stack.extend((child, depth + step) for child in cur.iter_expressions())


def parse_scalar(
    text: str,
    read: str | None = None,
    limits: SqlLimits = MODEL_LIMITS,
    bind_markers: bool = False,
) -> exp.Expression:
    """One bounded scalar expression. `bind_markers`: `:name` placeholders are kept (a D-DERIVE
    filter `where`, whose D-PARAM slots the caller fills with typed literals).

    The caller owns the tree it gets: a short text met before is a copy of the tree kept for
    it (models repeat expressions, queries their filters; a copy is cheaper than a parse)."""
    if not isinstance(text, str) or not text.strip():
        raise SqlSnippetError("the expression is empty")
    key, short = (text, read, limits, bind_markers), len(text) <= 1000
    got = kept(key) if short else None  # short texts only (dosi.compiler.trees)
    if got is None:
        got = _parse_text(text, read, limits, bind_markers)
        if short:
            met(key, got)
    return got


def _parse_text(
    text: str, read: str | None, limits: SqlLimits, bind_markers: bool
) -> exp.Expression:
    tokens = check_text_limits(text, limits)
    reader = _reader(read)
    try:
        # the generic reader parses the tokens the limits were checked on (one tokenizer pass)
        stmts = reader.parser().parse(tokens if read is None else reader.tokenize(text), text)
    except (ParseError, TokenError) as exc:
        raise SqlSnippetError(f"cannot parse `{_short(text)}`: {_first_line(exc)}") from None
    except RecursionError:  # a backstop: check_text_limits bounds nesting first
        raise SqlTooComplex(
            "the expression nests too deeply to parse", "max_depth", limits.max_depth, -1
        ) from None
    stmts = [s for s in stmts if s is not None]
    if len(stmts) != 1:
        raise SqlSnippetError(
            f"`{_short(text)}` holds {len(stmts)} statements; write one expression"
        )
    node = stmts[0]
    check_tree_limits(node, limits)
    for bad in node.find_all(*_FORBIDDEN):
        if bind_markers and isinstance(bad, exp.Placeholder) and bad.name:
            continue
        kind = type(bad).__name__.lower()
        raise SqlSnippetError(
            f"`{_short(text)}` contains a {kind}; only scalar expressions are allowed"
        )
    if isinstance(node, exp.Alias):
        raise SqlSnippetError(f"`{_short(text)}` carries an alias; write the bare expression")
    drop_positions(node)
    return node


_POSITIONS = ("line", "col", "start", "end")


def drop_positions(node: exp.Expression) -> None:
    """Forget the parser's token positions (nothing reads them once parsed): every query
    clones these trees to build its SQL, and copying each node's position dict was a fifth
    of a compile (docs/performance.md). Other meta (dosi's field tag, sqlglot's own) stays."""
    for n in node.walk():
        meta = n._meta
        if meta:
            for key in _POSITIONS:
                meta.pop(key, None)
            if not meta:
                n._meta = None


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def has_window(node: exp.Expression) -> bool:
    return node.find(exp.Window) is not None


def strip_parens(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node
