"""No dialect-name comparison outside src/dosi/sql/dialects/ (issue 19, Deliver item 4; the
style notes: "the planner asks the dialect; it never tests `if dialect == "mysql"`").

A dialect's behaviour is a fact on its class, so a new warehouse is a new dialect module, not
a hunt for `if` statements. Flagged, read with ast:
- a comparison (`==`, `!=`, `in`, `not in`) of a string literal with an expression that names
  a dialect (`dialect == "x"`, `profile.dialect != "duckdb"`, `self.dialect.name in (...)`);
- a comparison with a dialect name literal (`== "mysql"`, `.name in ("mysql", "mariadb")`)
  anywhere outside the dialects package and dosi.execute, whose runner registry dispatches
  on connection types (engine kinds, which share some of the names) by design.
"""

from __future__ import annotations

import ast

import pytest
from archkit import PACKAGE, modules, relpath, tree

DIALECTS_PACKAGE = "dosi.sql.dialects"
ENGINE_REGISTRY = "dosi.execute"  # connection types, not dialects

# Every name and alias `compile(dialect=...)` accepts (tests/sql/test_sql_snapshots.py keeps the
# list of registered dialects in step with the registry).
DIALECT_NAMES = frozenset(
    {
        "athena",
        "bigquery",
        "clickhouse",
        "databricks",
        "datafusion",
        "doris",
        "duckdb",
        "hive",
        "mariadb",
        "mysql",
        "oracle",
        "postgres",
        "presto",
        "redshift",
        "snowflake",
        "spark",
        "sqlite",
        "starrocks",
        "tidb",
        "trino",
        "tsql",
        # aliases
        "postgresql",
        "pg",
        "chdb",
        "sqlserver",
        "mssql",
    }
)


def _literals(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_literals(e) for e in node.elts)) if node.elts else set()
    return set()


def _names_a_dialect(node: ast.expr) -> bool:
    return not _literals(node) and "dialect" in ast.unparse(node).lower()


def flagged(node: ast.Compare, engine_registry: bool = False) -> bool:
    operands = [node.left, *node.comparators]
    literals = set().union(*(_literals(o) for o in operands))
    by_dialect = bool(literals) and any(_names_a_dialect(o) for o in operands)
    by_name = bool(literals & DIALECT_NAMES) and not engine_registry
    return by_dialect or by_name


def _offences(module: str) -> list[str]:
    path = modules()[module]
    registry = module == ENGINE_REGISTRY or module.startswith(ENGINE_REGISTRY + ".")
    return [
        f"{relpath(path)}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Compare) and flagged(node, registry)
    ]


def test_no_dialect_name_comparison_outside_the_dialects_package() -> None:
    outside = [
        m for m in modules() if m != DIALECTS_PACKAGE and not m.startswith(DIALECTS_PACKAGE + ".")
    ]
    offences = [o for m in outside for o in _offences(m)]
    if offences:
        pytest.fail(
            f"{len(offences)} dialect-name comparisons outside {PACKAGE.name}/sql/dialects/ "
            "(state the behaviour as a fact on the Dialect class and ask it):\n"
            + "\n".join(offences),
            pytrace=False,
        )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if dialect == "mysql": pass', True),
        ('ok = d.name in ("mysql", "mariadb")', True),
        ('ok = profile.dialect != "duckdb"', True),
        ('ok = self.dialect.key not in {"x"}', True),
        ('ok = kind == "postgres"', True),
        ('ok = name == "mix_shift"', False),
        ("ok = dialect.nulls_last", False),
    ],
)
def test_the_check_sees_the_spellings_it_names(source: str, expected: bool) -> None:
    """The detector itself, on snippets: it must not pass by seeing nothing."""
    compares = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Compare)]
    assert any(flagged(n) for n in compares) is expected
