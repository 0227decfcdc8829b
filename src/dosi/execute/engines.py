"""Connection type -> runner: opens a Runner for a profile (from its `uri`, or around the client
object it carries). Drivers are imported only when a profile of their type is used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dosi.errors import ExecuteError
from dosi.execute.chdb_runner import ChdbRunner, ClickHouseRunner
from dosi.execute.connections import ENGINE_DIALECTS, Profile, client_type
from dosi.execute.datafusion_runner import DataFusionRunner
from dosi.execute.duckdb_runner import DuckDBRunner, open_duckdb
from dosi.execute.mysql_runner import MySQLRunner
from dosi.execute.options import ExecOptions
from dosi.execute.postgres_runner import PostgresRunner
from dosi.execute.recovery import Reconnecting
from dosi.execute.runner import Runner
from dosi.execute.spark_runner import SparkRunner
from dosi.execute.sqlite_runner import SQLiteRunner
from dosi.udf import register_duckdb

#: connection type -> the runner connecting to a profile's uri
_FROM_URI: dict[str, Any] = {
    "sqlite": SQLiteRunner,
    "postgres": PostgresRunner,
    "mysql": MySQLRunner,
    "mariadb": MySQLRunner,
    "chdb": ChdbRunner,
    "clickhouse": ClickHouseRunner,
    "datafusion": DataFusionRunner,
    "spark": SparkRunner,
}


def open_runner(profile: Profile, exec_options: ExecOptions | None = None) -> Runner:
    """A runner for `profile`; a client object is wrapped (and never closed by dosi). A DuckDB
    database dosi opens itself gets the lockdown and memory limit of `exec_options`."""
    if not profile.executable:
        raise ExecuteError(
            "config",
            f"connection `{profile.name}` has type `{profile.type}`, which dosi cannot run on",
            hint="compile() renders SQL for that warehouse; run it with your own client. "
            "Runnable types: " + ", ".join(ENGINE_DIALECTS),
        )
    runner: Runner
    if profile.client is not None:
        runner = _wrap(profile.type, profile.client)
    else:
        options = dict(profile.options)
        password = profile.password()
        if password is not None:
            options["password"] = password
        try:
            if profile.embedded_database:  # dosi's own: locked down, memory-limited
                runner = DuckDBRunner(open_duckdb(profile.uri, options=exec_options), owned=True)
            else:
                runner = _FROM_URI[profile.type].connect(profile.uri, options)
        except ExecuteError:
            raise
        except Exception as exc:
            raise ExecuteError(
                "connection_failed",
                f"cannot connect `{profile.name}` ({profile.type}): "
                f"{(str(exc).splitlines() or [type(exc).__name__])[0]}",
                hint="check the profile's uri, the server and the credentials",
            ) from None
    runner.dialect = profile.dialect
    return runner


def open_recovering(profile: Profile, exec_options: ExecOptions | None = None) -> Reconnecting:
    """`open_runner` behind `Reconnecting`: opened on first use, reopened when it breaks
    (a client object handed in is never reopened: dosi cannot recreate it)."""
    return Reconnecting(
        lambda: open_runner(profile, exec_options),
        profile.name,
        profile.type,
        profile.dialect,
        reopenable=profile.client is None,
    )


def _wrap_duckdb(client: Any) -> Runner:
    register_duckdb(client)  # the streaming-window functions (window-udf.md)
    return DuckDBRunner(client, owned=False)


def _wrap_clickhouse(client: Any) -> Runner:
    if client_type(client) == "chdb":  # a chDB session handed in as a ClickHouse client
        return ChdbRunner(_chdb_session(client), owned=False)
    return ClickHouseRunner(client, owned=False)


#: connection type -> the runner around a client object the application handed in
_WRAP: dict[str, Callable[[Any], Runner]] = {
    "duckdb": _wrap_duckdb,
    "sqlite": lambda client: SQLiteRunner(client, owned=False),
    "postgres": lambda client: PostgresRunner(client, owned=False),
    "mysql": lambda client: MySQLRunner(client, owned=False),
    "mariadb": lambda client: MySQLRunner(client, owned=False),
    "chdb": lambda client: ChdbRunner(_chdb_session(client), owned=False),
    "clickhouse": _wrap_clickhouse,
    "datafusion": lambda client: DataFusionRunner(client),
    "spark": lambda client: SparkRunner(client, owned=False),
}


def _wrap(kind: str, client: Any) -> Runner:
    return _WRAP[kind](client)


def _chdb_session(client: Any) -> Any:
    """A chDB session, or the module-level `chdb` API (`chdb.query`), both answer `query`."""
    if not hasattr(client, "query"):
        raise ExecuteError(
            "config",
            f"a chDB client must be a chdb.session.Session (got {type(client).__name__})",
            hint="pass {'type': 'chdb', 'client': chdb.session.Session(path)}",
        )
    return client
