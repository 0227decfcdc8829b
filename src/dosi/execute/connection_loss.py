"""Telling a broken connection from a statement the database refused (issue 29, item 2).

A warehouse restarted, a network cut, a connection closed under dosi: each driver says so in
its own way (psycopg's `broken` flag and "the connection is closed", PyMySQL's 2006 / 2013,
a refused HTTP request of clickhouse-connect, Spark Connect's gRPC UNAVAILABLE). Runners ask
`is_lost` in their failure path and raise `connection_lost`; `dosi.execute.recovery` then
reconnects and retries the read once, or reports `warehouse_unavailable`."""

from __future__ import annotations

from typing import Any

from dosi.errors import ExecuteError

#: lower-case fragments of driver messages that mean the connection, not the statement, failed
LOST_MARKERS = (
    "the connection is closed",
    "connection already closed",
    "server closed the connection",
    "terminating connection",
    "consuming input failed",
    "could not receive data",
    "could not send data",
    "connection reset",
    "connection refused",
    "broken pipe",
    "lost connection",
    "gone away",
    "connection aborted",
    "failed to connect",
    "statuscode.unavailable",
    "status = unavailable",
    "max retries exceeded",
    "network is unreachable",
    "ssl syscall error",
    "eof detected",
)
#: the same for a connection that cannot be opened because the server does not answer
UNREACHABLE_MARKERS = (
    "connection refused",
    "could not connect",
    "can't connect",
    "failed to connect",
    "timeout expired",
    "timed out",
    "network is unreachable",
    "no route to host",
    "unavailable",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is not yet accepting connections",
    "the database system is in recovery mode",
    "server closed the connection",
    "connection reset",
    "max retries exceeded",
)
#: PyMySQL / mysqlclient error numbers of a lost or refused connection
MYSQL_LOST_CODES = frozenset({2003, 2006, 2013, 2055})


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def connection_broken(connection: Any) -> bool:
    """The driver's own word that `connection` is unusable (psycopg `broken` / `closed`,
    PyMySQL `open`)."""
    if connection is None:
        return False
    if getattr(connection, "broken", False) is True:
        return True
    closed = getattr(connection, "closed", False)
    if isinstance(closed, bool) and closed:
        return True
    if isinstance(closed, int) and not isinstance(closed, bool) and closed > 0:  # psycopg2
        return True
    is_open = getattr(connection, "open", None)
    return is_open is False


def is_lost(exc: BaseException, connection: Any = None) -> bool:
    """Whether `exc` (raised running a statement on `connection`) means the connection broke."""
    names = _class_names(exc)
    if "QueryCanceled" in names:  # a cancel or timeout of ours, on a healthy connection
        return False
    if connection_broken(connection):
        return True
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int) and args[0] in MYSQL_LOST_CODES:
        return True
    if "InterfaceError" in names and "closed" in str(exc).lower():
        return True
    text = str(exc).lower()
    return any(m in text for m in LOST_MARKERS)


def is_unreachable(message: str) -> bool:
    """Whether an open failure's message says the server did not answer (not bad settings)."""
    text = message.lower()
    return any(m in text for m in UNREACHABLE_MARKERS)


def connection_lost(engine: str, exc: BaseException) -> ExecuteError:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return ExecuteError(
        "connection_lost",
        f"the connection to {engine} broke while the query ran: {first}",
        hint="the warehouse restarted or the network dropped; dosi reconnects on the next "
        "query, so run it again",
        detail={"engine": engine, "engine_error": type(exc).__name__},
    )


def warehouse_unavailable(name: str, kind: str, attempts: int, first: str) -> ExecuteError:
    return ExecuteError(
        "warehouse_unavailable",
        f"the warehouse of connection `{name}` ({kind}) does not answer after {attempts} "
        f"attempts: {first[:300]}",
        hint="check that the server runs and is reachable; dosi keeps trying on each query",
        detail={"connection": name, "type": kind, "attempts": attempts},
    )
