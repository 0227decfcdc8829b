"""The structured error for a database that refuses a value of the statement.

A cast that fails, a number out of range, a function argument the engine does not take
(`substring(x, 1, 9223372036854775807)`): the query's own literals or arguments are at fault,
not the server, so the error is `value_rejected` (422 over HTTP), not `sql_rejected` (issue 29,
item 3). Each runner decides which of its engine's exceptions are such refusals."""

from __future__ import annotations

from dosi.errors import ExecuteError


def value_rejected(engine: str, first_line: str, sql: str, error_class: str) -> ExecuteError:
    return ExecuteError(
        "value_rejected",
        f"{engine} refused a value of the query: {first_line}",
        hint="check the literals and function arguments in where_sql and the expressions "
        "(a cast, a length, a date, a number out of range)",
        detail={"sql": sql, "duckdb_error" if engine == "DuckDB" else "engine_error": error_class},
    )


def is_data_error(exc: BaseException) -> bool:
    """A DB-API `DataError` (SQLSTATE class 22 on PostgreSQL): a value the database refused."""
    return any(cls.__name__ == "DataError" for cls in type(exc).__mro__)
