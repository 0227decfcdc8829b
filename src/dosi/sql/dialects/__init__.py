"""SQL dialects: one class or instance per warehouse (facts and small overrides), looked up by
the names connections and `compile(dialect=...)` use. A name may carry the server's version as
a fact, `<dialect>@<major>.<minor>[.<patch>...]` (e.g. `clickhouse@25.11`), for the dialects
whose facts depend on it (`Dialect.at_version`).

Layer: dialect rendering, the only place that knows a warehouse by name: nothing outside this
package compares dialect names; it asks a dialect for a fact or a builder instead. It may
import `dosi.errors`, `dosi.ext.time_format` (D-FORMAT layouts) and sqlglot; nothing of the
plan or the SQL tree builders. The planner reads its facts through
`dosi.plan.dialect_facts.PlanDialect`."""

from __future__ import annotations

from dosi.errors import QueryError, closest
from dosi.sql.dialects.base import Dialect
from dosi.sql.dialects.bigquery import BIGQUERY
from dosi.sql.dialects.clickhouse import CLICKHOUSE
from dosi.sql.dialects.datafusion import DATAFUSION
from dosi.sql.dialects.duckdb import DUCKDB
from dosi.sql.dialects.mysql import DORIS, MARIADB, MYSQL, STARROCKS, TIDB
from dosi.sql.dialects.oracle import ORACLE
from dosi.sql.dialects.postgres import POSTGRES
from dosi.sql.dialects.redshift import REDSHIFT
from dosi.sql.dialects.snowflake import SNOWFLAKE
from dosi.sql.dialects.spark import DATABRICKS, HIVE, SPARK
from dosi.sql.dialects.sqlite import SQLITE
from dosi.sql.dialects.trino import ATHENA, PRESTO, TRINO
from dosi.sql.dialects.tsql import TSQL

DIALECTS: dict[str, Dialect] = {
    "duckdb": DUCKDB,
    "postgres": POSTGRES,
    "datafusion": DATAFUSION,
    "snowflake": SNOWFLAKE,
    "bigquery": BIGQUERY,
    "databricks": DATABRICKS,
    "spark": SPARK,
    "hive": HIVE,
    "trino": TRINO,
    "presto": PRESTO,
    "athena": ATHENA,
    "oracle": ORACLE,
    "redshift": REDSHIFT,
    "clickhouse": CLICKHOUSE,
    "mysql": MYSQL,
    "mariadb": MARIADB,
    "tidb": TIDB,
    "doris": DORIS,
    "starrocks": STARROCKS,
    "sqlite": SQLITE,
    "tsql": TSQL,
}
ALIASES = {
    "postgresql": "postgres",
    "pg": "postgres",
    "chdb": "clickhouse",
    "sqlserver": "tsql",
    "mssql": "tsql",
}


def get_dialect(name: str | Dialect | None) -> Dialect:
    if isinstance(name, Dialect):
        return name
    key, _, version = (name or "duckdb").lower().partition("@")
    key = ALIASES.get(key, key)
    d = DIALECTS.get(key)
    if d is None:
        raise QueryError(
            "unknown_dialect",
            f"unknown SQL dialect `{name}`",
            candidates=closest(key, DIALECTS) or sorted(DIALECTS),
            hint="dialects: " + ", ".join(sorted(DIALECTS)),
        )
    if version:
        return d.at_version(parse_version(name or "", version))
    return d


def parse_version(name: str, text: str) -> tuple[int, ...]:
    """`25.11` / `24.8.14.10` -> (25, 11) / (24, 8, 14, 10); anything else is
    `unknown_dialect` (the name as written is not a dialect dosi knows)."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        raise QueryError(
            "unknown_dialect",
            f"dialect `{name}` carries the version `{text}`, which is not <major>.<minor>[...]",
            hint="write the server version as numbers, e.g. clickhouse@25.11",
        )
    return tuple(int(p) for p in parts)


def execution_dialect(requested: str | Dialect | None, connection: str) -> str | Dialect:
    """The dialect an execution renders: the connection's (`connection`, with its version
    facts), unless the caller named another dialect (a mismatch is reported elsewhere) or a
    version of their own."""
    if requested is None:
        return connection
    if not isinstance(requested, str) or "@" in requested:
        return requested
    if get_dialect(requested).key == get_dialect(connection).key:
        return connection
    return requested


def streaming_dialects() -> tuple[str, ...]:
    """The dialects streaming windows render for (portable epoch arithmetic)."""
    return tuple(name for name, d in DIALECTS.items() if d.streaming)


__all__ = [
    "ALIASES",
    "DIALECTS",
    "Dialect",
    "execution_dialect",
    "get_dialect",
    "parse_version",
    "streaming_dialects",
]
